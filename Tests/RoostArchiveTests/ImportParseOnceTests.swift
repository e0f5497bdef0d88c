import Foundation
import Testing
@testable import RoostArchive

/// A jsonl import decodes each line once: the check pass keeps what it decoded for the write pass, up to a memory
/// budget, and the write pass reads the file again only from the first line it did not keep.
@Suite("Import: one parse per line")
struct ImportParseOnceTests {
    private let utc = TimeZone(identifier: "UTC")!

    private func export(_ archive: String, to path: String) throws -> String {
        _ = try ArchiveExporter(reader: try ArchiveReader(path: archive)).export(
            ExportOptions(format: .jsonl, query: "", include: Set(ExportInclusion.allCases), timeZone: utc, copyAttachments: false),
            to: .path(path))
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func everyBudgetImportsTheSameAndOnlyLinesPastItAreDecodedTwice() throws {
        let scratch = ExportScratch()
        _ = try scratch.fixture()
        let original = try export(scratch.archive, to: scratch.folder + "/first.jsonl")
        // Blank lines and an invalid one (skipped) between the events, a CRLF line end: the write pass must go on
        // exactly where the check pass stopped keeping lines, wherever that is.
        var lines = original.split(separator: "\n").map(String.init)
        lines.insert("", at: 3)
        lines.insert("not json", at: 7)
        lines.insert("   ", at: 11)
        lines[12] += "\r"
        let file = scratch.folder + "/mixed.jsonl"
        let text = lines.joined(separator: "\n") + "\n"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let valid = lines.count - 3
        var summaries: [ImportSummary] = []
        for (index, budget) in [ArchiveImporter.defaultRetainedBytes, 0, 1, text.utf8.count / 3, text.utf8.count / 2].enumerated() {
            let archive = scratch.folder + "/copy\(index).sqlite"
            var summary = try ArchiveImporter(archivePath: archive).importJSONLines(from: file, skipInvalid: true, retainedBytes: budget)
            #expect(try export(archive, to: scratch.folder + "/again\(index).jsonl") == original, "budget \(budget)")
            #expect(summary.skipped.map(\.line) == [8])
            switch budget {
            case ArchiveImporter.defaultRetainedBytes: #expect(summary.linesDecodedTwice == 0, "the whole file was kept")
            case 0, 1: #expect(summary.linesDecodedTwice == valid, "nothing was kept")
            default: #expect(summary.linesDecodedTwice > 0 && summary.linesDecodedTwice < valid, "budget \(budget)")
            }
            summary.linesDecodedTwice = 0
            summary.seconds = 0
            summaries.append(summary)
        }
        #expect(summaries.allSatisfy { $0 == summaries[0] })
        #expect(summaries[0].lines == lines.count - 2 && summaries[0].messages == 13 && summaries[0].corrections == 2)
    }

    @Test func invalidLinesGetTheSameErrorsWhateverIsKept() throws {
        let scratch = ExportScratch()
        let good = #"{"version":1,"event":"chat_state","account":"me@example.org","conversation":"a@example.com","from":"a@example.com/x","state":"composing","timestamp":"2026-01-15T12:00:00.000Z"}"#
        let file = scratch.folder + "/bad.jsonl"
        try [good, good, "{bad", good, #"{"version":1,"event":"chat_state"}"#, good].joined(separator: "\n")
            .write(toFile: file, atomically: true, encoding: .utf8)
        for budget in [ArchiveImporter.defaultRetainedBytes, 1, good.utf8.count * 2] {
            let archive = scratch.folder + "/new\(budget).sqlite"
            #expect {
                _ = try ArchiveImporter(archivePath: archive).importJSONLines(from: file, retainedBytes: budget)
            } throws: { error in
                guard case ImportError.invalidLines(let problems, let count, _) = error else { return false }
                return count == 2 && problems.map(\.line) == [3, 5] && "\(error)".contains("line 3: not JSON (column 2")
                    && "\(error)".contains("line 5: missing \"account\"")
            }
            #expect(!FileManager.default.fileExists(atPath: archive), "nothing may be written when lines are invalid")
        }
    }

    /// The escape path copies the runs between escapes whole: every escape, at every place, decodes as before.
    @Test func stringsWithEscapesDecodeExactly() throws {
        let cases: [(String, String)] = [
            (#""\"a\"""#, "\"a\""), (#""x\\y\/z""#, "x\\y/z"), (#""<m a=\"1\" b=\"2\">é</m>\n""#, "<m a=\"1\" b=\"2\">é</m>\n"),
            (#""\u00e9\ud83d\ude00 and \t tab""#, "é😀 and \t tab"), (#""plain then \b\f\r end""#, "plain then \u{8}\u{C}\r end"),
            (#""\\""#, "\\"), (#""ab\"""#, "ab\""), (#""中文\"引号\"""#, "中文\"引号\""),
        ]
        for (json, expected) in cases {
            #expect(try JSONParser.parse(Array(json.utf8)) == .string(expected), "\(json)")
        }
        // Errors keep their columns: a control character after an escape, an unterminated string, a bad escape.
        #expect(throws: JSONParser.Failure(column: 6, reason: "control character in a string")) {
            try JSONParser.parse(Array("\"a\\\"b\u{1}\"".utf8))
        }
        #expect(throws: JSONParser.Failure(column: 7, reason: "unterminated string")) { try JSONParser.parse(Array(#""a\"bc"#.utf8)) }
        #expect(throws: JSONParser.Failure(column: 5, reason: "unterminated string")) { try JSONParser.parse(Array(#""a\""#.utf8)) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(#""a\qb""#.utf8)) }
        #expect(throws: JSONParser.Failure(column: 2, reason: "a string is not valid UTF-8")) {
            try JSONParser.parse([0x22, 0x5C, 0x22, 0x41, 0xC0, 0xAF, 0x22])
        }
    }

    /// The eight-bytes-at-a-time ASCII path must not step over a bad byte anywhere in a word, nor a good sequence.
    @Test func utf8CheckFindsABadByteAtEveryOffset() {
        let ascii = Array("0123456789abcdefghijklmnopqrstuv".utf8)
        #expect(ascii.withUnsafeBufferPointer(UTF8Check.isValid))
        for offset in 0..<ascii.count {
            var bad = ascii
            bad[offset] = 0xFF
            #expect(!bad.withUnsafeBufferPointer(UTF8Check.isValid), "0xFF at \(offset)")
            var truncated = ascii
            truncated[offset] = 0xE4  // the lead of a three-byte sequence followed by ASCII
            #expect(!truncated.withUnsafeBufferPointer(UTF8Check.isValid), "0xE4 at \(offset)")
            var good = Array(ascii.prefix(offset))
            good += Array("é中😀".utf8) + ascii
            #expect(good.withUnsafeBufferPointer(UTF8Check.isValid), "valid sequences at \(offset)")
            let surrogate = Array(ascii.prefix(offset)) + [0xED, 0xA0, 0x80] + ascii
            #expect(!surrogate.withUnsafeBufferPointer(UTF8Check.isValid), "a surrogate at \(offset)")
        }
    }
}
