#if canImport(Glibc)
import Glibc
#endif

/// The terminal side of a command: stdout for results, stderr for diagnostics, and whether each is a TTY
/// (colour and highlighting only then). Every human-readable line is rendered as `TerminalText`, so control
/// characters from the archive or the network are shown, never obeyed; `jsonLine` writes exact JSON.
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

    /// One line of results on stdout (control characters shown as escapes).
    func line(_ text: String) {
        line(TerminalText(text))
    }

    /// One line of results on stdout, with Roost's own styles.
    func line(_ text: TerminalText) {
        standardOutput.write(text.rendered + "\n")
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
        let visible = TerminalText(text).rendered
        standardError.write(visible.hasSuffix("\n") ? visible : visible + "\n")
    }

    private func diagnostic(_ level: String, _ message: String) {
        // Multi-line messages (config problems) keep the prefix on the first line only.
        standardError.write("roost: \(level): \(TerminalText(message).rendered)\n")
    }
}
