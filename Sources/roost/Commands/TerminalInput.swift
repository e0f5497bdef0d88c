import Foundation

/// Reading secrets and confirmations from the controlling terminal, never from a pipe by accident.
enum TerminalInput {
    struct Unavailable: CommandFailure {
        let what: String
        var exitCode: ExitCode { .usage }
        var description: String { "no terminal to ask for \(what); \(what == "a confirmation" ? "pass --yes" : "use --password-command")" }
    }

    /// Prompts on /dev/tty with echo off (termios) and reads one line.
    static func secret(_ prompt: String) throws -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw Unavailable(what: "a password") }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { throw Unavailable(what: "a password") }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ECHONL)
        // Echo off before the prompt shows: an answer typed the moment it appears is neither echoed nor flushed.
        tcsetattr(fd, TCSAFLUSH, &silent)
        defer { tcsetattr(fd, TCSAFLUSH, &saved) }
        write(fd, prompt)
        return readLine(fd)
    }

    /// Prompts on /dev/tty and reads one line with echo.
    static func line(_ prompt: String) throws -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw Unavailable(what: "a confirmation") }
        defer { close(fd) }
        write(fd, prompt)
        return readLine(fd)
    }

    private static func write(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    private static func readLine(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
