import Foundation
import Testing
import RoostArchive

/// Prints ingest and search throughput; asserts only correctness (the machine is shared).
@Suite struct ArchiveIngestBenchmarkTests {
    @Test func syntheticArchiveThroughput() throws {
        let archive = TemporaryArchive()
        let count = 30_000
        let report = try SyntheticArchive.build(at: archive.path, messages: count, cjkShare: 0.15, seed: 7)
        print("[archive-bench] ingest \(report.messages) messages in \(String(format: "%.2f", report.seconds)) s = \(Int(report.messagesPerSecond)) msg/s (debug build)")
        let reader = try archive.reader()
        #expect(try reader.stats().totalMessages == count)
        for query in ["the", "zorblax", "\"good morning\"", "消息", "from:contact1 date:30d..", "the you"] {
            let start = Date()
            let rows = try reader.search(query: query)
            let ranked = try reader.search(query: query, order: .rank)
            let ms = Date().timeIntervalSince(start) * 1000
            print("[archive-bench] \(query): \(rows.count) rows newest + ranked in \(String(format: "%.2f", ms)) ms")
            #expect(rows.count == ranked.count)
        }
    }
}
