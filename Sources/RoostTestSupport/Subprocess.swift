import Foundation
internal import CSystem

/// posix_spawn + waitpid, for helper scripts that leave daemons behind (Foundation's `Process` may wait on
/// them through inherited descriptors); output goes to a file.
enum Subprocess {
    static func run(_ path: String, _ arguments: [String], environment: [String: String], outputPath: String) throws -> Int32 {
        let pid = try spawn(path, arguments, environment: environment, outputPath: outputPath)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return RoostBinary.exitStatus(waitStatus: status)
    }

    /// `inputPath`: stdin (default /dev/null); `errorPath`: stderr (default: with stdout); `directory`: where it runs.
    /// Runs a program to its end or `timeout` (then SIGKILL): its exit status (128 + signal) and what it wrote to
    /// stdout and stderr. posix_spawn and files rather than Foundation's `Process` and pipes: `Process.run` was seen
    /// crashing the test process (an over-read in swift-corelibs-foundation's descriptor scan before the spawn,
    /// fixed upstream after this toolchain), and the suite runs thousands of `roost status` and sqlite3 looks; files
    /// also never fill up under a chatty child, and a daemon the child leaves behind holding them delays nothing.
    static func runToEnd(_ path: String, _ arguments: [String], environment: [String: String], stdin: String?,
                         timeout: TimeInterval, directory: String?) throws -> (status: Int32, pid: pid_t, stdout: String, stderr: String) {
        let base = NSTemporaryDirectory() + "roost-program-\(UUID().uuidString.prefix(12))"
        defer { for suffix in [".in", ".out", ".err"] { unlink(base + suffix) } }
        if let stdin { guard FileManager.default.createFile(atPath: base + ".in", contents: Data(stdin.utf8)) else {
            throw ScriptFailed(command: path, output: "could not write its input to \(base).in")
        } }
        let pid = try spawn(path, arguments, environment: environment, outputPath: base + ".out",
                            inputPath: stdin == nil ? "/dev/null" : base + ".in", errorPath: base + ".err", directory: directory)
        if !exits(pid, within: timeout) { kill(pid, SIGKILL) }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let read = { (suffix: String) in (try? String(contentsOfFile: base + suffix, encoding: .utf8)) ?? "" }
        return (RoostBinary.exitStatus(waitStatus: raw), pid, read(".out"), read(".err"))
    }

    /// True once the child `pid` has exited (its pidfd readable, not yet reaped); false after `seconds`.
    private static func exits(_ pid: pid_t, within seconds: TimeInterval) -> Bool {
        let fd = processDescriptor(pid)
        guard fd >= 0 else { return (try? waitUntilBlocking("pid \(pid) to end", timeout: .milliseconds(Int(seconds * 1000)), every: .milliseconds(10)) {
            kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true
        }) != nil }
        defer { close(fd) }
        var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let milliseconds = Int32(min(max(deadline.timeIntervalSinceNow * 1000, 0), Double(Int32.max)))
            let ready = poll(&watched, 1, milliseconds)
            if ready > 0 { return true }
            if ready == 0 || errno != EINTR { return false }
        }
    }

    static func spawn(_ path: String, _ arguments: [String], environment: [String: String], outputPath: String,
                      inputPath: String = "/dev/null", errorPath: String? = nil, directory: String? = nil) throws -> pid_t {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let directory { roost_spawn_chdir(&actions, directory) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else of the test process: a service starts with its three descriptors (the suite's other tests hold
        // hundreds, without close-on-exec, which would count against a descriptor limit a test sets on the child).
        roost_spawn_close_from(&actions, 3)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        // The test runner's threads block some signals (and roost ignores SIGPIPE): a child starts with an
        // empty mask and default handlers, so a test can signal it (the TCP proxy's SIGUSR1/SIGUSR2).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGUSR1, SIGUSR2, SIGHUP, SIGINT, SIGTERM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw ScriptFailed(command: path, output: String(cString: strerror(rc))) }
        return pid
    }
}
