import Foundation
import Testing
import RoostCore
@testable import RoostAgent

/// Text from others in the log: one record per line whatever it holds, and nothing that reorders or hides.
@Suite("Log text")
struct LogTextTests {
    /// What a hostile server put in a stream error's <text/>: a line break, a whole fake record, an override.
    static let hostile = "bye\n2026-01-01T00:00:00.000Z ERROR FORGED LOG LINE \u{202E}dlrow\r\u{1B}[31m\u{0}"

    @Test func quotingKeepsForeignTextOnOneLine() {
        let quoted = LogText.quote(Self.hostile)
        #expect(quoted == "bye\\n2026-01-01T00:00:00.000Z ERROR FORGED LOG LINE \\u{202e}dlrow\\r\\u{1b}[31m\\u{0}")
        #expect(LogText.quote(String(repeating: "x", count: 1000)).count == 301)
        // Scripts and emoji (with their joiners) pass untouched.
        #expect(LogText.quote("你好 👩‍👩‍👧 مرحبا") == "你好 👩‍👩‍👧 مرحبا")
    }

    @Test func theLoggerWritesOneLinePerRecordWhateverTheMessage() {
        let lines = LockedLines()
        let logger = Logger(level: .debug, sink: { lines.append($0) })
        logger.error("server said: \(Self.hostile)")
        #expect(lines.all.count == 1)
        let line = lines.all[0]
        #expect(!line.contains("\n") && !line.contains("\r") && !line.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x1B })
        #expect(line.hasSuffix("ERROR server said: bye\\n2026-01-01T00:00:00.000Z ERROR FORGED LOG LINE \\u{202e}dlrow\\r\\u{1b}[31m\\u{0}"))
    }

    final class LockedLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }
}
