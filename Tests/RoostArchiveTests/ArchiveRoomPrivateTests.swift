import Foundation
import Testing
@testable import RoostArchive

/// Issue 28 in the archive: private messages in rooms (stored once however many of the user's sessions the room
/// delivered them to, found by `with:room@service/nick`, doubles reported by verify), nicks in `from:` when a
/// contact has the same name, and a conversation exported by value (issue 29, item 5).
@Suite("Archive: private messages in rooms, nicks in queries")
struct ArchiveRoomPrivateTests {
    private let utc = TimeZone(identifier: "UTC")!
    private let t = Fixture.baseTime
    private let room = "lounge@conference.example.org"
    private var withBob: String { room + "/bob" }

    /// A private message from (or to) the occupant `nick`, as the user's server hands over one delivered copy.
    private func privateMessage(_ body: String, nick: String = "bob", id: String = "pm-1", stanzaId: String?, at offset: Int64 = 0,
                                direction: MessageDirection = .incoming, source: MessageSource = .live) -> MessageRecord {
        let occupant = "\(room)/\(nick)"
        var record = Fixture.message(body, at: offset, direction: direction, conversation: occupant,
                                     from: direction == .incoming ? occupant : Fixture.account + "/phone", stanzaId: stanzaId,
                                     messageId: id, senderName: nick, source: source)
        record.to = direction == .incoming ? Fixture.account + "/roost" : occupant
        return record
    }

    private func roomMessage(_ body: String, nick: String, at offset: Int64, realJid: String? = nil) -> MessageRecord {
        var record = Fixture.message(body, at: offset, conversation: room, from: "\(room)/\(nick)", kind: .groupchat,
                                     messageId: "r-\(offset)", senderName: nick)
        record.to = Fixture.account
        record.realJid = realJid
        return record
    }

    private func bodies(_ reader: ArchiveReader, _ query: String) throws -> [String] {
        try reader.search(query: query, order: .oldestFirst, limit: 100, now: Date(), timeZone: utc).compactMap(\.body)
    }

    @Test func copiesTheRoomDeliveredToEachSessionAreOneMessage() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        // Roost's live copy, then the server archive's copy of the phone's delivery (its own id), then Roost's copy again.
        let first = try writer.commitBlocking([.message(privateMessage("psst", stanzaId: "S-roost"))])
        guard case .inserted(let id) = first[0] else { Issue.record("\(first)"); return }
        let later = try writer.commitBlocking([.message(privateMessage("psst", stanzaId: "S-phone", at: 3, source: .mam)),
                                       .message(privateMessage("psst", stanzaId: "S-roost", at: 3, source: .mam))])
        #expect(later == [.duplicate(existingId: id), .duplicate(existingId: id)])
        // Another message of the occupant, and a chat contact's two messages that share an id and text but not their
        // trusted ids, stay messages of their own.
        let others = try writer.commitBlocking([
            .message(privateMessage("psst", id: "pm-2", stanzaId: "S-next", at: 5)),
            .message(Fixture.message("same", at: 6, stanzaId: "S-c1", messageId: "c-1")),
            .message(Fixture.message("same", at: 7, stanzaId: "S-c2", messageId: "c-1")),
        ])
        #expect(others.allSatisfy { if case .inserted = $0 { true } else { false } }, "\(others)")
        let reader = try archive.reader()
        #expect(try reader.count(query: "") == 4)
        #expect(try reader.duplicateFallbackKeys(account: Fixture.account).isEmpty)
        // What verify asks of a server copy it does not find by id.
        #expect(try reader.hasOtherCopy(ofRoomPrivate: privateMessage("psst", stanzaId: "S-tablet", source: .mam)))
        #expect(try !reader.hasOtherCopy(ofRoomPrivate: privateMessage("never", stanzaId: "S-tablet", source: .mam)))
        #expect(try !reader.hasOtherCopy(ofRoomPrivate: Fixture.message("same", stanzaId: "S-c3", messageId: "c-1")))
    }

    /// An archive written before the rule (or edited by hand) holds a private message twice, under two trusted ids:
    /// verify reports it, although the ids differ.
    @Test func verifyReportsAPrivateMessageStoredTwice() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let first = try writer.commitBlocking([.message(privateMessage("twice", stanzaId: "S-1")),
                                       .message(Fixture.message("same", at: 6, stanzaId: "S-c1", messageId: "c-1")),
                                       .message(Fixture.message("same", at: 7, stanzaId: "S-c2", messageId: "c-1"))])
        guard case .inserted(let id) = first[0] else { Issue.record("\(first)"); return }
        #expect(try archive.reader().duplicateFallbackKeys(account: Fixture.account).isEmpty)
        let database = try Database(path: archive.path, mode: .readWrite)
        let columns = "account_id, conversation, direction, type, from_jid, from_bare, to_jid, to_bare, sender_name, body, timestamp, "
            + "received_at, stanza_id_by, stanza_id_trusted, message_id, source, dedup_key"
        try database.run("INSERT INTO messages (id, stanza_id, \(columns)) SELECT id + 1, 'S-2', \(columns) FROM messages WHERE id = ?",
                         [.integer(id)])
        let key = DedupKey.make(for: privateMessage("twice", stanzaId: nil))
        #expect(try archive.reader().duplicateFallbackKeys(account: Fixture.account) == [DuplicateGroup(key: key, rowIds: [id, id + 1])],
                "the private message's two rows; the chat's two messages with their own ids are no double")
    }

    /// bob and alice are contacts named "Bob" and "Alice", and occupants of the room as "bob", "Alice_" and "ali".
    private func peopleInARoom() throws -> TemporaryArchive {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let me = Fixture.account
        _ = try writer.commitBlocking([
            .rosterItem(RosterItemRecord(account: me, jid: "bob@example.com", name: "Bob", groups: [], subscription: "both", ask: nil, timestamp: t)),
            .rosterItem(RosterItemRecord(account: me, jid: "alice@example.com", name: "Alice", groups: [], subscription: "both", ask: nil,
                                         timestamp: t)),
            .message(Fixture.message("bob in a chat", at: 1, conversation: "bob@example.com", messageId: "b1")),
            .message(roomMessage("bob in the room", nick: "bob", at: 2)),
            .message(roomMessage("alice with a suffix", nick: "Alice_", at: 3)),
            .message(roomMessage("alice by her address", nick: "ali", at: 4, realJid: "alice@example.com")),
            .message(roomMessage("carol in the room", nick: "carol", at: 5)),
            .message(privateMessage("bob in private", stanzaId: "S-p1", at: 6)),
            .message(privateMessage("my answer", id: "pm-out", stanzaId: "S-p2", at: 7, direction: .outgoing)),
        ])
        return archive
    }

    @Test func fromFindsNicksInRoomsWhenAContactHasTheNameAndByTheirStart() throws {
        let reader = try peopleInARoom().reader()
        #expect(try bodies(reader, "is:groupchat from:bob") == ["bob in the room"])
        #expect(try bodies(reader, "in:lounge from:Alice") == ["alice with a suffix"], "nicks, not the addresses behind them")
        #expect(try bodies(reader, "from:bob") == ["bob in a chat", "bob in the room", "bob in private"])
        #expect(try bodies(reader, "is:groupchat from:car") == ["carol in the room"], "the start of a nick")
        #expect(try bodies(reader, "in:lounge from:ALI") == ["alice with a suffix", "alice by her address"], "case-insensitive")
        #expect(try bodies(reader, "in:lounge from:lice").isEmpty, "the start of a nick, not a word inside it")
        #expect(try bodies(reader, "in:lounge from:_").isEmpty && bodies(reader, "in:lounge from:Alice_") == ["alice with a suffix"],
                "a name without letters is tested on the rooms' rows")
        #expect(try bodies(reader, "from:bob@example.com") == ["bob in a chat"], "a whole JID is that JID")
    }

    @Test func withAnOccupantsAddressSelectsThePrivateConversation() throws {
        let reader = try peopleInARoom().reader()
        #expect(try bodies(reader, "with:\(withBob)") == ["bob in private", "my answer"])
        #expect(try reader.count(query: "with:\(withBob)") == 2)
        #expect(try reader.count(query: "with:\(room)") == 4)
        #expect(try bodies(reader, "with:bob@example.com/phone") == ["bob in a chat"], "a contact's full JID still names the chat")
        #expect(try bodies(reader, "in:lounge is:in from:bob") == ["bob in the room"], "a private conversation is no room")
        #expect(try reader.resolve("lounge", account: nil).map(\.jid) == [room], "names never resolve to a private conversation")
    }

    /// The exports (and the web view, which draws with them) name the occupant by nick, never the room.
    @Test func aPrivateConversationsSenderIsTheNick() throws {
        let archive = try peopleInARoom()
        let path = archive.folder + "/pm.txt"
        _ = try ArchiveExporter(reader: try archive.reader()).export(
            ExportOptions(format: .txt, conversation: withBob, timeZone: utc, copyAttachments: false), to: .path(path))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("  bob: bob in private") && text.contains("  me: my answer"), "\(text)")
        #expect(!text.contains("\(room): "), "\(text)")
    }

    /// Issue 29, item 5: a conversation the caller knows is selected by value; a nick written into query text would be
    /// query language.
    @Test func aConversationExportedByValueIsThatConversationOnly() throws {
        let archive = try peopleInARoom()
        let hostile = "\(room)/z OR after:2000-01-01"
        _ = try archive.writer().commitBlocking([.message(privateMessage("from the hostile nick", nick: "z OR after:2000-01-01", stanzaId: "S-h",
                                                                 at: 9))])
        let reader = try archive.reader()
        #expect(try reader.count(query: "with:\(hostile)") == 8, "written into query text, the nick selects the whole archive")
        let path = archive.folder + "/one.jsonl"
        let summary = try ArchiveExporter(reader: reader).export(
            ExportOptions(format: .jsonl, conversation: hostile, timeZone: utc, copyAttachments: false), to: .path(path))
        #expect(summary.messages == 1)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.contains("\"event\":\"message\"") }.count == 1)
        #expect(lines.allSatisfy { !$0.contains("\"event\":\"message\"") || $0.contains("from the hostile nick") })
    }
}
