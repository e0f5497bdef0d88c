#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The terminal side of a command: stdout for results, stderr for diagnostics, whether each is a TTY, and
/// the decisions every command shares — colour (`--color`, `NO_COLOR`), how chatty stderr is (`-q`, `-v`),
/// and whether stdout goes through a pager. Every command writes through here, so a rule about output
/// (escaping, colour, quiet) is made once.
/// Every human-readable line is rendered as `TerminalText`, so control characters from the archive or the
/// network are shown, never obeyed; `jsonLine` writes exact JSON.
struct Output: Sendable {
    let standardOutput: any TextSink
    let standardError: any TextSink
    /// Whether the user's stdout is a terminal (also while a pager stands in between).
    let standardOutputIsTTY: Bool
    let standardErrorIsTTY: Bool
    /// ANSI colours and highlights on stdout.
    var color = false
    /// `-q`: only errors on stderr (no notes, progress or warnings).
    var quiet = false
    /// `-v` count: 1 adds what happens (`info`), 2 the details (`debug`).
    var verbosity = 0
    /// While a pager shows stdout, notes for stderr wait until it has ended, so they do not scribble over it.
    var deferredNotes: DeferredNotes?

    /// The process's own stdout and stderr.
    static var process: Output {
        Output(
            standardOutput: FileDescriptorSink(descriptor: STDOUT_FILENO),
            standardError: FileDescriptorSink(descriptor: STDERR_FILENO),
            standardOutputIsTTY: isatty(STDOUT_FILENO) == 1,
            standardErrorIsTTY: isatty(STDERR_FILENO) == 1
        )
    }

    init(standardOutput: any TextSink, standardError: any TextSink, standardOutputIsTTY: Bool, standardErrorIsTTY: Bool) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.standardOutputIsTTY = standardOutputIsTTY
        self.standardErrorIsTTY = standardErrorIsTTY
    }

    /// The same terminal with stdout replaced (by a pager's pipe).
    func writing(to sink: any TextSink) -> Output {
        var copy = Output(standardOutput: sink, standardError: standardError, standardOutputIsTTY: standardOutputIsTTY,
                          standardErrorIsTTY: standardErrorIsTTY)
        copy.color = color
        copy.quiet = quiet
        copy.verbosity = verbosity
        copy.deferredNotes = DeferredNotes()
        return copy
    }

    /// The same terminal with stdout gathered into large writes until `flush()` (see `BufferedSink`).
    func buffered() -> Output {
        let sink = BufferedSink(target: standardOutput)
        var copy = Output(standardOutput: sink, standardError: FlushingSink(first: sink, target: standardError),
                          standardOutputIsTTY: standardOutputIsTTY, standardErrorIsTTY: standardErrorIsTTY)
        copy.color = color
        copy.quiet = quiet
        copy.verbosity = verbosity
        copy.deferredNotes = deferredNotes
        return copy
    }

    /// Writes what a `buffered()` stdout holds.
    func flush() {
        (standardOutput as? BufferedSink)?.flush()
    }

    /// One line of results on stdout (control characters shown as escapes).
    func line(_ text: String) {
        line(TerminalText(text))
    }

    /// One line of results on stdout, with Roost's own styles.
    func line(_ text: TerminalText) {
        standardOutput.write(text.rendered + "\n")
    }

    /// One line of results on stdout that `build` appends as UTF-8 bytes, already made visible (see
    /// `VisibleText.append`) and ending in a line feed: into a `buffered()` stdout's buffer directly.
    func line(bytes build: (inout [UInt8]) -> Void) {
        if let buffered = standardOutput as? BufferedSink { return buffered.append(build) }
        var bytes: [UInt8] = []
        build(&bytes)
        bytes.withUnsafeBytes { standardOutput.write(bytes: $0) }
    }

    /// One JSON Lines record on stdout, encoded already (with its line feed).
    func jsonLine(encoded bytes: [UInt8]) {
        line { $0.append(contentsOf: bytes) }
    }

    /// One JSON Lines record on stdout.
    func jsonLine(_ object: JSONObject) {
        standardOutput.write(JSONValue.object(object).serialized + "\n")
    }

    /// `roost: error: MESSAGE` on stderr, always.
    func error(_ message: String) {
        diagnostic("error", message)
    }

    /// `roost: warning: MESSAGE` on stderr, unless `-q`.
    func warning(_ message: String) {
        guard !quiet else { return }
        diagnostic("warning", message)
    }

    /// Plain text on stderr (help printed because of a mistake, a summary, a hint), unless `-q`.
    func note(_ text: String) {
        guard !quiet else { return }
        let visible = TerminalText(text).rendered
        let text = visible.hasSuffix("\n") ? visible : visible + "\n"
        if let deferredNotes { deferredNotes.add(text) } else { standardError.write(text) }
    }

    /// What is being done (`-v`): which archive is read, how a server is reached.
    func info(_ text: @autoclosure () -> String) {
        if verbosity >= 1 && !quiet { note("roost: " + text()) }
    }

    /// Details (`-vv`): the SQL of a query, timings.
    func debug(_ text: @autoclosure () -> String) {
        if verbosity >= 2 && !quiet { note("roost: " + text()) }
    }

    /// Help printed because of a mistake: shown even with `-q`, like the error it explains.
    func usageHelp(_ text: String) {
        standardError.write(text.hasSuffix("\n") ? text : text + "\n")
    }

    private func diagnostic(_ level: String, _ message: String) {
        // Multi-line messages (config problems) keep the prefix on the first line only.
        let line = "roost: \(level): \(TerminalText(message).rendered)\n"
        if let deferredNotes { deferredNotes.add(line) } else { standardError.write(line) }
    }

    /// Writes the notes held back while a pager ran.
    func flushDeferredNotes() {
        guard let deferredNotes else { return }
        for text in deferredNotes.take() { standardError.write(text) }
    }

    // MARK: Colour

    enum Style {
        /// A message's short id (`roost show ID`).
        case id
        /// A word the query matched.
        case match
        /// Who wrote a message, a conversation's name.
        case name
        /// Times and other secondary columns.
        case dim
        /// An account tag when several are configured.
        case account
    }

    /// `text` (escaped like all foreign text) in the style's SGR codes when colour is on.
    func styled(_ text: String, _ style: Style) -> TerminalText {
        guard color, !text.isEmpty else { return TerminalText(text) }
        return .styled(text, Self.sgr(style))
    }

    static func sgr(_ style: Style) -> String {
        switch style {
        case .id: "33"
        case .match: "1;31"
        case .name: "1"
        case .dim: "2"
        case .account: "36"
        }
    }

    /// `--color=auto|always|never` and `NO_COLOR` (https://no-color.org): colour only on a terminal that can
    /// show it, unless asked for.
    static func wantsColor(_ choice: ColorChoice, stdoutIsTTY: Bool, environment: [String: String]) -> Bool {
        switch choice {
        case .always: return true
        case .never: return false
        case .auto:
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return stdoutIsTTY
        }
    }
}

enum ColorChoice: String, CaseIterable, Sendable {
    case auto, always, never
}

/// Notes collected while a pager owns the terminal.
final class DeferredNotes: Sendable {
    private let texts = Mutex<[String]>([])

    func add(_ text: String) { texts.withLock { $0.append(text) } }

    func take() -> [String] {
        texts.withLock { texts in
            defer { texts.removeAll() }
            return texts
        }
    }
}
