import Foundation
import Testing
import RoostCore
@testable import RoostAgent

/// Issue 31, "one of each": the program reads the clock in UTC milliseconds through `Timestamp.now()` and has
/// one log level, `LogLevel` in RoostCore. The source checks name each file and line that brings a copy back.
@Suite("One of each")
struct OneOfEachTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources").path

    /// `file:line: text` of every line of a Swift file under Sources/ that matches `pattern`.
    static func lines(matching pattern: String) throws -> [String] {
        let expression = try NSRegularExpression(pattern: pattern)
        let files = try #require(FileManager.default.subpaths(atPath: sources)).filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count > 100, "the sources are at \(sources)")
        var found: [String] = []
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            var reported = Set<Int>()
            for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let start = Range(match.range, in: text)?.lowerBound else { continue }
                let number = text[..<start].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
                guard reported.insert(number).inserted else { continue }
                let lineStart = text[..<start].lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex
                let line = String(text[lineStart...].prefix { $0 != "\n" })
                found.append("Sources/\(file):\(number): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found
    }

    @Test func nowInUTCMillisecondsIsTimestampNow() throws {
        // No hand-rolled copy: the wall clock as a Date turned into milliseconds (or seconds), or a helper of
        // a type's own that does it.
        let copies = try Self.lines(matching: #"Date(\(\)|\.now)\.timeIntervalSince1970|func nowMilliseconds\b"#)
        #expect(copies.isEmpty, "use Timestamp.now():\n\(copies.joined(separator: "\n"))")
        // And it is the wall clock, in milliseconds.
        let before = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        let now = Timestamp.now()
        let after = Int64((Date().timeIntervalSince1970 * 1000).rounded(.up))
        #expect(before <= now && now <= after)
    }

    @Test func oneLogLevelInRoostCore() throws {
        let declarations = try Self.lines(matching: #"\b(enum|struct|class|typealias)\s+\w*LogLevel\w*\b"#)
        #expect(declarations.map { $0.prefix { $0 != ":" } } == ["Sources/RoostCore/Text/LogLevel.swift"],
                "\(declarations.joined(separator: "\n"))")
    }

    @Test func theLogLevelKeepsItsNamesOrderAndConfigValues() throws {
        #expect(LogLevel.allCases.map(\.rawValue) == ["error", "warning", "info", "debug"])
        #expect(LogLevel.error < .warning && LogLevel.warning < .info && LogLevel.info < .debug)
        #expect(LogLevel.info.adjusted(by: 1) == .debug && LogLevel.info.adjusted(by: 5) == .debug)
        #expect(LogLevel.warning.adjusted(by: -4) == .error)
        let sandbox = try ConfigSandbox()
        for level in LogLevel.allCases {
            #expect(try sandbox.load("[general]\nlog_level = \(level.rawValue)\n").logLevel == level)
        }
        #expect(try sandbox.load("[general]\nlog_level = DEBUG\n").logLevel == .debug)
        #expect(sandbox.problems("[general]\nlog_level = loud\n").map(\.key) == ["log_level"])
        // What the engine and the notifier report reaches the agent's logger at the same level.
        let lines = LogTextTests.LockedLines()
        let logger = Logger(level: .info, sink: { lines.append($0) })
        let report: @Sendable (LogLevel, String) -> Void = { level, message in logger.log(level, message) }
        report(.warning, "w")
        report(.debug, "d")
        #expect(lines.all.count == 1 && lines.all[0].hasSuffix("WARN  w"))
    }
}
