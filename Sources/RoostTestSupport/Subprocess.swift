import Foundation
internal import CSystem

/// posix_spawn + waitpid, for helper scripts that leave daemons behind (Foundation's `Process` may wait on
/// them through inherited descriptors); output goes to a file.
enum Subprocess {
    static func run(_ path: String, _ arguments: [String], environment: [String: String], outputPath: String) throws -> Int32 {
        let pid = try spawn(path, arguments, environment: environment, outputPath: outputPath)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS by hand: the macros are not imported.
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    static func spawn(_ path: String, _ arguments: [String], environment: [String: String], outputPath: String) throws -> pid_t {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
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
