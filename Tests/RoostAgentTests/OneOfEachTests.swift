import Foundation
import Testing
import RoostCore
@testable import RoostAgent

/// Issue 31, "one of each": the program reads the clock in UTC milliseconds through `Timestamp.now()`. The
/// source checks name each file and line that brings a copy back.
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
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let line = String(line)
                if expression.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                    found.append("Sources/\(file):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
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
}
