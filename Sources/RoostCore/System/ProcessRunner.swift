package import Foundation
internal import CSystem
import Synchronization

/// Runs a program with a deadline: Roost's one way of starting other programs (notification commands,
/// `token_command`, `password_command`).
///
/// posix_spawn, not Foundation's `Process`: the child gets a process group of its own (when Roost is not
/// on a terminal), so a deadline kills the whole group — a `password_command` that hangs in `sleep 1000`
/// leaves nothing behind. Its output is read with a cap, so a command printing forever (`yes`) cannot
/// grow memory. The waiting happens on a thread of its own, never on the cooperative pool.
package enum ProcessRunner {
    package struct Outcome: Sendable {
        /// The exit status, or -1 when killed.
        package var status: Int32 = -1
        package var signal: Int32?
        package var output = Data()
        package var timedOut = false
        /// The output passed the cap (or the first line was complete), so Roost stopped reading: a program
        /// still writing then ended with SIGPIPE, which is no failure of its own.
        package var truncated = false
        package var launchFailure: String?
        /// The errno of a launch that failed in a system call (pipe, posix_spawn): with `ResourceShortage`, whether
        /// trying again later can work.
        package var launchErrno: Int32?
    }

    package enum Input: Sendable {
        /// Written to the program's stdin, which is then closed.
        case data(Data)
        /// The program shares Roost's stdin (a command that asks for a passphrase on the terminal).
        case inherit
    }

    package enum Output: Sendable, Equatable {
        case discard
        /// Up to this many bytes kept.
        case capture(limit: Int)
        /// Only the first line matters: once a line end arrives (or `limit` bytes), reading stops.
        case firstLine(limit: Int)
    }

    /// Programs running now, by pid, and whether each leads a process group of its own.
    private static let running = Mutex<[pid_t: Bool]>([:])

    /// Kills every program still running, with its process group (at shutdown: a hung `password_command`
    /// must not outlive the agent).
    package static func killAll() {
        for (pid, ownGroup) in running.withLock({ $0 }) {
            if ownGroup { kill(-pid, SIGKILL) }
            kill(pid, SIGKILL)
        }
    }

    private static let ignoreSIGPIPE: Void = {
        // A program that exits without reading its stdin must not kill Roost with SIGPIPE (the child gets the
        // default disposition back through POSIX_SPAWN_SETSIGDEF).
        signal(SIGPIPE, SIG_IGN)
    }()

    package static func run(argv: [String], extraEnvironment: [String: String] = [:], input: Input = .data(Data()),
                            output: Output, timeout: Duration) async -> Outcome {
        _ = ignoreSIGPIPE
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            startThread(named: "roost.process") {
                continuation.resume(returning: runBlocking(argv: argv, extraEnvironment: extraEnvironment, input: input,
                                                           output: output, timeout: timeout))
            }
        }
    }

    /// Runs a shell command whose first output line is a secret (`password_command`, `token_command`): the
    /// line, or why there is none — in words that never include the output.
    package static func firstLine(ofCommand command: String, input: Input = .data(Data()),
                                  timeout: Duration = .seconds(30)) async -> Result<String, FirstLineFailure> {
        let limit = 64 * 1024
        let outcome = await run(argv: ["/bin/sh", "-c", command], input: input, output: .firstLine(limit: limit), timeout: timeout)
        if let failure = outcome.launchFailure {
            return .failure(FirstLineFailure("could not be started: \(failure)",
                                             shortage: outcome.launchErrno.map(ResourceShortage.isShortage(errno:)) ?? false))
        }
        if outcome.timedOut {
            return .failure(FirstLineFailure("did not finish within \(Int(timeout / .seconds(1))) s and was stopped"))
        }
        // Reading stops after the first line; a command still writing then dies of SIGPIPE (which
        // `/bin/sh -c` reports as status 128 + 13): that is no failure of its own.
        let stoppedByUs = outcome.truncated && (outcome.signal == SIGPIPE || outcome.status == 128 + SIGPIPE)
        if let signal = outcome.signal, !stoppedByUs { return .failure(FirstLineFailure("was killed by signal \(signal)")) }
        if outcome.status != 0 && !stoppedByUs { return .failure(FirstLineFailure("exited with status \(outcome.status)")) }
        if outcome.truncated && !outcome.output.contains(UInt8(ascii: "\n")) {
            return .failure(FirstLineFailure("printed a first line longer than \(limit / 1024) KiB"))
        }
        guard let line = firstLine(of: outcome.output) else { return .failure(FirstLineFailure("printed something that is not UTF-8 text")) }
        if line.isEmpty { return .failure(FirstLineFailure("printed an empty first line")) }
        return .success(line)
    }

    package struct FirstLineFailure: Error, Sendable {
        package let reason: String
        /// The command could not even be started for want of descriptors, memory or processes: worth trying again.
        package let shortage: Bool
        init(_ reason: String, shortage: Bool = false) {
            self.reason = reason
            self.shortage = shortage
        }
    }

    /// The first line of `output` without its line end, if it is UTF-8.
    package static func firstLine(of output: Data) -> String? {
        var line = output.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        return String(data: line, encoding: .utf8)
    }

    /// `run` on the calling thread (a worker thread of its own), with the program's standard error in `output` too
    /// when `errorsInOutput` (tar's complaints belong in the answer, not in Roost's log).
    package static func runSynchronously(argv: [String], output: Output, timeout: Duration, errorsInOutput: Bool = false) -> Outcome {
        _ = ignoreSIGPIPE
        return runBlocking(argv: argv, extraEnvironment: [:], input: .data(Data()), output: output, timeout: timeout,
                           errorsInOutput: errorsInOutput)
    }

    private static func runBlocking(argv: [String], extraEnvironment: [String: String], input: Input, output: Output,
                                    timeout: Duration, errorsInOutput: Bool = false) -> Outcome {
        guard let program = argv.first, let path = resolve(program) else {
            return Outcome(launchFailure: "program not found: \(argv.first ?? "(empty)")")
        }
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        if case .data = input, !makePipe(&stdinPipe) { return launchFailed("pipe", errno) }
        if output != .discard, !makePipe(&stdoutPipe) {
            let code = errno
            closeAll(stdinPipe)
            return launchFailed("pipe", code)
        }
        // A group of its own, so a deadline can kill everything the program started — except on a terminal,
        // where only the foreground group may read the keyboard (a passphrase prompt).
        let ownGroup = isatty(0) == 0
        let (pid, rc) = spawn(path: path, argv: argv, extraEnvironment: extraEnvironment, stdin: stdinPipe[0],
                              stdout: output == .discard ? nil : stdoutPipe[1], ownGroup: ownGroup,
                              errorsInOutput: errorsInOutput && output != .discard)
        if stdinPipe[0] >= 0 { close(stdinPipe[0]) }
        if stdoutPipe[1] >= 0 { close(stdoutPipe[1]) }
        guard rc == 0 else {
            if stdinPipe[1] >= 0 { close(stdinPipe[1]) }
            if stdoutPipe[0] >= 0 { close(stdoutPipe[0]) }
            return launchFailed("could not start \(path)", rc)
        }
        running.withLock { $0[pid] = ownGroup }
        defer { _ = running.withLock { $0.removeValue(forKey: pid) } }
        return supervise(pid: pid, ownGroup: ownGroup, stdin: stdinPipe[1], stdout: stdoutPipe[0], input: input, output: output,
                         deadline: .now + timeout)
    }

    private static func launchFailed(_ what: String, _ code: Int32) -> Outcome {
        var outcome = Outcome(launchFailure: "\(what): \(String(cString: strerror(code)))")
        outcome.launchErrno = code
        return outcome
    }

    /// Feeds stdin, reads stdout, and waits for the exit — all with one poll(2) and one deadline.
    private static func supervise(pid: pid_t, ownGroup: Bool, stdin: Int32, stdout: Int32, input: Input, output: Output,
                                  deadline: ContinuousClock.Instant) -> Outcome {
        var outcome = Outcome()
        let exitFD = roost_pidfd_open(pid)
        var stdinFD = stdin
        var stdoutFD = stdout
        let pendingInput: [UInt8] = if case .data(let data) = input { [UInt8](data) } else { [] }
        var written = 0
        if stdinFD >= 0 { _ = fcntl(stdinFD, F_SETFL, fcntl(stdinFD, F_GETFL) | O_NONBLOCK) }
        if stdinFD >= 0, pendingInput.isEmpty {
            close(stdinFD)
            stdinFD = -1
        }
        var exited = exitFD < 0   // without a pidfd, the exit is awaited after the pipes close
        var buffer = [UInt8](repeating: 0, count: 16384)
        while stdoutFD >= 0 || stdinFD >= 0 || !exited {
            var fds: [pollfd] = []
            if stdoutFD >= 0 { fds.append(pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)) }
            if stdinFD >= 0 { fds.append(pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)) }
            if !exited { fds.append(pollfd(fd: exitFD, events: Int16(POLLIN), revents: 0)) }
            let remaining = deadline - .now
            if remaining <= .zero {
                outcome.timedOut = true
                break
            }
            let milliseconds = Int32(clamping: Int64((remaining / .milliseconds(1)).rounded(.up)))
            let ready = poll(&fds, nfds_t(fds.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for entry in fds where entry.revents != 0 {
                if entry.fd == stdoutFD {
                    let n = read(stdoutFD, &buffer, buffer.count)
                    if n > 0 {
                        outcome.output.append(contentsOf: buffer[0..<n])
                        switch output {
                        case .capture(let limit) where outcome.output.count >= limit,
                             .firstLine(let limit) where outcome.output.count >= limit || buffer[0..<n].contains(UInt8(ascii: "\n")):
                            // Enough: stop reading. A program still writing gets SIGPIPE (as `yes | head -1`);
                            // one that printed everything exits by itself; a hung one meets the deadline.
                            outcome.truncated = true
                            close(stdoutFD)
                            stdoutFD = -1
                        default:
                            break
                        }
                    } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                        close(stdoutFD)
                        stdoutFD = -1
                    }
                } else if entry.fd == stdinFD {
                    let n = pendingInput.withUnsafeBytes { write(stdinFD, $0.baseAddress! + written, pendingInput.count - written) }
                    if n > 0 { written += n }
                    if n < 0 && errno != EINTR && errno != EAGAIN || written >= pendingInput.count {
                        // Done, or the program does not read its input (EPIPE): either way, no more.
                        close(stdinFD)
                        stdinFD = -1
                    }
                } else if entry.fd == exitFD {
                    exited = true
                }
            }
        }
        if stdinFD >= 0 { close(stdinFD) }
        if stdoutFD >= 0 { close(stdoutFD) }
        if outcome.timedOut {
            if ownGroup { kill(-pid, SIGKILL) }
            kill(pid, SIGKILL)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if exitFD >= 0 { close(exitFD) }
        if roost_wifexited(status) != 0 {
            outcome.status = roost_wexitstatus(status)
        } else if roost_wifsignaled(status) != 0 {
            outcome.signal = roost_wtermsig(status)
            outcome.status = -1
        }
        if case .capture(let limit) = output, outcome.output.count > limit { outcome.output = outcome.output.prefix(limit) }
        if case .firstLine(let limit) = output, outcome.output.count > limit { outcome.output = outcome.output.prefix(limit) }
        return outcome
    }

    /// A program that reads what Roost writes while it runs, in the foreground (a pager): its stdin is the
    /// returned pipe, its stdout and stderr are Roost's. No deadline: the user ends it. Nil when it cannot start.
    package static func startFeeding(argv: [String], extraEnvironment: [String: String] = [:]) -> (pid: Int32, input: Int32)? {
        _ = ignoreSIGPIPE
        guard let program = argv.first, let path = resolve(program) else { return nil }
        var stdinPipe: [Int32] = [-1, -1]
        guard makePipe(&stdinPipe) else { return nil }
        let (pid, rc) = spawn(path: path, argv: argv, extraEnvironment: extraEnvironment, stdin: stdinPipe[0], stdout: -1,
                              ownGroup: false)
        close(stdinPipe[0])
        guard rc == 0 else {
            close(stdinPipe[1])
            return nil
        }
        return (pid, stdinPipe[1])
    }

    /// posix_spawn with stdin from `stdin` (when ≥ 0), stdout to `stdout` (when ≥ 0; /dev/null when nil; Roost's own
    /// when -1), default signal handling and an empty mask in the child (Roost ignores SIGPIPE; the child must
    /// not), and a process group of its own when `ownGroup`. Returns the pid and posix_spawn's result.
    private static func spawn(path: String, argv: [String], extraEnvironment: [String: String], stdin: Int32, stdout: Int32?,
                              ownGroup: Bool, errorsInOutput: Bool = false) -> (pid: pid_t, rc: Int32) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if stdin >= 0 { posix_spawn_file_actions_adddup2(&actions, stdin, 0) }
        if let stdout {
            if stdout >= 0 { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
            if stdout >= 0 && errorsInOutput { posix_spawn_file_actions_adddup2(&actions, stdout, 2) }
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if ownGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        let environment = ProcessInfo.processInfo.environment.merging(extraEnvironment) { $1 }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in cArguments { free(p) }
            for p in cEnvironment { free(p) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, cArguments, cEnvironment)
        return (pid, rc)
    }

    /// Waits for a program started by `startFeeding` to end (after its input was closed).
    package static func waitForExit(_ pid: Int32) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// A pipe whose ends are not inherited by other children (posix_spawn dups what this child needs).
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        roost_pipe_cloexec(&fds) == 0
    }

    private static func closeAll(_ fds: [Int32]) {
        for fd in fds where fd >= 0 { close(fd) }
    }

    /// An absolute or relative path is used as given; a bare name is looked up in $PATH.
    static func resolve(_ program: String) -> String? {
        if program.contains("/") {
            return FileManager.default.isExecutableFile(atPath: program) ? program : nil
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
