import Foundation
import Testing
@testable import RoostArchive
import RoostCore

/// Times no live message has, but an import can bring: every split and format exports every message, in the
/// month of the one date codec (proleptic Gregorian, expanded years), and reads it back to the millisecond.
@Suite("Export of extreme times")
struct ExportExtremeTimesTests {
    /// 2026-01-15T12:00:00Z and the times of the security review: 9999-12, 10000-01, 0000-01, 1969-12, ±8.64e15 ms
    /// (±275,760 years) and the ends of Int64.
    static let times: [(String, Int64)] = [
        ("normal", 1_768_478_400_000),
        ("9999", Timestamp.parse("9999-12-31T23:59:59.999Z")!),
        ("10000", Timestamp.parse("+10000-01-01T00:00:00.000Z")!),
        ("year0", Timestamp.parse("0000-01-01T00:00:00.000Z")!),
        ("1969", -1),
        ("plus8.64e15", 8_640_000_000_000_000),
        ("minus8.64e15", -8_640_000_000_000_000),
        ("int64max", .max),
        ("int64min", .min),
    ]

    private func archive(_ scratch: ExportScratch) throws -> ArchiveReader {
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        _ = try writer.commitBlocking(Self.times.map { name, time in
            .message(MessageRecord(account: "me@example.org", conversation: "bob@example.org", direction: .incoming,
                                   from: "bob@example.org/x", to: "me@example.org/roost", body: "at \(name)", timestamp: time,
                                   receivedAt: 1_768_478_400_000, messageId: name))
        })
        return try ArchiveReader(path: scratch.archive)
    }

    @Test(arguments: [ExportSplit.month, .none, .conversation], [ExportFormat.jsonl, .txt, .csv])
    func everySplitExportsEveryMessage(_ split: ExportSplit, _ format: ExportFormat) throws {
        let scratch = ExportScratch()
        let reader = try archive(scratch)
        let target = scratch.folder + "/out"
        let summary = try ArchiveExporter(reader: reader).export(
            ExportOptions(format: format, split: split, timeZone: TimeZone(identifier: "Asia/Shanghai")!), to: .path(target))
        #expect(summary.messages == Self.times.count)
        var text = ""
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isFolder), isFolder.boolValue,
           let files = FileManager.default.enumerator(atPath: target) {
            for case let file as String in files where file.hasSuffix("." + format.rawValue) {
                text += try String(contentsOfFile: target + "/" + file, encoding: .utf8)
            }
        } else {
            text = try String(contentsOfFile: target, encoding: .utf8)
        }
        for (name, _) in Self.times {
            #expect(text.contains("at \(name)"), "\(split) \(format) lost \(name)")
        }
    }

    @Test func eachMessageIsInItsOwnMonth() throws {
        let scratch = ExportScratch()
        let reader = try archive(scratch)
        let target = scratch.folder + "/months"
        _ = try ArchiveExporter(reader: reader).export(
            ExportOptions(format: .jsonl, split: .month, timeZone: TimeZone(identifier: "UTC")!), to: .path(target))
        let files = try FileManager.default.contentsOfDirectory(atPath: target).sorted()
        #expect(files == ["-271821-04.jsonl", "-292275055-05.jsonl", "0000-01.jsonl", "10000-01.jsonl", "1969-12.jsonl", "2026-01.jsonl",
                          "275760-09.jsonl", "292278994-08.jsonl", "9999-12.jsonl"], "\(files)")
        #expect(try String(contentsOfFile: target + "/9999-12.jsonl", encoding: .utf8).contains("at 9999"))
        #expect(try String(contentsOfFile: target + "/0000-01.jsonl", encoding: .utf8).contains("at year0"))
        #expect(try String(contentsOfFile: target + "/1969-12.jsonl", encoding: .utf8).contains("at 1969"))
    }

    @Test func exportedTimesImportToTheSameMillisecond() throws {
        let scratch = ExportScratch()
        let reader = try archive(scratch)
        let file = scratch.folder + "/all.jsonl"
        _ = try ArchiveExporter(reader: reader).export(ExportOptions(format: .jsonl), to: .path(file))
        let copy = scratch.folder + "/copy/archive.sqlite"
        try FileManager.default.createDirectory(atPath: scratch.folder + "/copy", withIntermediateDirectories: true)
        let summary = try ArchiveImporter(archivePath: copy).importJSONLines(from: file)
        #expect(summary.messages == Self.times.count)
        let rows = try ArchiveReader(path: copy).search(query: "", limit: 100)
        #expect(Set(rows.map(\.timestamp)) == Set(Self.times.map(\.1)))
        // Year 0 of the proleptic Gregorian calendar, written and read by the one codec.
        let text = scratch.folder + "/all.txt"
        _ = try ArchiveExporter(reader: reader).export(ExportOptions(format: .txt, timeZone: TimeZone(identifier: "UTC")!), to: .path(text))
        #expect(try String(contentsOfFile: text, encoding: .utf8).contains("0000-01-01 00:00:00  bob@example.org: at year0"))
    }
}
