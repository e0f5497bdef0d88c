import Foundation
import Testing
@testable import RoostArchive

/// Watches select what the search selects: `watchMatches` over a batch of rows, with and without the stored messages
/// that decide watches before any statement runs, against `search` of the same query.
extension ArchiveSearchTests {
    @Test func watchesSelectWhatTheSearchSelects() throws {
        let queries = ["cafe", "CAFÉ", "zoe", "relea*", "\"good morning\"", "good morning", "kraken OR closed", "release -kraken",
                       "-release", "(kraken OR closed) cafe", "quarterly", "is:muc", "from:carol", "has:file", "好友", "消息",
                       "🎉", "party OR from:carol", "nothing here", "morning -is:muc"]
        let all = try reader.search(query: "", limit: 100, now: now, timeZone: utc)
        let ids = all.map(\.id)
        let messages = Dictionary(uniqueKeysWithValues: stored.map { ($0.key, WatchMessage(id: $0.key, $0.value)) })
        let watches = try reader.compileWatches(queries, account: nil, now: now, timeZone: utc)
        let plain = try reader.watchMatches(watches, ids: ids)
        let filtered = try reader.watchMatches(watches, ids: ids, messages: messages)
        for (index, query) in queries.enumerated() {
            let searched = Set(try reader.search(query: query, limit: 100, now: now, timeZone: utc).map(\.id))
            #expect(Set(plain.filter { $0.value.contains(index) }.keys) == searched, "\(query)")
            #expect(Set(filtered.filter { $0.value.contains(index) }.keys) == searched, "\(query), decided on the messages first")
        }
        // A batch whose words no watch needs runs no statement and selects nothing.
        let words = try reader.compileWatches(["kraken", "\"good morning\""], account: nil, now: now, timeZone: utc)
        let unrelated = Dictionary(uniqueKeysWithValues: ids.map { ($0, WatchMessage(id: $0, Fixture.message("unrelated"))) })
        #expect(try reader.watchMatches(words, ids: ids, messages: unrelated).isEmpty)
    }
}

/// The watches' fast path (`WatchTest`: the parsed query on a new message's own fields) against the search's
/// statement, over a corpus of every kind of message: wherever it decides, it decides what `roost search` selects, and
/// the filters it should decide alone it does decide, so that a flood needs no statement for them.
@Suite struct WatchFastPathTests {
    let archive = TemporaryArchive()
    let reader: ArchiveReader
    let messages: [Int64: WatchMessage]
    let now = Date(timeIntervalSince1970: Double(Fixture.baseTime) / 1000 + 3_600)
    let utc = TimeZone(identifier: "UTC")!

    init() throws {
        let writer = try archive.writer()
        let day: Int64 = 86_400_000
        let room = "room@muc.example.com"
        var records = [
            Fixture.message("Deploy finished; the server down soon", at: -40 * day, messageId: "1", senderName: "Peer Example"),
            Fixture.message("urgent: the disk is full", at: -3 * day, conversation: "Boss@Example.com", from: "Boss@Example.com/laptop",
                            messageId: "2", senderName: "Boss"),
            Fixture.message("ok, deploying", at: -2 * day, direction: .outgoing, messageId: "3"),
            Fixture.message("good morning everyone", at: -1 * day, conversation: room, from: room + "/carol", kind: .groupchat,
                            messageId: "4", senderName: "carol"),
            Fixture.message("deploy now?", at: -1 * day + 1_000, conversation: room, from: room + "/Bobby", kind: .groupchat,
                            messageId: "5", senderName: "Bobby"),
            Fixture.message("café break", at: -1 * day + 2_000, conversation: room, from: room + "/Zoë", kind: .groupchat,
                            messageId: "6", senderName: "Zoë"),
            Fixture.message("boss here, in the room", at: -1 * day + 3_000, conversation: room, from: room + "/boss", kind: .groupchat,
                            messageId: "7", senderName: "boss"),
            Fixture.message("psst, a secret", at: -1 * day + 4_000, conversation: room + "/carol", from: room + "/carol",
                            messageId: "8", senderName: "carol"),
            Fixture.message("a secret back", at: -1 * day + 5_000, direction: .outgoing, conversation: room + "/carol", messageId: "9"),
            Fixture.message(nil, at: -5 * 3_600_000, conversation: "news@example.net", from: "news@example.net", kind: .headline,
                            messageId: "10", subject: "Outage report"),
            Fixture.message("maintenance window tonight", at: -4 * 3_600_000, conversation: "ops@example.net", from: "ops@example.net/cron",
                            kind: .normal, messageId: "11"),
            Fixture.message("我们是好友，请给我发消息。", at: -3 * 3_600_000, messageId: "12", senderName: "王小明"),
            Fixture.message("小明 says hello", at: -3 * 3_600_000 + 1, conversation: room, from: room + "/小明", kind: .groupchat,
                            messageId: "13", senderName: "小明"),
            Fixture.message("party 🎉 time", at: -2 * 3_600_000, messageId: "14"),
            Fixture.message("here is the picture", at: -90 * 60_000, conversation: "alice@example.com", from: "alice@example.com/phone",
                            messageId: "15", senderName: "Alice",
                            attachments: [AttachmentRecord(url: "https://files.example/cat.png", mime: "image/png", size: 12, name: "cat.png")]),
            Fixture.message("the report", at: -80 * 60_000, conversation: "alice@example.com", from: "alice@example.com/phone",
                            messageId: "16", attachments: [AttachmentRecord(url: "https://files.example/q3.pdf")]),
            Fixture.message("Søren's naïve résumé", at: -70 * 60_000, messageId: "17", senderName: "Søren"),
            Fixture.message("SERVER DOWN AGAIN", at: -60 * 60_000, conversation: "noisy@x", from: "noisy@x/bot", kind: .groupchat,
                            messageId: "18", senderName: "bot"),
            Fixture.message("outage again, prefixed", at: -50 * 60_000, conversation: "noisy@x", from: "noisy@x/bot", kind: .groupchat,
                            messageId: "19", senderName: "bot"),
            Fixture.message("outage upstream", at: -40 * 60_000, messageId: "20"),
            Fixture.message("yes, agreed", at: -30 * 60_000, messageId: "21"),
            Fixture.message("hello from the other account", at: -20 * 60_000, messageId: "22"),
            Fixture.message("from bob: urgent", at: -10 * 60_000, conversation: "bob@example.com", from: "bob@example.com/desk",
                            messageId: "23", senderName: "Bob"),
        ]
        records[20].replyTo = "1"
        records[21].account = "other@example.org"
        records[21].to = "other@example.org"
        let outcomes = try writer.commitBlocking(records.map { .message($0) })
        messages = Dictionary(uniqueKeysWithValues: zip(outcomes, records).compactMap { outcome, record in
            if case .inserted(let id) = outcome { (id, WatchMessage(id: id, record)) } else { nil }
        })
        #expect(messages.count == records.count)
        reader = try archive.reader()
    }

    /// Every filter kind, negations, OR/AND, words of several scripts, the bench's mix.
    static let queries = [
        // From, to, with, in, account: by JID (any case), name, nick, start of a JID.
        "from:boss", "from:Boss@Example.com", "from:BOSS@example.com", "from:boss@example.com/laptop", "from:Boss@Example.com/LAPTOP",
        "from:carol", "from:CAR", "from:bobby", "from:bob", "from:zo", "from:zoë", "from:小明", "from:peer", "from:peer@example.com/phone",
        "from:alice", "from:phone", "from:cron", "from:room@muc.example.com/carol", "to:me@example.org", "to:ME@EXAMPLE.ORG", "to:me", "to:other",
        "to:room@muc.example.com/carol", "with:peer", "with:BOSS@example.com", "with:room", "with:room@muc.example.com/carol",
        "with:alice", "with:noisy@x", "in:room", "in:room@muc.example.com", "-in:noisy@x", "account:me@example.org",
        "account:OTHER@example.org", "account:other", "account:nobody@example.org",
        // is:, has:, file filters, reactions, dates.
        "is:in", "is:out", "is:chat", "is:normal", "is:headline", "is:muc", "is:reply", "-is:reply", "is:edited", "is:unread",
        "is:read", "is:retracted", "has:file", "-has:file", "has:image", "has:video", "filename:cat", "filename:*.pdf", "type:image/png",
        "type:image", "has:reaction", "reaction:👍", "date:2026-01", "date:2026-01-14", "date:2d..", "after:2026-01-15",
        "before:2026-01-15", "date:yesterday", "-date:today", "date:2026-01-15T11:00..2026-01-15T12:00",
        // Words: ASCII, phrases, prefixes, folding, CJK, symbols.
        "deploy", "deploy*", "DEPLOY*", "\"server down\"", "server down", "cafe", "CAFÉ", "soren", "søren", "resume", "naive",
        "好友", "消息", "好", "小明", "🎉", "-deploy", "deploy -server", "-\"server down\"", "nothing here",
        // AND, OR, NOT, mixed.
        "from:boss OR \"server down\"", "has:file with:alice", "has:file with:alice@example.com", "is:groupchat \"deploy\"",
        "outage -in:noisy@x", "from:bob urgent", "prefix*", "(deploy OR outage) -in:noisy@x", "-from:boss -is:muc",
        "NOT (is:muc OR is:out)", "is:muc -from:carol", "from:carol OR from:bobby", "in:room (\"deploy\" OR \"coffee\")",
        "(has:file OR is:reply) -with:alice", "is:muc OR 🎉", "好友 OR from:boss", "-好友 is:in", "(from:boss OR to:other) is:chat",
        "-\"disk full\" is:muc",
    ]

    /// Queries of filters alone that the fast path decides for every message (a flood of them needs no statement).
    static let decidedAlone = [
        "from:Boss@Example.com", "from:boss@example.com/laptop", "from:carol", "from:CAR", "from:bobby", "from:zo",
        "from:peer@example.com/phone", "from:phone", "from:cron", "to:me@example.org", "to:me", "with:peer", "with:BOSS@example.com", "with:room",
        "with:room@muc.example.com/carol", "in:room", "-in:noisy@x", "account:me@example.org", "account:other", "is:in", "is:out",
        "is:muc", "is:normal", "is:headline", "is:reply", "-is:reply", "-has:file", "date:2026-01", "date:2d..", "before:2026-01-15",
        "-date:today", "has:file with:alice@example.com", "(from:boss OR to:other) is:chat", "NOT (is:muc OR is:out)",
        "nothing here", "-\"disk full\" is:muc",
    ]

    @Test(arguments: [nil, Fixture.account])
    func decidesWhatTheSearchSelects(account: String?) throws {
        let watches = try reader.compileWatches(Self.queries, account: account, now: now, timeZone: utc)
        #expect(watches.failures.isEmpty)
        let ids = messages.keys.sorted()
        let matched = try reader.watchMatches(watches, ids: ids, messages: messages)
        var decided = 0
        for (index, query) in Self.queries.enumerated() {
            let searched = Set(try reader.search(query: query, account: account, limit: 1_000, now: now, timeZone: utc).map(\.id))
            for id in ids {
                guard let verdict = watches.tests[index].verdict(messages[id]!) else { continue }
                decided += 1
                #expect(verdict == searched.contains(id), "\(query) on \(messages[id]!.body ?? messages[id]!.subject ?? "")")
            }
            #expect(Set(matched.filter { $0.value.contains(index) }.keys) == searched, "\(query)")
            if Self.decidedAlone.contains(query) {
                #expect(ids.allSatisfy { watches.tests[index].verdict(messages[$0]!) != nil }, "\(query) needs a statement")
            }
        }
        // Most of the pairs are decided without a statement.
        #expect(decided * 10 > Self.queries.count * ids.count * 7, "\(decided) of \(Self.queries.count * ids.count)")
    }

    @Test func aQueryThatCannotBeCompiledSelectsNothingAndHoldsNoOtherBack() throws {
        let watches = try reader.compileWatches(["with:nobody", "from:boss", "date:2026-13-01"], account: nil, now: now, timeZone: utc)
        #expect(watches.failures.keys.sorted() == [0, 2])
        let ids = messages.keys.sorted()
        let matched = try reader.watchMatches(watches, ids: ids, messages: messages)
        let searched = Set(try reader.search(query: "from:boss", limit: 1_000, now: now, timeZone: utc).map(\.id))
        #expect(!searched.isEmpty)
        #expect(Set(matched.keys) == searched)
        #expect(matched.values.allSatisfy { $0 == [1] })
        #expect(try reader.watchMatches(watches, ids: ids).values.allSatisfy { $0 == [1] })
    }
}
