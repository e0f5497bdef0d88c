import Foundation
import RoostCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Long output on a terminal goes through `$PAGER` (default `less -FRX`: quits when it fits on one screen,
/// keeps colours, leaves the text on the screen), as git does; `--no-pager` or a `PAGER` of `cat` or ""
/// turn it off.
///
/// A transcript (`roost log`) opens at its end, as a chat client opens a conversation at the newest message, and
/// the older ones are a scroll (or `g`) away: with less, the pager is given `+G`. Less fills the lines above a
/// short text with `~` when told `+G` (and `-F` then quits with them left on the screen), so such a pager starts
/// only once the text does not fit on the terminal; a text that fits is written straight out, as `-F` would.
final class Pager: Sendable {
    private let command: String
    private let extraEnvironment: [String: String]
    private let state: Mutex<State>
    /// Screen rows and columns; nil when the pager starts at once.
    private let screen: (rows: Int, columns: Int)?

    private struct State {
        var started: (pid: pid_t, sink: FileDescriptorSink)?
        var failed = false
        /// Text held back until it no longer fits on the screen (only when starting at the end).
        var held: [UInt8] = []
        var rows = 0
        var column = 0
        /// In an escape sequence (colours): takes no room on the screen.
        var escape = false
    }

    /// The pager, or nil when it is not wanted or cannot start (output then goes straight out). `atEnd`: it opens at
    /// the end of the text (see above).
    static func start(environment: [String: String], atEnd: Bool = false) -> Pager? {
        var command = (environment["PAGER"] ?? "less -FRX").trimmingCharacters(in: .whitespaces)
        guard !command.isEmpty, command != "cat" else { return nil }
        var extra: [String: String] = [:]
        // `PAGER=less` on its own: the same behaviour as the default, unless the user set LESS.
        if environment["LESS"] == nil { extra["LESS"] = "FRX" }
        if environment["LV"] == nil { extra["LV"] = "-c" }
        var screen: (Int, Int)?
        if atEnd {
            if isLess(command) { command += " +G" }
            screen = terminalSize(environment: environment)
        }
        let pager = Pager(command: command, extraEnvironment: extra, screen: screen)
        if screen == nil {
            guard pager.state.withLock({ pager.launch(&$0) }) else { return nil }
        }
        return pager
    }

    private init(command: String, extraEnvironment: [String: String], screen: (rows: Int, columns: Int)?) {
        self.command = command
        self.extraEnvironment = extraEnvironment
        self.screen = screen
        state = Mutex(State())
    }

    /// Whether the pager command runs less (`less …`, `/usr/bin/less …`), which takes `+G`.
    static func isLess(_ command: String) -> Bool {
        let program = command.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        return (program as NSString).lastPathComponent == "less"
    }

    /// The terminal's rows and columns (stdout's), else `LINES`/`COLUMNS`, else 24×80.
    private static func terminalSize(environment: [String: String]) -> (Int, Int) {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
            return (Int(size.ws_row), Int(size.ws_col))
        }
        return (environment["LINES"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 24,
                environment["COLUMNS"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? 80)
    }

    private func launch(_ state: inout State) -> Bool {
        guard let (pid, input) = ProcessRunner.startFeeding(argv: ["/bin/sh", "-c", command], extraEnvironment: extraEnvironment) else {
            state.failed = true
            return false
        }
        state.started = (pid, FileDescriptorSink(descriptor: input))
        return true
    }

    var output: any TextSink { Input(pager: self) }

    private struct Input: TextSink {
        let pager: Pager
        func write(_ text: String) {
            var text = text
            text.withUTF8 { pager.take(UnsafeRawBufferPointer($0)) }
        }

        func write(bytes: UnsafeRawBufferPointer) { pager.take(bytes) }
    }

    private func take(_ bytes: UnsafeRawBufferPointer) {
        let target = state.withLock { state -> FileDescriptorSink? in
            if let started = state.started { return started.sink }
            if state.failed { return FileDescriptorSink(descriptor: STDOUT_FILENO) }
            state.held.append(contentsOf: bytes)
            guard let screen, Self.count(bytes, in: &state, columns: screen.columns) >= screen.rows else { return nil }
            // No longer fits: the pager starts with what was held back (or, if it cannot, the text goes straight out).
            let held = state.held
            state.held = []
            let sink = launch(&state) ? state.started!.sink : FileDescriptorSink(descriptor: STDOUT_FILENO)
            held.withUnsafeBytes { sink.write(bytes: $0) }
            return nil
        }
        target?.write(bytes: bytes)
    }

    /// Adds the screen rows `bytes` take (lines, wrapped at `columns`) to the state's count; returns the count.
    /// Terminal escapes take no room; a character of the wide scripts (CJK, Hangul, emoji: by their
    /// UTF-8 lead byte: from U+1000 up, so a few narrow symbols count two as well) two columns — near enough to decide
    /// whether a text fits on a screen (counting too much only starts the pager a little early).
    private static func count(_ bytes: UnsafeRawBufferPointer, in state: inout State, columns: Int) -> Int {
        for byte in bytes {
            if state.escape {
                if byte >= 0x40 && byte <= 0x7E && byte != UInt8(ascii: "[") { state.escape = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\n"):
                state.rows += 1
                state.column = 0
                continue
            case 0x1B:
                state.escape = true
                continue
            case 0x80...0xBF, 0..<0x20:
                continue
            default:
                break
            }
            let width = byte >= 0xE1 ? 2 : 1
            if state.column + width > columns {
                state.rows += 1
                state.column = 0
            }
            state.column += width
        }
        return state.rows + (state.column > 0 ? 1 : 0)
    }

    /// Ends the input and waits until the user has left the pager; text held back (it fitted) goes straight out.
    func finish() {
        let (started, held) = state.withLock { state in
            defer { state.held = [] }
            return (state.started, state.held)
        }
        if let started {
            close(started.sink.descriptor)
            ProcessRunner.waitForExit(started.pid)
        } else if !held.isEmpty {
            held.withUnsafeBytes { FileDescriptorSink(descriptor: STDOUT_FILENO).write(bytes: $0) }
        }
    }
}
