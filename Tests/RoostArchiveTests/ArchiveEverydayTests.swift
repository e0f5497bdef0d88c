import Foundation
import Testing
@testable import RoostArchive

/// Issue 17 in the archive: names resolved when read and in queries, short ids, counts, time buckets,
/// transcript windows, last seen, requests dated when they first came, and a jsonl export that carries every
/// kind of record `stats` counts.
@Suite struct ArchiveEverydayTests {
    private let utc = TimeZone(identifier: "UTC")!
    private let t = Fixture.baseTime

    /// bob (roster "Bob", vCard nickname "Bobby B"), bert (roster "Bert"), carol (vCard only: full name
    /// "Carol Singer"), a stranger without any name, a room, and bob again in a second account.
    private func people() throws -> TemporaryArchive {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let me = Fixture.account
        _ = try writer.commitBlocking([
            .rosterItem(RosterItemRecord(account: me, jid: "bob@example.com", name: "Bob", groups: [], subscription: "both", ask: nil, timestamp: t)),
            .vCard(VCardRecord(account: me, jid: "bob@example.com", nickname: "Bobby B", fullName: "Robert Example", photoHash: nil,
                               photoPath: nil, raw: nil, fetchedAt: t)),
            .rosterItem(RosterItemRecord(account: me, jid: "bert@example.com", name: "Bert", groups: [], subscription: "both", ask: nil, timestamp: t)),
            .vCard(VCardRecord(account: me, jid: "carol@example.net", nickname: nil, fullName: "Carol Singer", photoHash: nil, photoPath: nil,
                               raw: nil, fetchedAt: t)),
            .message(Fixture.message("hi, Bob here", at: 1000, conversation: "bob@example.com", messageId: "b1", senderName: "bob@example.com")),
            .message(Fixture.message("travel plans", at: 2000, conversation: "bob@example.com", messageId: "b2", senderName: "Bobby B")),
            .message(Fixture.message("answer", at: 3000, direction: .outgoing, conversation: "bob@example.com", messageId: "b3")),
            .message(Fixture.message("from bert", at: 4000, conversation: "bert@example.com", messageId: "e1")),
            .message(Fixture.message("from carol", at: 5000, conversation: "carol@example.net", messageId: "c1")),
            .message(Fixture.message("a stranger", at: 6000, conversation: "zed@elsewhere.org", messageId: "z1")),
            .message(Fixture.message("room talk", at: 7000, conversation: "lounge@conference.example.com",
                                     from: "lounge@conference.example.com/ann", kind: .groupchat, messageId: "r1")),
            .message(MessageRecord(account: "work@example.net", conversation: "bob@example.com", direction: .incoming,
                                   from: "bob@example.com/work", to: "work@example.net", body: "work travel", timestamp: t + 8000,
                                   messageId: "w1")),
        ])
        return archive
    }

    private func bodies(_ reader: ArchiveReader, _ query: String, account: String? = nil) throws -> [String] {
        try reader.search(query: query, account: account, order: .oldestFirst, limit: 100, now: Date(), timeZone: utc).compactMap(\.body)
    }

    @Test func displayNamesComeFromTheContactNowNotFromTheMessage() throws {
        let archive = try people()
        let names = try archive.reader().names()
        #expect(names.displayName(of: "bob@example.com/phone", account: Fixture.account) == "Bob", "roster name first")
        #expect(names.displayName(of: "carol@example.net", account: Fixture.account) == "Carol Singer", "else the vCard")
        #expect(names.displayName(of: "zed@elsewhere.org", account: Fixture.account) == "zed@elsewhere.org", "else the JID")
        #expect(names.displayName(of: "bob@example.com", account: "work@example.net") == "bob@example.com", "names are per account")
    }

    @Test func namesAndPrefixesResolveInQueries() throws {
        let reader = try people().reader()
        #expect(try bodies(reader, "with:bo", account: Fixture.account) == ["hi, Bob here", "travel plans", "answer"], "start of a JID")
        #expect(try bodies(reader, "with:Bobby", account: Fixture.account).count == 3, "vCard nickname")
        #expect(try bodies(reader, "with:bob", account: Fixture.account).count == 3, "an exact name beats the prefix of bert's")
        #expect(try bodies(reader, "with:robert", account: Fixture.account).count == 3, "a word of the full name")
        #expect(try bodies(reader, "with:carol").count == 1)
        #expect(try bodies(reader, "with:bob@example.com") == ["hi, Bob here", "travel plans", "answer", "work travel"], "both accounts")
        #expect(try bodies(reader, "from:Bert") == ["from bert"])
        #expect(try bodies(reader, "with:nobody@example.org").isEmpty, "a whole JID nobody knows finds nothing, no error")
        #expect(try bodies(reader, "in:lounge") == ["room talk"])
        #expect(try bodies(reader, "from:ann") == ["room talk"], "a room nick still matches from:")
        #expect {
            try reader.search(query: "with:b", account: Fixture.account)
        } throws: { error in
            guard case ArchiveError.names(.ambiguous(_, let candidates)) = error else { return false }
            return candidates == ["Bert (bert@example.com)", "Bob (bob@example.com)"]
        }
        #expect {
            try reader.search(query: "with:nobody")
        } throws: { error in
            guard case ArchiveError.names(.unknown) = error else { return false }
            return "\(error)".contains("no contact, room or conversation matches 'nobody'")
        }
        #expect(throws: ArchiveError.self, "in: only looks at rooms") { try reader.search(query: "in:bob") }
        // The same conversation in two accounts is one JID for a query, two conversations for `roost log`.
        let entries = try reader.resolve("bob", account: nil)
        #expect(entries.map(\.account) == [Fixture.account, "work@example.net"])
        #expect(try reader.resolve("bob", account: "work@example.net").map(\.account) == ["work@example.net"])
        #expect(try reader.resolve("lounge", account: nil, kinds: [.room]).first?.kind == .room)
    }

    @Test func shortIDsFindTheirMessage() throws {
        let reader = try people().reader()
        let rows = try reader.search(query: "", limit: 100)
        let ids = Set(rows.map { ShortID.text(for: $0.id) })
        #expect(ids.count == rows.count, "different messages, different short ids")
        for row in rows {
            let short = ShortID.text(for: row.id)
            #expect(short.count == ShortID.length)
            #expect(try reader.messages(withID: short).map(\.id) == [row.id])
            #expect(try reader.messages(withID: short.uppercased()).map(\.id) == [row.id], "any case")
            #expect(try reader.messages(withID: String(row.id)).map(\.id) == [row.id], "the decimal id of --json")
            #expect(try reader.messages(withID: String(short.prefix(6))).contains { $0.id == row.id })
        }
        #expect(try reader.messages(withID: "zzzzzzzz").isEmpty)
        #expect(ShortID.normalised("ab") == nil && ShortID.normalised("abc!") == nil)
        // Neighbouring ids (the same millisecond) get unrelated short ids.
        #expect(ShortID.text(for: 1 << 20) != ShortID.text(for: (1 << 20) + 1))
        #expect(ShortID.text(for: 1 << 20).prefix(4) != ShortID.text(for: (1 << 20) + 1).prefix(4))
    }

    @Test func countContextBucketsAndWindows() throws {
        let reader = try people().reader()
        #expect(try reader.count(query: "") == 8)
        #expect(try reader.count(query: "travel") == 2)
        #expect(try reader.count(query: "travel", account: "work@example.net") == 1)
        let bob = try #require(try reader.search(query: "travel plans").first)
        let around = try reader.context(of: bob, before: 1, after: 5)
        #expect(around.compactMap(\.body) == ["hi, Bob here", "travel plans", "answer"], "same conversation and account only")
        #expect(try reader.firstOfLast(2, account: Fixture.account, conversation: "bob@example.com")?.timestamp == t + 2000)
        var seen: [String] = []
        try reader.transcript(account: Fixture.account, conversation: "bob@example.com", from: t + 1500, until: t + 3000) { event in
            if case .message(let row) = event { seen.append(row.body ?? "") }
            return true
        }
        #expect(seen == ["travel plans"], "[from, until)")
        let byMonth = try reader.counts(query: "with:bob@example.com", by: .month, timeZone: utc)
        #expect(byMonth.map(\.bucket) == ["2026-01", "2026-01"])
        #expect(byMonth.map(\.messages) == [3, 1])
        #expect(byMonth.first?.incoming == 2 && byMonth.first?.outgoing == 1)
        #expect(try reader.counts(query: "with:bob@example.com").allSatisfy { $0.bucket == nil })
        let stats = try reader.stats(account: "work@example.net")
        #expect(stats.totalMessages == 1 && stats.accounts.map(\.account) == ["work@example.net"])
    }

    @Test func lastSeenNeedsTheContactSeenAvailable() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let me = Fixture.account
        func presence(_ contact: String, _ availability: PresenceRecord.Availability, _ at: Int64, resource: String? = nil) -> ArchiveEvent {
            .presence(PresenceRecord(account: me, contact: contact, resource: resource, availability: availability, timestamp: t + at))
        }
        _ = try writer.commitBlocking([
            // The server answers "offline" for shy@ at every login: never a sighting.
            presence("shy@example.com", .unavailable, 1000), presence("shy@example.com", .unavailable, 9000),
            // friend@ was online, went offline, and the next login's "offline" is no new sighting of a resource.
            presence("friend@example.com", .available, 2000, resource: "phone"), presence("friend@example.com", .unavailable, 3000, resource: "phone"),
            presence("friend@example.com", .unavailable, 9000),
            presence("online@example.com", .available, 5000, resource: "pc"),
        ])
        let seen = try archive.reader().lastSeen(account: me)
        #expect(seen["shy@example.com"] == nil)
        #expect(seen["friend@example.com"] == t + 3000)
        #expect(seen["online@example.com"] == t + 5000)
    }

    @Test func aRepeatedRequestIsDatedWhenItFirstCame() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let me = Fixture.account
        for (offset, text) in [(1000, "hello"), (50_000, nil), (90_000, nil)] as [(Int64, String?)] {
            _ = try writer.commitBlocking([.subscription(SubscriptionRecord(account: me, jid: "carol@example.net", direction: .incoming,
                                                                    kind: .subscribe, message: text, timestamp: t + offset))])
        }
        let pending = try archive.reader().pendingSubscriptionRequests(account: me)
        #expect(pending.count == 1)
        #expect(pending.first?.createdAt == t + 1000)
        #expect(pending.first?.message == "hello")
    }

    @Test func jsonlCarriesEveryKindOfRecordStatsCounts() throws {
        let scratch = ExportScratch()
        let reader = try scratch.fixture()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let me = "me@example.org"
        _ = try writer.commitBlocking([
            .subscription(SubscriptionRecord(account: me, jid: "carol@example.net", direction: .incoming, kind: .subscribe, message: "hi", timestamp: ExportFixture.t0 + 1)),
            .subscription(SubscriptionRecord(account: me, jid: "carol@example.net", direction: .outgoing, kind: .subscribed, timestamp: ExportFixture.t0 + 2)),
            .subscription(SubscriptionRecord(account: me, jid: "dave@example.net", direction: .incoming, kind: .subscribe, timestamp: ExportFixture.t0 + 3)),
            .subscription(SubscriptionRecord(account: me, jid: "eve@example.net", direction: .outgoing, kind: .subscribe, timestamp: ExportFixture.t0 + 4)),
            .subscription(SubscriptionRecord(account: me, jid: "eve@example.net", direction: .incoming, kind: .unsubscribed, timestamp: ExportFixture.t0 + 5)),
        ])
        let options = ExportOptions(format: .jsonl, include: Set(ExportInclusion.allCases), timeZone: utc, copyAttachments: false)
        let first = scratch.folder + "/first.jsonl"
        let exported = try ArchiveExporter(reader: reader).export(options, to: .path(first))
        #expect(exported.subscriptions == 5)
        let copy = scratch.folder + "/copy.sqlite"
        let imported = try ArchiveImporter(archivePath: copy).importJSONLines(from: first)
        #expect(imported.subscriptions == 5)
        let before = try reader.stats(), after = try ArchiveReader(path: copy).stats()
        #expect(after.totalMessages == before.totalMessages && after.chatStates == before.chatStates)
        #expect(after.presenceEvents == before.presenceEvents && after.subscriptionEvents == before.subscriptionEvents)
        #expect(before.subscriptionEvents == 5 && before.chatStates > 0 && before.presenceEvents > 0)
        let second = scratch.folder + "/second.jsonl"
        _ = try ArchiveExporter(reader: try ArchiveReader(path: copy)).export(options, to: .path(second))
        #expect(try String(contentsOfFile: second, encoding: .utf8) == (try String(contentsOfFile: first, encoding: .utf8)))
        // Statuses came back as they were: carol's accepted, dave's still pending, eve's request denied.
        let restored = try ArchiveReader(path: copy)
        #expect(try restored.pendingSubscriptionRequests(account: me).map(\.jid) == ["dave@example.net"])
        #expect(try restored.subscriptionEvents(account: me).first { $0.jid == "eve@example.net" && $0.kind == .subscribe }?.status == .denied)
        // Importing again adds nothing.
        #expect(try ArchiveImporter(archivePath: copy).importJSONLines(from: first).subscriptions == 0)
        #expect(try ArchiveReader(path: copy).stats().subscriptionEvents == 5)
        #expect(try String(contentsOfFile: first, encoding: .utf8).contains(#""event":"subscription","account":"me@example.org","jid":"carol@example.net","direction":"in","kind":"subscribe","status":"accepted""#))
    }

    @Test func transcriptsHoldOnlyConversationsWithMessages() throws {
        let archive = try people()
        let writer = try archive.writer()
        // Chat states and presence of someone never written to.
        _ = try writer.commitBlocking([
            .chatState(ChatStateRecord(account: Fixture.account, conversation: "quiet@example.org", from: "quiet@example.org/x", state: .composing,
                                       timestamp: t)),
            .presence(PresenceRecord(account: Fixture.account, contact: "quiet@example.org", resource: "x", availability: .available, timestamp: t)),
        ])
        let reader = try archive.reader()
        let text = archive.folder + "/all.txt"
        _ = try ArchiveExporter(reader: reader).export(ExportOptions(format: .txt, include: [.states, .presence], timeZone: utc,
                                                                     copyAttachments: false), to: .path(text))
        let transcript = try String(contentsOfFile: text, encoding: .utf8)
        #expect(!transcript.contains("quiet@example.org"), "no empty conversation")
        #expect(transcript.contains("Bob"))
        let site = archive.folder + "/site"
        _ = try ArchiveExporter(reader: reader).export(ExportOptions(format: .html, timeZone: utc, copyAttachments: false), to: .path(site))
        #expect(!(try String(contentsOfFile: site + "/index.html", encoding: .utf8)).contains("quiet@example.org"))
        // jsonl, the backup, keeps them.
        let backup = archive.folder + "/all.jsonl"
        _ = try ArchiveExporter(reader: reader).export(ExportOptions(format: .jsonl, include: Set(ExportInclusion.allCases), timeZone: utc,
                                                                     copyAttachments: false), to: .path(backup))
        #expect(try String(contentsOfFile: backup, encoding: .utf8).contains("quiet@example.org"))
        // Exports name a contact the same way throughout, whatever name was stored with each message.
        let csv = archive.folder + "/bob.csv"
        var options = ExportOptions(format: .csv, query: "with:bob", account: Fixture.account, timeZone: utc, copyAttachments: false)
        options.csvByteOrderMark = true
        _ = try ArchiveExporter(reader: reader).export(options, to: .path(csv))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: csv))
        #expect(Array(bytes.prefix(3)) == [0xEF, 0xBB, 0xBF], "--bom")
        let rows = String(decoding: bytes.dropFirst(3), as: UTF8.self).split(separator: "\r\n").dropFirst()
        #expect(rows.count == 3)
        #expect(rows.filter { $0.contains(",Bob,") }.count == 2 && !rows.contains { $0.contains("Bobby B") }, "\(rows)")
    }

    @Test func aMistypedFilterIsAnError() throws {
        let reader = try people().reader()
        #expect {
            try reader.search(query: "frm:bob")
        } throws: { error in
            guard case ArchiveError.query(let query) = error else { return false }
            return query.message.contains("did you mean from:?") && query.column == 1
        }
        #expect(try bodies(reader, "iso:8601 travel").isEmpty, "short or unlike keys stay words")
        #expect(try bodies(reader, "http://example.org").isEmpty)
    }
}
