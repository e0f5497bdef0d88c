import Foundation
import Synchronization

/// Leveled logging to stderr, one line per record (control and bidirectional characters escaped), safe from
/// any thread.
///
/// Lines look like `2026-11-30T06:00:00.123Z INFO  alice@example.org: connected`; systemd's journal keeps
/// its own timestamps, but a foreground run is read by people, who want them.
public final class Logger: Sendable {
    public let level: LogLevel
    private let sink: @Sendable (String) -> Void
    /// Progress lines are redrawn in place (only when the log goes to a terminal).
    private let redrawsProgress: Bool
    private let progressShown = Mutex(false)

    public init(level: LogLevel, sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.level = level
        self.sink = sink
        redrawsProgress = false
    }

    /// Logs to stderr; on a terminal, progress lines are redrawn in place.
    public init(level: LogLevel, terminal: Bool) {
        self.level = level
        self.sink = Logger.standardError
        redrawsProgress = terminal
    }

    /// Progress of a long step at info level (catching up on the server archive): on a terminal one line,
    /// redrawn in place and replaced by the next log line; in a log (the journal, a file) only the
    /// `milestone` steps (about every 10 %), so a long catch-up is a handful of lines.
    public func progress(_ message: @autoclosure () -> String, milestone: Bool) {
        guard enabled(.info) else { return }
        if redrawsProgress {
            progressShown.withLock { shown in
                Self.writeRaw("\r\u{1B}[K\(Self.timestamp()) INFO  \(message())")
                shown = true
            }
        } else if milestone {
            log(.info, message())
        }
    }

    private static func writeRaw(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { if errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }

    public static let standardError: @Sendable (String) -> Void = { line in writeRaw(line + "\n") }

    public func enabled(_ level: LogLevel) -> Bool { level <= self.level }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard enabled(level) else { return }
        let tag: String
        switch level {
        case .error: tag = "ERROR"
        case .warning: tag = "WARN "
        case .info: tag = "INFO "
        case .debug: tag = "DEBUG"
        }
        // Call sites quote what others wrote (`LogText.quote`, which also caps its length); this is the backstop
        // that keeps every record on one line whatever a message holds.
        let line = "\(Self.timestamp()) \(tag) \(VisibleText.escaped(message(), keepingLineBreaks: false))"
        if redrawsProgress, progressShown.withLock({ shown in defer { shown = false }; return shown }) {
            Self.writeRaw("\r\u{1B}[K")
        }
        sink(line)
    }

    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }


    static func timestamp() -> String {
        Timestamp.rfc3339(Timestamp.now())
    }
}
