import Foundation
@testable import RoostArchive
import Testing

/// Schema v13: an origin-id dedup key is stored as the marker `'o'` and rebuilt from its row
/// (`roost_dedup_key`), the other keys in full; `messages_dedup` indexes only those. Every kind of duplicate,
/// live and imported, on the indexed path and on the bulk path, must still be stored exactly once.
@Suite struct DedupKeyStorageTests {
    /// `bulkIntoStored`: the first copies are stored by one writer, the later ones come through a bulk load of
    /// another (whose lookups must see the stored rows' full keys, not the marker).
    enum Path: CaseIterable { case indexed, bulk, bulkIntoStored }

    /// Pairs of copies of one message, one pair per kind of key, the second copy as it comes back later.
    static func pairs(_ source: MessageSource) -> [(name: String, first: MessageRecord, again: MessageRecord)] {
        let room = "room@conference.example.com"
        var roomFirst = Fixture.message("in the room", at: 1, conversation: room, from: room + "/nick", kind: .groupchat,
                                        originId: "O-room", source: source)
        roomFirst.to = Fixture.account
        var roomAgain = roomFirst
        roomAgain.receivedAt += 9_000
        return [
            ("origin-id", Fixture.message("origin", at: 2, originId: "O-1", messageId: "m-o1", source: source),
             Fixture.message("origin", at: 7_000, originId: "O-1", messageId: "other", source: source)),
            ("origin-id, conversation in other case", Fixture.message("case", at: 3, conversation: "Ünï@Example.com", originId: "O-2", source: source),
             Fixture.message("case", at: 3, conversation: "ünï@example.com", from: "Ünï@Example.com/phone", originId: "O-2", source: source)),
            ("origin-id, outgoing", Fixture.message("sent", at: 4, direction: .outgoing, originId: "O-3", source: source),
             Fixture.message("sent", at: 4, direction: .outgoing, originId: "O-3", source: source)),
            ("origin-id in a room", roomFirst, roomAgain),
            ("message-id", Fixture.message("by id", at: 5, messageId: "m-1", source: source),
             Fixture.message("by id", at: 5, messageId: "m-1", source: source)),
            ("timestamp", Fixture.message("no ids", at: 6, source: source), Fixture.message("no ids", at: 6, source: source)),
            ("trusted stanza-id", Fixture.message("stanza", at: 7, stanzaId: "S-1", source: source),
             Fixture.message("stanza", at: 9_000, stanzaId: "S-1", source: .mam)),
            ("origin-id, then its trusted stanza-id", Fixture.message("adopt", at: 8, originId: "O-4", source: source),
             Fixture.message("adopt", at: 8, stanzaId: "S-4", originId: "O-4", source: .mam)),
            ("message-id, then its trusted stanza-id", Fixture.message("adopt m", at: 9, messageId: "m-4", source: source),
             Fixture.message("adopt m", at: 9, stanzaId: "S-5", messageId: "m-4", source: .mam)),
            // The room delivered it to two of the user's sessions; the server archived each copy under an id of its own.
            ("a room's private message, another session's copy",
             Fixture.message("psst", at: 10, conversation: room + "/bob", from: room + "/bob", stanzaId: "S-6", messageId: "pm-1", source: source),
             Fixture.message("psst", at: 10, conversation: room + "/bob", from: room + "/bob", stanzaId: "S-7", messageId: "pm-1", source: .mam)),
        ]
    }

    /// Not duplicates: the same origin-id from the other direction, from another occupant of a room, in another chat.
    static let distinct: [MessageRecord] = {
        let room = "room@conference.example.com"
        var a = Fixture.message("a", at: 20, conversation: room, from: room + "/one", kind: .groupchat, originId: "O-same")
        a.to = Fixture.account
        var b = a
        b.from = room + "/two"
        return [a, b, Fixture.message("c", at: 21, originId: "O-same"), Fixture.message("d", at: 22, direction: .outgoing, originId: "O-same"),
                Fixture.message("e", at: 23, conversation: "other@example.com", originId: "O-same"),
                // A chat's messages with their own trusted ids are two, even with one id and text (rule 5 is for rooms).
                Fixture.message("f", at: 24, stanzaId: "S-f1", messageId: "m-same"), Fixture.message("f", at: 25, stanzaId: "S-f2", messageId: "m-same")]
    }()

    @Test(arguments: [MessageSource.live, .import], Path.allCases)
    func everyKindOfDuplicateIsStoredOnce(source: MessageSource, path: Path) throws {
        let archive = TemporaryArchive()
        var writer = try archive.writer()
        if path == .bulk { writer.beginBulkLoad() }
        let pairs = Self.pairs(source)
        let first = try writer.commitBlocking(pairs.map { .message($0.first) })
        if path == .bulkIntoStored {
            writer = try archive.writer()
            writer.beginBulkLoad()
        }
        let again = try writer.commitBlocking(pairs.map { .message($0.again) } + pairs.map { .message($0.first) })
        let distinct = try writer.commitBlocking(Self.distinct.map { .message($0) })
        if path != .indexed { try writer.endBulkLoad() }
        for (index, pair) in pairs.enumerated() {
            guard case .inserted(let id) = first[index] else { Issue.record("\(pair.name): \(first[index])"); continue }
            #expect(again[index] == .duplicate(existingId: id), "\(pair.name)")
            #expect(again[pairs.count + index] == .duplicate(existingId: id), "\(pair.name), the first copy again")
        }
        #expect(distinct.allSatisfy { if case .inserted = $0 { true } else { false } }, "\(distinct)")
        #expect(try count(archive.path, "SELECT count(*) FROM messages") == Int64(pairs.count + Self.distinct.count))
        // Origin-id keys are stored as the marker, rebuilt to what `DedupKey.make` gives; the others in full.
        let database = try Database(path: archive.path, mode: .readOnly)
        try database.prepare("SELECT dedup_key, \(DedupKey.fullKeySQL()), origin_id FROM messages").forEachRow { row in
            #expect(row.text(0) == (row.optionalText(2) == nil ? row.text(1) : "o"))
            #expect(row.text(1).hasPrefix(row.optionalText(2) == nil ? "" : "o|"))
            return true
        }
        #expect(try archive.reader().duplicateFallbackKeys(account: Fixture.account).isEmpty)
    }

    @Test func verifyStillGroupsRowsSharingAnOriginIdKey() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([.message(Fixture.message("x", at: 1, stanzaId: "S-a", originId: "O-dup")),
                                          .message(Fixture.message("x", at: 2, stanzaId: "S-b", originId: "O-dup"))])
        guard case .inserted(let one) = outcomes[0], case .inserted(let two) = outcomes[1] else { Issue.record("\(outcomes)"); return }
        // Two trusted ids: two messages. An archive edited by hand loses one of them: the rules would have merged them.
        #expect(try archive.reader().duplicateFallbackKeys(account: Fixture.account).isEmpty)
        try Database(path: archive.path, mode: .readWrite).run("UPDATE messages SET stanza_id_trusted = 0 WHERE id = ?", [.integer(one)])
        let key = DedupKey.make(for: Fixture.message("x", originId: "O-dup"))
        #expect(try archive.reader().duplicateFallbackKeys(account: Fixture.account) == [DuplicateGroup(key: key, rowIds: [one, two])])
        #expect(try archive.reader().hasUnlinkedCopy(of: Fixture.message("x", at: 3, originId: "O-dup")))
        #expect(try !archive.reader().hasUnlinkedCopy(of: Fixture.message("x", at: 3, originId: "O-none")))
        #expect(try archive.reader().containsMessage(account: Fixture.account, conversation: Fixture.peer.uppercased(), direction: .incoming,
                                                     trustedStanzaID: nil, originID: "O-dup"))
        #expect(try !archive.reader().containsMessage(account: Fixture.account, conversation: Fixture.peer, direction: .outgoing,
                                                      trustedStanzaID: nil, originID: "O-dup"))
    }

    @Test func aCorrectedOriginIdMessageKeepsItsFullKeyInItsRevisions() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let original = Fixture.message("typo", at: 1, originId: "O-orig", messageId: "O-orig")
        let correction = Fixture.message("fixed", at: 2, originId: "O-fix", messageId: "O-fix", replaces: "O-orig")
        let first = try writer.commitBlocking([.message(original), .message(correction)])
        guard case .inserted(let id) = first[0] else { Issue.record("\(first)"); return }
        #expect(first[1] == .corrected(id: id, revision: 1))
        #expect(try writer.commitBlocking([.message(original), .message(correction)]) == [.duplicate(existingId: id), .duplicate(existingId: id)])
        let database = try Database(path: archive.path, mode: .readOnly)
        var keys: [String] = []
        try database.prepare("SELECT dedup_key FROM message_revisions ORDER BY revision").forEachRow { row in
            keys.append(row.text(0))
            return true
        }
        #expect(keys == [DedupKey.make(for: original), DedupKey.make(for: correction)])
    }

    /// An archive of schema v12 (every key in full) is migrated on open: origin-id keys that their row rebuilds
    /// become the marker, any other stays in full (here one an older rule wrote), and lookups find both.
    @Test func migrationMarksOnlyKeysItsRowsRebuild() throws {
        let archive = TemporaryArchive()
        do {
            let writer = try archive.writer()
            var events: [ArchiveEvent] = (0..<(SchemaV13.batchSize + 500)).map {
                .message(Fixture.message("m\($0)", at: Int64($0), originId: "O\($0)"))
            }
            events.append(.message(Fixture.message("by id", at: 99_999, messageId: "m-x")))
            _ = try writer.commitBlocking(events)
        }
        do {
            let database = try Database(path: archive.path, mode: .readWrite)
            try database.execute("""
                UPDATE messages SET dedup_key = \(DedupKey.fullKeySQL());
                UPDATE messages SET dedup_key = 'o|legacy' WHERE origin_id = 'O7';
                DROP INDEX messages_dedup; CREATE INDEX messages_dedup ON messages(account_id, dedup_key);
                DELETE FROM schema_migrations WHERE version = 13
                """)
        }
        let writer = try archive.writer()
        #expect(try count(archive.path, "SELECT count(*) FROM messages WHERE dedup_key = 'o'") == Int64(SchemaV13.batchSize + 499))
        #expect(try count(archive.path, "SELECT count(*) FROM messages WHERE dedup_key = 'o|legacy'") == 1)
        #expect(try count(archive.path, "SELECT count(*) FROM schema_migrations WHERE version = 13") == 1)
        #expect(try count(archive.path, "SELECT count(*) FROM sqlite_master WHERE name = 'messages_dedup' AND sql LIKE '%WHERE dedup_key <> ''o''%'") == 1)
        let again = try writer.commitBlocking([.message(Fixture.message("m3", at: 3, originId: "O3")),
                                       .message(Fixture.message("by id", at: 99_999, messageId: "m-x"))])
        #expect(again.allSatisfy { if case .duplicate = $0 { true } else { false } }, "\(again)")
        let database = try Database(path: archive.path, mode: .readOnly)
        let legacy = try database.cached(DedupKey.lookupSQL()).scalarInt([.integer(1), .text("o|legacy"), .text("O7")])
        #expect(legacy != nil)
    }

    private func count(_ path: String, _ sql: String) throws -> Int64 {
        try Database(path: path, mode: .readOnly).cached(sql).scalarInt() ?? -1
    }
}
