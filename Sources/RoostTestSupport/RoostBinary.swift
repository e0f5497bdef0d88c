public import Foundation
import Testing
import RoostCore

/// Runs the built `roost` binary as a user would, capturing stdout, stderr and the exit status.
public enum RoostBinary {
    /// Each test's agent gets the control socket of its own: unless the caller chose `XDG_RUNTIME_DIR`, it is
    /// a `run/` folder beside the `--config` file, so `roost run` and `roost send` of one test meet, and
    /// agents of tests running in parallel never see each other.
    static func environment(for arguments: [String], overrides: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        // The suite's own notification bus, not one a parallel suite may have pointed this process at.
        if let bus = env["ROOST_TEST_DBUS_ADDRESS"] { env["DBUS_SESSION_BUS_ADDRESS"] = bus }
        // A crash leaves a core, whose stacks the failure shows (CoreDumps).
        CoreDumps.enable()
        for (k, v) in CoreDumps.environment { env[k] = v }
        for (k, v) in overrides { env[k] = v }
        if overrides["XDG_RUNTIME_DIR"] == nil, let i = arguments.firstIndex(of: "--config"), i + 1 < arguments.count {
            let runtime = (arguments[i + 1] as NSString).deletingLastPathComponent + "/run"
            try? FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            env["XDG_RUNTIME_DIR"] = runtime
        }
        return env
    }

    /// The `roost` built beside the running test bundle (same build directory and configuration), or
    /// `ROOST_TEST_BINARY` when set.
    public static var path: String {
        if let chosen = ProcessInfo.processInfo.environment["ROOST_TEST_BINARY"], !chosen.isEmpty { return chosen }
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: bundle).deletingLastPathComponent().appendingPathComponent("roost").path
    }

    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String

        public var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }

        /// stdout parsed as JSON Lines.
        public var jsonLines: [[String: Any]] {
            lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    /// Runs `roost ARGS` to completion (with a deadline), optionally feeding stdin, in `directory` (default: this one).
    public static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
                           timeout: TimeInterval = 60, directory: String? = nil) throws -> Result {
        try runProgram(path, arguments, environment: Self.environment(for: arguments, overrides: environment), stdin: stdin,
                       timeout: timeout, directory: directory)
    }

    /// The suite's one way to run a program to completion: stdout and stderr read concurrently (a chatty child
    /// never blocks on a full pipe), `stdin` fed then closed, killed at the deadline. `environment` nil: this
    /// process's own.
    public static func runProgram(_ program: String, _ arguments: [String], environment: [String: String]? = nil,
                                  stdin: String? = nil, timeout: TimeInterval = 60, directory: String? = nil) throws -> Result {
        let (status, pid, stdout, stderr) = try Subprocess.runToEnd(program, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                                                                    stdin: stdin, timeout: timeout, directory: directory)
        recordCrash(status: status, of: program, pid: pid, directory: directory ?? FileManager.default.currentDirectoryPath, log: stderr)
        return Result(status: status, stdout: stdout, stderr: stderr)
    }

    /// A waitpid status as a shell reports it: the exit code, or 128 + the signal that ended the process.
    static func exitStatus(waitStatus raw: Int32) -> Int32 {
        (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
    }

    /// A program that ended on a signal only a fault raises (no test sends these) crashed: that fails the running
    /// test whatever it checks, so a crash at shutdown, after the test saw what it wanted, is not lost. The failure
    /// shows the end of its output and every thread's stack from its core dump (`CoreDumps`).
    static func recordCrash(status: Int32, of program: String, pid: pid_t, directory: String, log: String) {
        let crashSignals: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS", SIGABRT: "SIGABRT", SIGILL: "SIGILL",
                                              SIGTRAP: "SIGTRAP", SIGFPE: "SIGFPE", SIGSYS: "SIGSYS", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ"]
        guard status > 128, let name = crashSignals[status - 128] else { return }
        let stacks = CoreDumps.backtrace(pid: pid, program: program, directory: directory)
        Issue.record("\((program as NSString).lastPathComponent) crashed (\(name)); its output ends:\n\(log.suffix(6000))\n\(stacks.suffix(20_000))")
    }

    /// Starts a long-running `roost` (e.g. `run`) whose stderr is collected until it is stopped.
    /// Spawned with posix_spawn and reaped with waitpid: tests kill it with SIGKILL many times, and
    /// Foundation's `Process` has been seen missing such exits. `wrapper`: a command that execs roost in the end
    /// (program and arguments, roost's path and arguments appended), e.g. `hidingFolder`'s.
    public static func start(_ arguments: [String], environment: [String: String] = [:], wrapper: [String] = []) throws -> RunningRoost {
        let env = Self.environment(for: arguments, overrides: environment)
        let logPath = NSTemporaryDirectory() + "roost-run-\(UUID().uuidString.prefix(8)).log"
        let command = wrapper + [path] + arguments
        let pid = try Subprocess.spawn(command[0], Array(command.dropFirst()), environment: env, outputPath: logPath)
        let running = RunningRoost(pid: pid, program: path, logPath: logPath, directory: FileManager.default.currentDirectoryPath)
        if let at = arguments.firstIndex(of: "--config"), at + 1 < arguments.count {
            running.config = (arguments[at + 1], environment)
        }
        return running
    }

    /// A `wrapper` for `start` that runs roost in a mount namespace of its own where `folder` is an empty tmpfs,
    /// as systemd's `PrivateTmp=yes` hides the real /tmp from a service (unshare(1) from util-linux; as root, or in a
    /// user namespace of its own otherwise). The process keeps its pid (unshare and sh exec).
    public static func hidingFolder(_ folder: String) -> [String] {
        ["/usr/bin/unshare"] + (geteuid() == 0 ? ["--mount"] : ["--user", "--map-root-user", "--mount"])
            + ["/bin/sh", "-c", "mount -t tmpfs -o mode=0700 tmpfs \"$0\" && exec \"$@\"", folder]
    }
}

extension RoostBinary {
    /// Any other helper program in the background (a proxy, a peer), managed like `roost run`.
    public static func startProgram(_ program: String, _ arguments: [String], environment: [String: String] = [:]) throws -> RunningRoost {
        let logPath = NSTemporaryDirectory() + "roost-helper-\(UUID().uuidString.prefix(8)).log"
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let pid = try Subprocess.spawn(program, arguments, environment: env, outputPath: logPath)
        return RunningRoost(pid: pid, program: program, logPath: logPath, directory: FileManager.default.currentDirectoryPath)
    }
}

/// A `roost` process running in the background; its stdout and stderr go to a log file.
public final class RunningRoost: @unchecked Sendable {
    public let pid: pid_t
    let program: String
    let logPath: String
    /// Its working folder (where a relative core_pattern puts its core).
    let directory: String
    private let lock = NSLock()
    private var exitStatus: Int32?
    /// The `--config` it was started with and the environment given, for `roost status` (`waitForReady`).
    var config: (path: String, environment: [String: String])?

    init(pid: pid_t, program: String, logPath: String, directory: String) {
        self.pid = pid
        self.program = program
        self.logPath = logPath
        self.directory = directory
    }

    deinit {
        if isRunning {
            kill(pid, SIGKILL)
            _ = reap(block: true)
        }
        try? FileManager.default.removeItem(atPath: logPath)
    }

    public var stderrSoFar: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public var isRunning: Bool { reap(block: false) == nil }

    /// The exit status once the process has ended (128+N for signal N), nil while it runs.
    private func reap(block: Bool) -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        var rc: pid_t
        repeat { rc = waitpid(pid, &status, block ? 0 : WNOHANG) } while rc < 0 && errno == EINTR
        guard rc == pid else { return nil }
        let code = RoostBinary.exitStatus(waitStatus: status)
        exitStatus = code
        RoostBinary.recordCrash(status: code, of: program, pid: pid, directory: directory,
                                log: (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")
        return code
    }

    /// Waits until the log contains `text` (e.g. "online"), or throws after `timeout`.
    public func waitForLog(_ text: String, timeout: TimeInterval = 30) throws {
        try waitUntilBlocking("'\(text)' in roost's log", timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(20),
                              detail: { "log so far:\n\(stderrSoFar)" }) {
            if stderrSoFar.contains(text) { return true }
            // An ended process writes no more: said at once.
            if !isRunning { throw WaitTimedOut(what: "'\(text)' in roost's log: it exited; log so far:\n\(stderrSoFar)") }
            return false
        }
    }

    /// Waits until `roost status --json` of this agent satisfies `condition`, and returns what it printed then: the
    /// suite's way to wait for a state of the agent (online, archives read, a SIGHUP handled, OMEMO published,
    /// serving) rather than for a line of its log. For a `roost run` started with `--config`; blocks the calling
    /// thread (`status` is the same from a task).
    @discardableResult
    public func waitForStatus(_ what: String, timeout: TimeInterval = 60, _ condition: (AgentStatusLines) throws -> Bool) throws -> AgentStatusLines {
        guard let config else { throw WaitTimedOut(what: "\(what): this roost was not started with --config") }
        var seen = AgentStatusLines(lines: [])
        try waitUntilBlocking(what, timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(100),
                              detail: { "status: \(seen.lines)\nlog so far:\n\(self.stderrSoFar.suffix(6000))" }) {
            if !isRunning { throw WaitTimedOut(what: "\(what): roost exited; log so far:\n\(stderrSoFar)") }
            // Before the control socket answers, `roost status` says the agent is not running.
            let result = try? RoostBinary.run(["status", "--json", "--config", config.path], environment: config.environment)
            seen = AgentStatusLines(lines: result?.jsonLines ?? [])
            return try condition(seen)
        }
        return seen
    }

    /// `waitForStatus` from a task: on a thread of its own, as `roost status` blocks while it runs.
    @discardableResult
    public func status(_ what: String, timeout: TimeInterval = 60,
                       _ condition: @escaping @Sendable (AgentStatusLines) throws -> Bool) async throws -> AgentStatusLines {
        try await offPool { try self.waitForStatus(what, timeout: timeout, condition) }
    }

    /// Waits until the agent is in `state`, as `roost status --json` shows it.
    @discardableResult
    public func waitFor(_ state: AgentState, timeout: TimeInterval = 60) throws -> AgentStatusLines {
        try waitForStatus(state.what, timeout: timeout, state.holds)
    }

    /// `waitFor` from a task.
    @discardableResult
    public func wait(for state: AgentState, timeout: TimeInterval = 60) async throws -> AgentStatusLines {
        try await status(state.what, timeout: timeout, state.holds)
    }

    /// Waits until every account (or `account`) is online with its roster loaded (`AgentState.ready`).
    public func waitForReady(_ account: String? = nil, timeout: TimeInterval = 30) throws {
        try waitFor(.ready(account), timeout: timeout)
    }

    /// `waitForReady` from a task.
    public func ready(_ account: String? = nil, timeout: TimeInterval = 60) async throws {
        try await wait(for: .ready(account), timeout: timeout)
    }

    /// Waits until the agent has read `room`'s archive in this run (`roost rooms --json`, `last_archive_read`).
    public func roomArchiveRead(_ room: String, timeout: TimeInterval = 60) async throws {
        guard let config else { throw WaitTimedOut(what: "\(room)'s archive read: this roost was not started with --config") }
        try await offPool {
            var seen: [[String: Any]] = []
            try waitUntilBlocking("\(room)'s archive read", timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(100),
                                  detail: { "rooms: \(seen)\nlog so far:\n\(self.stderrSoFar.suffix(6000))" }) {
                if !self.isRunning { throw WaitTimedOut(what: "\(room)'s archive read: roost exited; log so far:\n\(self.stderrSoFar)") }
                seen = (try? RoostBinary.run(["rooms", "--json", "--config", config.path], environment: config.environment))?.jsonLines ?? []
                return seen.contains { ($0["room"] as? String)?.caseInsensitiveCompare(room) == .orderedSame && $0["last_archive_read"] is String }
            }
        }
    }

    /// Sends SIGHUP and waits until the agent has handled it (`sighups_handled`): the config read again and applied or
    /// refused, waiting accounts told to try again — and what the reload logs, written.
    public func hangUp(timeout: TimeInterval = 60) async throws {
        let before = try await wait(for: .answering, timeout: timeout)
        let handled = before.agent["sighups_handled"] as? Int ?? 0
        kill(pid, SIGHUP)
        try await status("SIGHUP handled", timeout: timeout) { ($0.agent["sighups_handled"] as? Int ?? 0) > handled }
    }

    /// Waits until the process ends or `timeout` passes; true when it ended. Woken by the kernel through a pidfd
    /// (readable once the process has exited), not by polling.
    @discardableResult
    public func waitForExit(timeout: TimeInterval) -> Bool {
        guard isRunning else { return true }
        let fd = processDescriptor(pid)
        guard fd >= 0 else { return !isRunning }
        defer { close(fd) }
        let deadline = Date().addingTimeInterval(timeout)
        var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while isRunning {
            let milliseconds = Int32(min(max(deadline.timeIntervalSinceNow * 1000, 0), Double(Int32.max)))
            guard milliseconds > 0 else { return false }
            if poll(&watched, 1, milliseconds) < 0 && errno != EINTR { return !isRunning }
        }
        return true
    }

    /// Sends `signal` and waits for the exit status (SIGKILL after `timeout`).
    @discardableResult
    /// A process that does not end within `timeout` of a signal other than SIGKILL is hung: every thread's stack
    /// (gdb) is added to the log returned, so a failure says where it hung.
    public func stop(signal: Int32 = SIGTERM, timeout: TimeInterval = 20) -> (status: Int32, stderr: String) {
        if isRunning { kill(pid, signal) }
        waitForExit(timeout: timeout)
        var stacks = ""
        if isRunning {
            if signal != SIGKILL { stacks = Self.threadStacks(of: pid, after: signal, timeout: timeout) }
            kill(pid, SIGKILL)
            _ = reap(block: true)
        }
        return (reap(block: false) ?? -1, stderrSoFar + stacks)
    }

    private static func threadStacks(of pid: pid_t, after signal: Int32, timeout: TimeInterval) -> String {
        let heading = "\n--- roost (pid \(pid)) had not ended \(Int(timeout)) s after signal \(signal); its threads:\n"
        do {
            let gdb = try RoostBinary.runProgram("/usr/bin/gdb", ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt"], timeout: 60)
            return heading + (gdb.stdout.isEmpty ? String(gdb.stderr.suffix(2000)) : gdb.stdout)
        } catch {
            return heading + "(gdb could not be run: \(error))\n"
        }
    }
}

/// A state of a running agent, as `roost status --json` shows it: what tests wait for instead of a line of its log.
public struct AgentState: Sendable {
    public let what: String
    public let holds: @Sendable (AgentStatusLines) -> Bool

    public init(_ what: String, _ holds: @escaping @Sendable (AgentStatusLines) -> Bool) {
        self.what = what
        self.holds = holds
    }

    /// The agent answers on its control socket (whatever its accounts do).
    public static let answering = AgentState("the agent answering on its control socket") { $0.agent["running"] as? Bool == true }

    /// Every account (or `account`) online with its roster loaded (`roster_contacts`): the agent knows who is a contact.
    public static func ready(_ account: String? = nil) -> AgentState {
        every(account, "online with its roster") { $0["state"] as? String == "online" && $0["roster_contacts"] is Int }
    }

    /// Every account (or `account`) has completed a read of its server archive in this run (`last_catch_up`).
    public static func serverArchiveRead(_ account: String? = nil) -> AgentState {
        every(account, "has read its server archive") { $0["last_catch_up"] is String }
    }

    /// Every account (or `account`) has logged in at least `count` times in this run (`logins`).
    public static func logins(_ count: Int, _ account: String? = nil) -> AgentState {
        every(account, "logged in \(count) times") { ($0["logins"] as? Int ?? 0) >= count }
    }

    /// Every account (or `account`) has resumed its previous session (XEP-0198) in this run (`sessions_resumed`).
    public static func sessionResumed(_ account: String? = nil) -> AgentState {
        every(account, "resumed its session") { ($0["sessions_resumed"] as? Int ?? 0) >= 1 }
    }

    /// Every account (or `account`) has published Roost's OMEMO device in this run (`omemo_device`).
    public static func omemoPublished(_ account: String? = nil) -> AgentState {
        every(account, "published its OMEMO device") { $0["omemo_device"] is Int }
    }

    /// The web view of `roost run` (`[serve]`) serves (`web_view`).
    public static let serving = AgentState("the web view serving") { $0.agent["web_view"] is String }

    private static func every(_ account: String?, _ what: String, _ holds: @escaping @Sendable ([String: Any]) -> Bool) -> AgentState {
        AgentState("\(account ?? "every account") \(what)") { status in
            let accounts = status.accounts.filter { account == nil || ($0["account"] as? String)?.caseInsensitiveCompare(account!) == .orderedSame }
            return !accounts.isEmpty && accounts.allSatisfy(holds)
        }
    }
}

/// What `roost status --json` printed: the agent's line (`running` false when none answers) and one line per account.
public struct AgentStatusLines: @unchecked Sendable {
    public let lines: [[String: Any]]
    public var agent: [String: Any] { lines.first { $0["kind"] as? String == "agent" } ?? [:] }
    public var accounts: [[String: Any]] { lines.filter { $0["kind"] as? String == "account" } }

    /// The line of `account` (the first account's when nil).
    public func account(_ account: String? = nil) -> [String: Any] {
        accounts.first { account == nil || ($0["account"] as? String)?.caseInsensitiveCompare(account!) == .orderedSame } ?? [:]
    }
}

extension RoostBinary {
    /// The account lines of `roost status --json` from the agent running with `config`.
    public static func accountStatus(config: String, environment: [String: String] = [:]) throws -> [[String: Any]] {
        try run(["status", "--json", "--config", config], environment: environment).jsonLines.filter { $0["kind"] as? String == "account" }
    }

    /// Waits until the agent running with `config` has read the server archive in a run that began after
    /// `instant` (two completed reads after it: reads do not overlap, so the second began after the first
    /// ended). Then whatever the server had archived by `instant` went through a catch-up, e.g. so that a test
    /// can show the archive's copy of live messages did not duplicate them.
    public static func waitForServerArchiveRead(config: String, after instant: Date, environment: [String: String] = [:],
                                                timeout: Duration = .seconds(90)) async throws {
        let parse = ISO8601DateFormatter()
        parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var first: Date?
        var seen: String?
        try await waitUntil("two server-archive reads after \(instant)", timeout: timeout,
                            detail: { "the last read ended at \(seen ?? "(none yet)")\(first.map { "; the first after it at \($0)" } ?? "")" }) {
            let text = try accountStatus(config: config, environment: environment).first?["last_catch_up"] as? String
            seen = text
            guard let read = text.flatMap(parse.date(from:)), read > instant else { return false }
            guard let first else {
                first = read
                return false
            }
            return read > first
        }
    }
}
