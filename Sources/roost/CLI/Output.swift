#if canImport(Glibc)
import Glibc
#endif

/// The terminal side of a command: stdout for results, stderr for diagnostics, and whether each is a TTY
/// (colour and highlighting only then).
struct Output: Sendable {
    let standardOutput: any TextSink
    let standardError: any TextSink
    let standardOutputIsTTY: Bool
    let standardErrorIsTTY: Bool

    /// The process's own stdout and stderr.
    static var process: Output {
        Output(
            standardOutput: FileDescriptorSink(descriptor: STDOUT_FILENO),
            standardError: FileDescriptorSink(descriptor: STDERR_FILENO),
            standardOutputIsTTY: isatty(STDOUT_FILENO) == 1,
            standardErrorIsTTY: isatty(STDERR_FILENO) == 1
        )
    }

    /// One line of results on stdout.
    func line(_ text: String) {
        standardOutput.write(text + "\n")
    }

    /// One JSON Lines record on stdout.
    func jsonLine(_ object: JSONObject) {
        standardOutput.write(JSONValue.object(object).serialized + "\n")
    }

    /// `roost: error: MESSAGE` on stderr.
    func error(_ message: String) {
        diagnostic("error", message)
    }

    /// `roost: warning: MESSAGE` on stderr.
    func warning(_ message: String) {
        diagnostic("warning", message)
    }

    /// Plain text on stderr (help printed because of a mistake, progress notes).
    func note(_ text: String) {
        standardError.write(text.hasSuffix("\n") ? text : text + "\n")
    }

    private func diagnostic(_ level: String, _ message: String) {
        // Multi-line messages (config problems) keep the prefix on the first line only.
        standardError.write("roost: \(level): \(message)\n")
    }
}
