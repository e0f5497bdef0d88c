import Foundation
import Testing
import RoostArchive

/// Group chats in the archive (schema v5): room stanza-ids, the occupant timeline, corrections by occupant
/// id, invitations, the room mark, and the echo of a message Roost sent.
@Suite("Archive: group chats")
struct ArchiveRoomTests {
    let room = "lounge@conference.example.org"

    func roomMessage(_ body: String?, nick: String = "bob", at offset: Int64 = 0, stanzaId: String? = nil, occupantId: String? = nil,
                     direction: MessageDirection = .incoming, originId: String? = nil, messageId: String? = nil,
                     replaces: String? = nil, source: MessageSource = .live, delivery: DeliveryState? = nil) -> MessageRecord {
        var record = MessageRecord(account: Fixture.account, conversation: room, direction: direction, kind: .groupchat,
                                   from: "\(room)/\(nick)", to: Fixture.account, senderName: nick, body: body,
                                   timestamp: Fixture.baseTime + offset, stanzaId: stanzaId, stanzaIdBy: stanzaId.map { _ in room },
                                   stanzaIdTrusted: stanzaId != nil, originId: originId, messageId: messageId, replaces: replaces,
                                   source: source, delivery: delivery)
        record.occupantId = occupantId
        return record
    }

    func presence(_ nick: String, available: Bool = true, role: String? = "participant", affiliation: String? = "none",
                  codes: [Int] = [], newNick: String? = nil, initial: Bool = false, at offset: Int64 = 0) -> ArchiveEvent {
        .roomPresence(RoomPresenceRecord(account: Fixture.account, room: room, nick: nick, available: available, occupantId: "id-\(nick)",
                                         role: role, affiliation: affiliation, statusCodes: codes, newNick: newNick, initial: initial,
                                         timestamp: Fixture.baseTime + offset))
    }

    @Test func stanzaIDsOfDifferentArchivesNeverSuppressEachOther() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        // The same id value from the account's archive and from the room's: two messages.
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("from my archive", stanzaId: "X1")),
            .message(roomMessage("from the room", stanzaId: "X1")),
            .message(roomMessage("from the room", stanzaId: "X1", source: .mam)),
        ])
        #expect(outcomes.filter { if case .inserted = $0 { true } else { false } }.count == 2)
        #expect(outcomes[2] == .duplicate(existingId: outcomesID(outcomes[1])))
    }

    private func outcomesID(_ outcome: InsertOutcome) -> Int64? {
        if case .inserted(let id) = outcome { return id }
        return nil
    }

    @Test func theOccupantTimeline() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([
            .room(RoomUpdate(account: Fixture.account, room: room, change: .joining(nick: "me", passwordSource: nil), timestamp: Fixture.baseTime)),
            presence("bob", initial: true),
            presence("me", codes: [110], initial: true),
            presence("carol", at: 1000),
            presence("carol", role: "moderator", at: 2000),
            presence("carol", available: false, codes: [303], newNick: "caroline", at: 3000),
            presence("caroline", role: "moderator", at: 3001),
            presence("bob", available: false, role: "none", codes: [307], at: 4000),
        ])
        let reader = try archive.reader()
        var events: [String] = []
        try reader.transcript(conversation: room, includePresence: true) { event in
            if case .presence(let p) = event, let text = p.roomEventText { events.append(text) }
            return true
        }
        #expect(events == ["carol joined", "carol is now a moderator", "carol is now known as caroline", "bob was kicked"])
        let occupants = try reader.occupants(account: Fixture.account, room: room).map(\.nick)
        #expect(occupants == ["caroline", "me"])
        // Joining again rebuilds the list from the room's answer.
        _ = try writer.commitBlocking([.room(RoomUpdate(account: Fixture.account, room: room, change: .joining(nick: "me", passwordSource: nil),
                                                timestamp: Fixture.baseTime + 5000))])
        #expect(try reader.occupants(account: Fixture.account, room: room).isEmpty)
        // A room's timeline is not a contact's presence.
        #expect(try reader.latestPresence(account: Fixture.account).isEmpty)
    }

    @Test func correctionsInARoomFollowTheOccupantID() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.message(roomMessage("typo", nick: "bob", occupantId: "BOB", messageId: "m1"))])
        // Bob changed his nick, then corrected: the same occupant, so an edit.
        let edit = try writer.commitBlocking([.message(roomMessage("fixed", nick: "robert", at: 1000, occupantId: "BOB", messageId: "m2", replaces: "m1"))])
        guard case .corrected = edit[0] else { Issue.record("expected a correction, got \(edit)"); return }
        // Mallory took the nick "robert" later: the same nick, another occupant; no edit.
        let forged = try writer.commitBlocking([.message(roomMessage("hijacked", nick: "robert", at: 2000, occupantId: "MALLORY", messageId: "m3", replaces: "m1"))])
        guard case .inserted = forged[0] else { Issue.record("a correction from another occupant must not edit, got \(forged)"); return }
        let reader = try archive.reader()
        #expect(try reader.search(query: "fixed").count == 1)
        #expect(try reader.search(query: "hijacked").count == 1)
    }

    @Test func invitationsArePendingOnceUntilAnswered() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let invite = InvitationRecord(account: Fixture.account, room: room, inviter: "bob@example.org/phone", kind: .direct, reason: "come",
                                      fromContact: true, timestamp: Fixture.baseTime)
        #expect(try writer.commitBlocking([.invitation(invite)]) == [.stored])
        #expect(try writer.commitBlocking([.invitation(invite)]) == [.duplicate(existingId: nil)])
        let reader = try archive.reader()
        #expect(try reader.invitations(account: Fixture.account).count == 1)
        _ = try writer.commitBlocking([.invitationAnswered(account: Fixture.account, room: room, status: .declined, timestamp: Fixture.baseTime + 1)])
        #expect(try reader.invitations(account: Fixture.account).isEmpty)
        #expect(try reader.invitations(account: Fixture.account, all: true).first?.status == .declined)
        #expect(try writer.commitBlocking([.invitation(invite)]) == [.stored])
        // The same message seen again (a carbon, then the server archive's copy) is the same invitation, answered or not.
        var carried = invite
        carried.messageId = "inv-1"
        _ = try writer.commitBlocking([.invitationAnswered(account: Fixture.account, room: room, status: .declined, timestamp: Fixture.baseTime + 2)])
        #expect(try writer.commitBlocking([.invitation(carried)]) == [.stored])
        _ = try writer.commitBlocking([.invitationAnswered(account: Fixture.account, room: room, status: .declined, timestamp: Fixture.baseTime + 3)])
        #expect(try writer.commitBlocking([.invitation(carried)]) == [.duplicate(existingId: nil)])
        #expect(try reader.invitations(account: Fixture.account).isEmpty)
    }

    @Test func theRoomsMarkAndStateAndNoPassword() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        func update(_ change: RoomUpdate.Change) -> ArchiveEvent {
            .room(RoomUpdate(account: Fixture.account, room: room, change: change, timestamp: Fixture.baseTime))
        }
        _ = try writer.commitBlocking([
            update(.bookmark(present: true, name: "Lounge", nick: "me", autojoin: true, hasPassword: true)),
            update(.joinedByUser(passwordCommand: "pass show rooms/lounge")),
            update(.joined(nick: "me_", occupantID: "OWN", mam: true, nonAnonymous: false)),
            update(.mark(id: "R9", timestamp: Fixture.baseTime)),
            update(.subject("Topic", by: "bob")),
        ])
        let row = try #require(try archive.reader().rooms(account: Fixture.account).first)
        #expect(row.joined && row.nick == "me_" && row.bookmarked && row.autojoin && row.joinedByUser)
        #expect(row.catchUpId == "R9" && row.mam == true && row.occupantId == "OWN" && row.subject == "Topic")
        #expect(row.passwordSource == "command" && row.passwordCommand == "pass show rooms/lounge")
        _ = try writer.commitBlocking([update(.left(error: "kicked by a moderator")), update(.leftByUser)])
        let after = try #require(try archive.reader().rooms(account: Fixture.account).first)
        #expect(!after.joined && !after.joinedByUser && after.passwordCommand == nil && after.lastError == "kicked by a moderator")
    }

    @Test func theEchoOfAMessageRoostSentIsTheSameRow() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.message(roomMessage("hello all", nick: "me", direction: .outgoing, originId: "O1", messageId: "O1", delivery: .pending))])
        let echo = try writer.commitBlocking([.message(roomMessage("hello all", nick: "me", at: 50, stanzaId: "R1", occupantId: "OWN",
                                                            direction: .outgoing, originId: "O1", messageId: "O1"))])
        guard case .duplicate = echo[0] else { Issue.record("the echo must not add a row: \(echo)"); return }
        let archived = try writer.commitBlocking([.message(roomMessage("hello all", nick: "me", at: 50, stanzaId: "R1", occupantId: "OWN",
                                                                direction: .outgoing, originId: "O1", messageId: "O1", source: .mam))])
        guard case .duplicate = archived[0] else { Issue.record("the archive's copy must not add a row: \(archived)"); return }
        let rows = try archive.reader().search(query: "in:\(room)")
        #expect(rows.count == 1)
        #expect(try archive.reader().unconfirmedMessages(account: Fixture.account).isEmpty)
    }

    @Test func searchAndStatsOfARoom() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([
            .message(roomMessage("meeting at noon", nick: "bob", occupantId: "B")),
            .message(roomMessage("noon is fine", nick: "carol", at: 10, occupantId: "C")),
            .message(Fixture.message("noon elsewhere")),
        ])
        let reader = try archive.reader()
        #expect(try reader.search(query: "noon is:groupchat").count == 2)
        #expect(try reader.search(query: "noon in:lounge@conference.example.org").count == 2)
        #expect(try reader.search(query: "noon from:carol").count == 1)
        let stats = try reader.stats()
        let lounge = try #require(stats.conversations.first { $0.conversation == room })
        #expect(lounge.isRoom && lounge.senders == 2)
        #expect(stats.conversations.first { $0.conversation == Fixture.peer }?.isRoom == false)
    }
}
