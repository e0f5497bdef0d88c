import Foundation
import Testing
import RoostArchive

/// Watches select what the search selects: `watchMatches` over a batch of rows, with and without the texts that rule
/// out watches before any statement runs, against `search` of the same query.
extension ArchiveSearchTests {
    @Test func watchesSelectWhatTheSearchSelects() throws {
        let queries = ["cafe", "CAFÉ", "zoe", "relea*", "\"good morning\"", "good morning", "kraken OR closed", "release -kraken",
                       "-release", "(kraken OR closed) cafe", "quarterly", "is:muc", "from:carol", "has:file", "好友", "消息",
                       "🎉", "party OR from:carol", "nothing here", "morning -is:muc"]
        let all = try reader.search(query: "", limit: 100, now: now, timeZone: utc)
        let ids = all.map(\.id)
        let texts = Dictionary(uniqueKeysWithValues: all.map { ($0.id, [$0.body, $0.subject, $0.senderName].compactMap { $0 }.joined(separator: "\n")) })
        let watches = try reader.compileWatches(queries, account: nil, now: now, timeZone: utc)
        let plain = try reader.watchMatches(watches, ids: ids)
        let filtered = try reader.watchMatches(watches, ids: ids, texts: texts)
        for (index, query) in queries.enumerated() {
            let searched = Set(try reader.search(query: query, limit: 100, now: now, timeZone: utc).map(\.id))
            #expect(Set(plain.filter { $0.value.contains(index) }.keys) == searched, "\(query)")
            #expect(Set(filtered.filter { $0.value.contains(index) }.keys) == searched, "\(query), ruled out by its words")
        }
        // A batch whose words no watch needs runs no statement and selects nothing.
        let words = try reader.compileWatches(["kraken", "\"good morning\""], account: nil, now: now, timeZone: utc)
        #expect(try reader.watchMatches(words, ids: ids, texts: Dictionary(uniqueKeysWithValues: ids.map { ($0, "unrelated") })).isEmpty)
    }
}
