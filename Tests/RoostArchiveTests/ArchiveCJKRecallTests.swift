import Foundation
import Testing
@testable import RoostArchive
import RoostSynthetic

/// Full-text search must find exactly what `LIKE '%term%'` finds for Chinese terms of 1–4 characters.
@Suite struct ArchiveCJKRecallTests {
    @Test func recallEqualsLikeGroundTruth() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        var random = SplitMix64(seed: 2026)
        // A small alphabet so that bigrams recur and most terms have several hits.
        let alphabet = Array("好友消息我们你他是的了在有不人天气很今")
        var events: [ArchiveEvent] = []
        for index in 0..<3_000 {
            var text = ""
            for _ in 0..<(2 + random.below(25)) {
                switch random.below(12) {
                case 0: text.append("，")
                case 1: text.append(" ")
                case 2: text.append("ok")
                default: text.append(alphabet[random.below(alphabet.count)])
                }
            }
            events.append(.message(Fixture.message(text, at: Int64(index) * 1_000, messageId: "c\(index)")))
        }
        _ = try writer.commitBlocking(events)
        let reader = try archive.reader()
        let database = try Database(path: archive.path, mode: .readOnly)
        var checked = 0
        for length in 1...4 {
            for _ in 0..<25 {
                let term = String((0..<length).map { _ in alphabet[random.below(alphabet.count)] })
                var expected = Set<Int64>()
                try database.prepare("SELECT id FROM messages WHERE body LIKE ?").forEachRow([.text("%\(term)%")]) { row in
                    expected.insert(row.int(0))
                    return true
                }
                let found = Set(try reader.search(query: term, limit: 10_000).map(\.id))
                var extra: [String] = []
                for id in found.symmetricDifference(expected) {
                    try database.prepare("SELECT body FROM messages WHERE id = ?").forEachRow([.integer(id)]) { row in
                        extra.append(row.text(0))
                        return false
                    }
                }
                #expect(found == expected, "term \(term): \(found.count) found, \(expected.count) expected; extra: \(extra)")
                checked += expected.count
            }
        }
        #expect(checked > 1_000)
    }
}
