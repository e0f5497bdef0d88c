import Foundation
import RoostTestSupport

/// Where a real client runs: a home folder of its own, and the user it runs as.
///
/// Gajim and poezio refuse to run as root ("You must not launch gajim as root"), and CI runs the suite as root, so
/// when the suite is root every client runs as an unprivileged user (`nobody`, through util-linux's `setpriv`) in a
/// home folder that user owns; otherwise as the user running the suite. Everything a client needs (its config, the
/// test CA) is copied into that home, never read from the suite's private folders.
final class ClientMachine: @unchecked Sendable {
    /// The unprivileged user clients run as when the suite is root.
    static let unprivilegedID: UInt32 = 65534
    static let setpriv = "/usr/bin/setpriv"

    let home: String
    let timeZone: String
    /// `setpriv … --` when the suite is root, else nothing.
    let prefix: [String]

    init(in directory: TestDirectory, name: String, timeZone: String) throws {
        home = directory.path + "/" + name
        self.timeZone = timeZone
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // The client user must be able to pass through the test's folder to its home.
        chmod(directory.path, 0o755)
        if getuid() == 0 {
            prefix = [Self.setpriv, "--reuid=\(Self.unprivilegedID)", "--regid=\(Self.unprivilegedID)", "--clear-groups", "--"]
        } else {
            prefix = []
        }
    }

    /// The environment every client gets: a clean one, with its home and XDG folders, its time zone and UTF-8.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = [
            "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": home + "/.cache", "XDG_RUNTIME_DIR": home + "/.run", "TZ": timeZone,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color", "PATH": "/usr/bin:/bin", "USER": "roost-client",
        ]
        for (key, value) in extra { env[key] = value }
        return env
    }

    /// `env -i VAR=… PROGRAM ARGS` as the client user: a command line for tmux or `startProgram`.
    func command(_ program: String, _ arguments: [String], environment extra: [String: String] = [:]) -> [String] {
        let env = environment(extra).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return prefix + ["/usr/bin/env", "-i"] + env + [program] + arguments
    }

    /// Writes a file into the home (creating its folders), owned by the client user.
    @discardableResult
    func write(_ relative: String, _ text: String, mode: Int = 0o600) throws -> String {
        try write(relative, Data(text.utf8), mode: mode)
    }

    @discardableResult
    func write(_ relative: String, _ data: Data, mode: Int = 0o600) throws -> String {
        let path = home + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    /// Hands the whole home to the client user (after writing its files, before starting it).
    func handOver() throws {
        for folder in [".config", ".local/share", ".cache", ".run"] {
            try FileManager.default.createDirectory(atPath: home + "/" + folder, withIntermediateDirectories: true)
        }
        chmod(home + "/.run", 0o700)
        guard !prefix.isEmpty else { return }
        let result = try RoostBinary.runProgram("/usr/bin/chown", ["-R", "\(Self.unprivilegedID):\(Self.unprivilegedID)", home])
        guard result.status == 0 else { throw ClientFailure("chown \(home): \(result.stderr)") }
    }

    /// Runs a helper program (gdbus, xdotool) as the client user, to completion.
    func run(_ program: String, _ arguments: [String], environment extra: [String: String] = [:], timeout: TimeInterval = 30) throws
        -> RoostBinary.Result {
        let line = command(program, arguments, environment: extra)
        return try RoostBinary.runProgram(line[0], Array(line.dropFirst()), timeout: timeout)
    }
}

struct ClientFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A private tmux server with one window running one terminal client; keys go in with `send-keys`, the screen comes
/// out with `capture-pane`.
final class Terminal: @unchecked Sendable {
    static let tmux = "/usr/bin/tmux"
    let socket: String
    private let log: String
    /// The tmux server and the shell in its window, to end them (and the client) even when the socket is gone.
    private let serverPID: pid_t
    private let panePID: pid_t
    private let lock = NSLock()
    private var stopped = false

    /// Starts `command` (already wrapped for the client user) in a 200×60 terminal. When the client exits, the window
    /// stays with its exit status so a failure can say what happened.
    init(socket: String, command: [String]) throws {
        self.socket = socket
        log = socket + ".exit"
        let quoted = command.map(Self.shellQuoted).joined(separator: " ")
        let shell = "\(quoted); echo \"client exited with status $?\" > \(Self.shellQuoted(log)); sleep 3600"
        let result = try RoostBinary.runProgram(Self.tmux, ["-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "200",
                                                            "-y", "60", "/bin/sh", "-c", shell])
        guard result.status == 0 else { throw ClientFailure("tmux new-session failed: \(result.stderr)") }
        let pids = try RoostBinary.runProgram(Self.tmux, ["-S", socket, "display-message", "-p", "-t", "main", "#{pid} #{pane_pid}"])
        let numbers = pids.stdout.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard numbers.count == 2 else { throw ClientFailure("tmux did not say its process ids: \(pids.stdout) \(pids.stderr)") }
        serverPID = numbers[0]
        panePID = numbers[1]
    }

    deinit { stop() }

    /// The client (the window's shell's child), its own children, then the window and the server: SIGKILL by process id.
    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var victims: [pid_t] = []
        var queue = [panePID]
        while let pid = queue.popLast() {
            let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { pid_t($0) }
            victims += children
            queue += children
        }
        for pid in victims.reversed() { kill(pid, SIGKILL) }
        _ = try? RoostBinary.runProgram(Self.tmux, ["-S", socket, "kill-server"], timeout: 10)
        kill(panePID, SIGKILL)
        kill(serverPID, SIGKILL)
    }

    private static func shellQuoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    private func tmux(_ arguments: [String]) throws {
        let result = try RoostBinary.runProgram(Self.tmux, ["-S", socket] + arguments, timeout: 20)
        guard result.status == 0 else { throw ClientFailure("tmux \(arguments.prefix(3).joined(separator: " ")) failed: \(result.stderr)") }
    }

    /// Types `text` literally (UTF-8 as is), without pressing Enter.
    func type(_ text: String) throws { try tmux(["send-keys", "-t", "main", "-l", text]) }

    /// Presses keys by tmux name: `Enter`, `C-j`, `F10`, `M-n`, `Tab`, `Escape`.
    func press(_ keys: String...) throws { try tmux(["send-keys", "-t", "main"] + keys) }

    /// Types a line and presses Enter.
    func enter(_ line: String) throws {
        try type(line)
        try press("Enter")
    }

    /// What the terminal shows now (wrapped lines joined).
    func screen() -> String {
        (try? RoostBinary.runProgram(Self.tmux, ["-S", socket, "capture-pane", "-p", "-J", "-t", "main"], timeout: 10).stdout) ?? ""
    }

    /// The client's exit line, once it has exited.
    var exitNote: String? { try? String(contentsOfFile: log, encoding: .utf8) }

    /// Waits until the screen shows `text`.
    func waitForScreen(_ text: String, timeout: Duration = .seconds(60)) async throws {
        try await waitUntil("the terminal to show \(text.debugDescription)", timeout: timeout, detail: { self.describe() }) {
            if let note = self.exitNote { throw ClientFailure("the client exited (\(note.trimmingCharacters(in: .newlines))):\n\(self.screen())") }
            return self.screen().contains(text)
        }
    }

    func describe() -> String { "screen:\n\(screen())" + (exitNote.map { "\n\($0)" } ?? "") }
}
