import Foundation
import Testing
import RoostArchive
import RoostSynthetic

@Suite struct ArchiveSearchTests {
    let archive = TemporaryArchive()
    let reader: ArchiveReader
    /// What the fixture stored, by row id.
    let stored: [Int64: MessageRecord]
    let now = Date(timeIntervalSince1970: Double(Fixture.baseTime) / 1000 + 86_400)
    let utc = TimeZone(identifier: "UTC")!

    init() throws {
        let writer = try archive.writer()
        let day: Int64 = 86_400_000
        let records = [
            Fixture.message("Meet me at the Café on Friday", at: -40 * day, messageId: "1"),
            Fixture.message("the cafe was closed", at: -10 * day, direction: .outgoing, messageId: "2"),
            Fixture.message("Release notes for roost are ready", at: -3 * day, messageId: "3", senderName: "Zoë Builder"),
            Fixture.message("release the kraken", at: -2 * day, conversation: "other@example.net", messageId: "4"),
            Fixture.message("good morning everyone", at: -1 * day, conversation: "room@muc.example.com",
                            from: "room@muc.example.com/carol", kind: .groupchat, messageId: "5"),
            Fixture.message("morning good", at: -1 * day + 1_000, messageId: "6"),
            Fixture.message("here is the file", at: 0, messageId: "7",
                            attachments: [AttachmentRecord(url: "https://files.example/a.png", mime: "image/png", size: 12)]),
            Fixture.message("我们是好友，请给我发消息。", at: 1_000, messageId: "8"),
            Fixture.message("今天天气很好", at: 2_000, messageId: "9"),
            Fixture.message(nil, at: 3_000, messageId: "10", subject: "Quarterly planning"),
            Fixture.message("emoji only 🎉 party", at: 4_000, messageId: "11"),
        ]
        let outcomes = try writer.commitBlocking(records.map { .message($0) })
        stored = Dictionary(uniqueKeysWithValues: zip(outcomes, records).compactMap { outcome, record in
            if case .inserted(let id) = outcome { (id, record) } else { nil }
        })
        reader = try archive.reader()
    }

    func bodies(_ query: String, order: SearchOrder = .newestFirst) throws -> [String] {
        try reader.search(query: query, order: order, now: now, timeZone: utc).map { $0.body ?? $0.subject ?? "" }
    }

    @Test func diacriticsAreFolded() throws {
        #expect(try bodies("cafe") == ["the cafe was closed", "Meet me at the Café on Friday"])
        #expect(try bodies("CAFÉ").count == 2)
        #expect(try bodies("zoe").count == 1)
    }

    @Test func prefixPhraseOrNot() throws {
        #expect(try bodies("relea*").count == 2)
        #expect(try bodies("\"good morning\"") == ["good morning everyone"])
        #expect(try bodies("good morning").count == 2)
        #expect(try bodies("kraken OR closed").count == 2)
        #expect(try bodies("release -kraken") == ["Release notes for roost are ready"])
        #expect(try bodies("release NOT kraken") == ["Release notes for roost are ready"])
        #expect(try bodies("-release").count == 9)
        #expect(try bodies("(kraken OR closed) cafe") == ["the cafe was closed"])
        #expect(try bodies("quarterly") == ["Quarterly planning"])
    }

    @Test func filters() throws {
        #expect(try bodies("is:out") == ["the cafe was closed"])
        #expect(try bodies("is:muc") == ["good morning everyone"])
        #expect(try bodies("from:carol") == ["good morning everyone"])
        #expect(try bodies("in:room") == ["good morning everyone"])
        #expect(try bodies("with:other@example.net") == ["release the kraken"])
        #expect(try bodies("with:other") == ["release the kraken"])
        #expect(try bodies("release with:peer@example.com").count == 1)
        #expect(try bodies("account:me@example.org").count == 11)
        #expect(try bodies("account:nobody@example.org").isEmpty)
        #expect(try bodies("has:file") == ["here is the file"])
        #expect(try bodies("from:peer@example.com cafe") == ["Meet me at the Café on Friday"])
        #expect(try bodies("release OR from:carol").count == 3)
    }

    @Test func dates() throws {
        #expect(try bodies("date:2026-01-15").count == 5)
        #expect(try bodies("date:2025-12").count == 1)
        #expect(try bodies("date:2025-12-01..2026-01-10") == ["the cafe was closed", "Meet me at the Café on Friday"])
        #expect(try bodies("date:..2026-01-05").count == 2)
        #expect(try bodies("after:2026-01-14 before:2026-01-15") == ["morning good", "good morning everyone"])
        #expect(try bodies("date:2d..").count == 7)
        #expect(try bodies("today").isEmpty) // a word, not a filter
        #expect(try bodies("date:today").isEmpty)
        #expect(try bodies("date:yesterday").count == 5)
        #expect(try bodies("cafe date:2026-01-05T00:00..2026-01-06").count == 1)
    }

    @Test func orderAndPaging() throws {
        let newest = try bodies("")
        #expect(newest.count == 11)
        #expect(try bodies("", order: .oldestFirst) == newest.reversed())
        let page = try reader.search(query: "", limit: 3, offset: 2, now: now, timeZone: utc).map(\.body)
        #expect(page == Array(newest[2..<5]))
        #expect(try bodies("cafe", order: .rank).count == 2)
        #expect(try bodies("", order: .rank).count == 11)
    }

    @Test func chineseWordsAndCharacters() throws {
        #expect(try bodies("好友") == ["我们是好友，请给我发消息。"])
        #expect(try bodies("消息") == ["我们是好友，请给我发消息。"])
        #expect(try bodies("好").count == 2)
        #expect(try bodies("天气很好") == ["今天天气很好"])
        #expect(try bodies("\"我们是好友\"").count == 1)
        #expect(try bodies("友请").isEmpty) // crosses the comma: not a substring
        #expect(try bodies("好友 OR 天气").count == 2)
    }

    @Test func symbolsFallBackToSubstring() throws {
        #expect(try bodies("🎉") == ["emoji only 🎉 party"])
    }

    @Test func highlighting() throws {
        let rows = try reader.search(query: "cafe friday", now: now, timeZone: utc)
        let row = try #require(rows.first)
        #expect(row.highlightedBody(open: "[", close: "]") == "Meet me at the [Café] on [Friday]")
        let cjk = try #require(try reader.search(query: "好友", now: now, timeZone: utc).first)
        #expect(cjk.highlightedBody(open: "[", close: "]") == "我们是[好友]，请给我发消息。")
        let prefix = try #require(try reader.search(query: "kra*", now: now, timeZone: utc).first)
        #expect(prefix.highlightedBody(open: "[", close: "]") == "release the [kra]ken")
    }

    @Test func streamingCursorVisitsEverythingOldestFirst() throws {
        var seen: [Int64] = []
        try reader.forEachMessage(matching: "", now: now, timeZone: utc) { row in
            seen.append(row.timestamp)
            return true
        }
        #expect(seen.count == 11)
        #expect(seen == seen.sorted())
        var first: [String] = []
        try reader.forEachMessage(matching: "morning") { row in
            first.append(row.body ?? "")
            return false
        }
        #expect(first == ["good morning everyone"])
    }

    @Test func hostileInputIsTextOrQueryError() throws {
        let hostile = [
            "\"", "\"\"", "'", "' OR 1=1 --", "\"; DROP TABLE messages; --", "a\" OR \"b", "NEAR(a b)", "NEAR", "near/3",
            "*", "**", "a*b", "-", "--", "-(", "()", "(", ")", "((a)", "a)", ":", "::", "from:", "from:\"", "x:y", "a:b:c",
            "body:cafe", "{body}:cafe", "cafe^", "^cafe", "a AND", "OR", "NOT", "a OR OR b", "a\0b", "\0",
            "café\u{301}", "🎉🎉", "\u{202E}evil", "你\"好", "date:2026-13-01", "date:..", "date:x..y", "is:what",
            "has:", "with:%", "from:_", "from:\\", "rowid:1", "message_fts:cafe", "\"cafe\" *", "-\"the\"",
            String(repeating: "(", count: 500), String(repeating: "NOT ", count: 300) + "a", String(repeating: "a ", count: 2_000),
        ]
        for query in hostile {
            do {
                _ = try reader.search(query: query, now: now, timeZone: utc)
                for order in [SearchOrder.rank, .oldestFirst] {
                    _ = try reader.search(query: query, order: order, now: now, timeZone: utc)
                }
            } catch {
                // A name no contact has (`with:%`) is an error of its own, never SQL.
                if case .names(.unknown) = error { continue }
                guard case .query(let queryError) = error else {
                    Issue.record("query \(query.debugDescription) failed in SQLite: \(error)")
                    continue
                }
                #expect(queryError.column >= 1 && queryError.column <= query.count + 1)
            }
        }
        // The archive is intact afterwards.
        #expect(try bodies("").count == 11)
    }

    /// On a synthetic archive (15% CJK), every kind of query finds the same rows newest-first and ranked.
    /// Its ingest and search figures are in `roost-bench search`, not here: the machine is shared.
    @Test func syntheticArchiveRankedAndNewestFirstAgree() throws {
        let archive = TemporaryArchive()
        let count = 3_000
        _ = try SyntheticArchive.build(at: archive.path, messages: count, cjkShare: 0.15, seed: 7)
        let reader = try archive.reader()
        #expect(try reader.stats().totalMessages == count)
        var found = 0
        for query in ["the", "\"good morning\"", "消息", "from:contact1 date:30d..", "the you", "zorblax"] {
            let rows = try reader.search(query: query, limit: count)
            let ranked = try reader.search(query: query, order: .rank, limit: count)
            #expect(Set(rows.map(\.id)) == Set(ranked.map(\.id)), "\(query)")
            found += rows.count
        }
        #expect(found > 0)
    }
}
