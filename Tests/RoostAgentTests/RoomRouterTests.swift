import Foundation
import Testing
import RoostArchive
import RoostCore
@testable import RoostXMPP
@testable import RoostAgent

private func parse(_ s: String) -> Element {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
    for case .stanza(let e) in events { return e }
    fatalError("no stanza")
}

private func messages(_ outcome: StanzaRouter.Outcome) -> [MessageRecord] {
    outcome.events.compactMap { if case .message(let m) = $0 { m } else { nil } }
}

private func roomNotes(_ outcome: StanzaRouter.Outcome) -> [RoomNote] {
    outcome.notes.compactMap { if case .room(let n) = $0 { n } else { nil } }
}

/// Group chat routing: what is accepted from whom, the user's own messages, mentions, invitations, bookmarks,
/// occupants' presence, and the rooms' archive pages. Scripted stanzas, no server.
@Suite("Room router")
struct RoomRouterTests {
    let room = try! JID("lounge@conference.roost.test")
    let now: Int64 = 1_700_000_000_000
    var context: RoutingContext {
        var context = RoutingContext(account: try! JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
        context.rooms[room] = RoomRoute(room: room, nick: "Alice", mentionNames: ["Alice", "Al"], occupantID: "OWN",
                                        trustsStanzaIDs: true, joined: true, subject: "old subject")
        context.contacts = [try! JID("bob@roost.test")]
        return context
    }

    @Test func roomMessageWithTheRoomsStanzaIDAndOccupantID() throws {
        let out = StanzaRouter.route(parse("""
            <message from='lounge@conference.roost.test/bob' to='alice@roost.test/roost' type='groupchat' id='m1'><body>hello room</body>\
            <stanza-id xmlns='urn:xmpp:sid:0' id='R1' by='lounge@conference.roost.test'/><occupant-id xmlns='urn:xmpp:occupant-id:0' id='BOB'/></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.kind == .groupchat && m.direction == .incoming)
        #expect(m.conversation == "lounge@conference.roost.test")
        #expect(m.senderName == "bob")
        #expect(m.stanzaId == "R1" && m.stanzaIdBy == "lounge@conference.roost.test" && m.stanzaIdTrusted)
        #expect(m.occupantId == "BOB")
        #expect(out.notes == [.incomingMessage(eventIndex: 0)])
    }

    @Test func aRoomWithoutArchiveGivesNoTrustedIDs() throws {
        var context = self.context
        context.rooms[room]?.trustsStanzaIDs = false
        let out = StanzaRouter.route(parse("""
            <message from='lounge@conference.roost.test/bob' type='groupchat'><body>x</body>\
            <stanza-id xmlns='urn:xmpp:sid:0' id='R1' by='lounge@conference.roost.test'/></message>
            """), context: context, now: now)
        #expect(try #require(messages(out).first).stanzaIdTrusted == false)
    }

    @Test func groupchatFromSomeoneWhoIsNoRoomIsRefused() {
        // Mallory's server stamps his own JID: he cannot speak for the room, whatever he claims inside.
        let out = StanzaRouter.route(parse("""
            <message from='mallory@evil.example/x' type='groupchat'><body>forged</body><subject>forged subject</subject>\
            <stanza-id xmlns='urn:xmpp:sid:0' id='R9' by='lounge@conference.roost.test'/></message>
            """), context: context, now: now)
        #expect(out.events.isEmpty)
        #expect(out.rejected != nil)
        // Nor a room Roost is not in.
        let other = StanzaRouter.route(parse("<message from='other@conference.roost.test/bob' type='groupchat'><body>x</body></message>"),
                                       context: context, now: now)
        #expect(other.events.isEmpty && other.rejected != nil)
    }

    @Test func aRoomsStanzaIDOnAChatMessageMeansNothing() throws {
        let out = StanzaRouter.route(parse("""
            <message from='bob@roost.test/phone' type='chat'><body>x</body><stanza-id xmlns='urn:xmpp:sid:0' id='R1' by='lounge@conference.roost.test'/></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.stanzaId == nil && !m.stanzaIdTrusted)
    }

    @Test func groupchatInsideACarbonIsRefused() {
        let out = StanzaRouter.route(parse("""
            <message from='alice@roost.test' type='chat'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\
            <message xmlns='jabber:client' from='lounge@conference.roost.test/bob' to='alice@roost.test' type='groupchat'><body>copied</body></message>\
            </forwarded></received></message>
            """), context: context, now: now)
        #expect(out.events.isEmpty && out.rejected != nil)
    }

    @Test func theUsersOwnMessagesAreOutgoing() throws {
        // The same occupant id as Roost's: another client of the user, whatever its nick.
        let phone = StanzaRouter.route(parse("""
            <message from='lounge@conference.roost.test/alice-phone' type='groupchat'><body>from the phone</body>\
            <origin-id xmlns='urn:xmpp:sid:0' id='O1'/><occupant-id xmlns='urn:xmpp:occupant-id:0' id='OWN'/></message>
            """), context: context, now: now)
        let m = try #require(messages(phone).first)
        #expect(m.direction == .outgoing && m.originId == "O1")
        #expect(phone.notes.contains(.conversationRead(conversation: "lounge@conference.roost.test")))
        // Roost's nick but another occupant id: someone else took the nick.
        let impostor = StanzaRouter.route(parse("""
            <message from='lounge@conference.roost.test/Alice' type='groupchat'><body>not me</body><occupant-id xmlns='urn:xmpp:occupant-id:0' id='OTHER'/></message>
            """), context: context, now: now)
        #expect(try #require(messages(impostor).first).direction == .incoming)
        // A room without occupant ids: the nick decides.
        var bare = context
        bare.rooms[room]?.occupantID = nil
        let byNick = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/Alice' type='groupchat'><body>mine</body></message>"),
                                        context: bare, now: now)
        #expect(try #require(messages(byNick).first).direction == .outgoing)
    }

    @Test func mentionsAreWholeWordsOrReferences() {
        func mentions(_ body: String, reference: String? = nil) -> Bool {
            let ref = reference.map { "<reference xmlns='urn:xmpp:reference:0' type='mention' uri='\($0)'/>" } ?? ""
            let out = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/bob' type='groupchat'><body>\(body)</body>\(ref)</message>"),
                                         context: context, now: now)
            return out.notes.contains(.mention(eventIndex: 0))
        }
        #expect(mentions("alice: are you there?"))
        #expect(mentions("ask ALICE."))
        #expect(mentions("hi Al"))
        #expect(!mentions("Alicent is here"))
        #expect(!mentions("malice aforethought"))
        #expect(!mentions("nothing here"))
        #expect(mentions("look", reference: "xmpp:alice@roost.test"))
        #expect(mentions("look", reference: "xmpp:lounge@conference.roost.test/Alice"))
        #expect(!mentions("look", reference: "xmpp:bob@roost.test"))
    }

    @Test func theSubjectIsStoredWhenItChangesOnly() {
        let repeated = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/bob' type='groupchat'><subject>old subject</subject></message>"),
                                          context: context, now: now)
        #expect(repeated.events.isEmpty && roomNotes(repeated).isEmpty)
        let changed = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/bob' type='groupchat'><subject>new subject</subject></message>"),
                                         context: context, now: now)
        #expect(messages(changed).first?.subject == "new subject")
        #expect(roomNotes(changed) == [.subject(room: room, subject: "new subject", by: "bob")])
    }

    @Test func privateMessagesAreTheirOwnConversation() throws {
        let out = StanzaRouter.route(parse("""
            <message from='lounge@conference.roost.test/bob' type='chat'><body>psst</body><x xmlns='http://jabber.org/protocol/muc#user'/></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.conversation == "lounge@conference.roost.test/bob")
        #expect(m.kind == .chat && m.senderName == "bob")
    }

    /// Issue 28: the account's archive read before the rooms are joined (no route yet), and `roost verify` (never in a
    /// room) store a private message where the live copy went: the room is known, or the message says it is one.
    @Test func privateMessagesFromTheAccountsArchiveWithoutARoute() throws {
        var context = RoutingContext(account: try JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
        context.knownRooms = [room]
        func archived(_ inner: String, id: String) -> ArchivePage {
            ArchivePage(queryID: "Q1", results: [parse("<message xmlns='jabber:client' to='alice@roost.test/roost'><result xmlns='urn:xmpp:mam:2' "
                + "queryid='Q1' id='\(id)'><forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2023-11-01T10:00:00Z'/>"
                + inner + "</forwarded></result></message>")], fin: IQ(parse("<iq xmlns='jabber:client' type='result' id='i1'/>")),
                        acknowledgement: Acknowledgement(sequence: 1, generation: 0, streamID: nil, handledCount: nil))
        }
        func stored(_ page: ArchivePage, _ context: RoutingContext) -> [MessageRecord] {
            ArchivePageRouter.events(for: page, archive: try! JID("alice@roost.test"), context: context, now: now).events
                .compactMap { if case .message(let m) = $0 { m } else { nil } }
        }
        // The phone's answer (its client added no <x/>) in a room the account knows, and bob's message in it.
        let answer = stored(archived("<message xmlns='jabber:client' from='alice@roost.test/phone' to='lounge@conference.roost.test/bob' "
            + "type='chat' id='a1'><body>tell me</body></message>", id: "S1"), context)
        #expect(answer.map(\.conversation) == ["lounge@conference.roost.test/bob"] && answer.first?.direction == .outgoing)
        let psst = stored(archived("<message xmlns='jabber:client' from='lounge@conference.roost.test/bob' to='alice@roost.test/phone' "
            + "type='chat' id='p1'><body>psst</body><occupant-id xmlns='urn:xmpp:occupant-id:0' id='BOB'/></message>", id: "S2"), context)
        #expect(psst.map(\.conversation) == ["lounge@conference.roost.test/bob"])
        #expect(psst.first?.senderName == "bob" && psst.first?.occupantId == "BOB")
        // A room Roost never knew: the room's <x muc#user/> says it is a private message; without it, a contact's resource.
        let elsewhere = stored(archived("<message xmlns='jabber:client' from='other@conference.roost.test/carol' to='alice@roost.test/phone' "
            + "type='chat' id='p2'><body>hi</body><x xmlns='http://jabber.org/protocol/muc#user'/></message>", id: "S3"), context)
        #expect(elsewhere.map(\.conversation) == ["other@conference.roost.test/carol"])
        let contact = stored(archived("<message xmlns='jabber:client' from='bob@roost.test/phone' to='alice@roost.test/phone' "
            + "type='chat' id='c1'><body>hello</body></message>", id: "S4"), context)
        #expect(contact.map(\.conversation) == ["bob@roost.test"])
    }

    @Test func invitationsAreArchivedAndOnlyContactsCountAsContacts() throws {
        let direct = StanzaRouter.route(parse("""
            <message from='bob@roost.test/phone' type='normal'><x xmlns='jabber:x:conference' jid='party@conference.roost.test' reason='come'/></message>
            """), context: context, now: now)
        guard case .invitation(let record)? = direct.events.first else { Issue.record("no invitation"); return }
        #expect(record.room == "party@conference.roost.test" && record.fromContact && record.kind == .direct)
        let stranger = StanzaRouter.route(parse("""
            <message from='mallory@evil.example/x'><x xmlns='jabber:x:conference' jid='trap@conference.evil.example'/></message>
            """), context: context, now: now)
        #expect(roomNotes(stranger).contains { if case .invitation(_, let fromContact) = $0 { !fromContact } else { false } })
        // A mediated invitation names a contact on the room's word only.
        let mediated = StanzaRouter.route(parse("""
            <message from='trap@conference.evil.example'><x xmlns='http://jabber.org/protocol/muc#user'><invite from='bob@roost.test'/></x><body>join!</body></message>
            """), context: context, now: now)
        #expect(messages(mediated).isEmpty)
        guard case .invitation(let claimed)? = mediated.events.first else { Issue.record("no invitation"); return }
        #expect(claimed.kind == .mediated && !claimed.fromContact)
    }

    @Test func anInvitationInACarbonIsAnInvitation() {
        let out = StanzaRouter.route(parse("""
            <message from='alice@roost.test' type='normal'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>            <message xmlns='jabber:client' from='bob@roost.test/phone' to='alice@roost.test' type='normal'><body>bob invites you</body>            <x xmlns='jabber:x:conference' jid='party@conference.roost.test'/></message></forwarded></received></message>
            """), context: context, now: now)
        #expect(messages(out).isEmpty)
        #expect(out.events.contains { if case .invitation(let i) = $0 { i.room == "party@conference.roost.test" && i.fromContact } else { false } })
    }

    @Test func bookmarkEventsCountOnlyFromTheAccount() {
        let event = """
            <event xmlns='http://jabber.org/protocol/pubsub#event'><items node='urn:xmpp:bookmarks:1'>\
            <item id='party@conference.roost.test'><conference xmlns='urn:xmpp:bookmarks:1' autojoin='true' name='../../etc/passwd'><nick>A</nick></conference></item>\
            <retract id='old@conference.roost.test'/></items></event>
            """
        let own = StanzaRouter.route(parse("<message from='alice@roost.test'>\(event)</message>"), context: context, now: now)
        #expect(roomNotes(own) == [.bookmarks([
            .set(Bookmark(room: try! JID("party@conference.roost.test"), name: "../../etc/passwd", autojoin: true, nick: "A")),
            .removed(try! JID("old@conference.roost.test")),
        ])])
        let forged = StanzaRouter.route(parse("<message from='mallory@evil.example'>\(event)</message>"), context: context, now: now)
        #expect(roomNotes(forged).isEmpty && forged.rejected != nil)
    }

    @Test func occupantsPresenceAndRoostsOwn() throws {
        var joining = context
        joining.rooms[room]?.joined = false
        let initial = StanzaRouter.route(parse("""
            <presence from='lounge@conference.roost.test/bob'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='owner' role='moderator' jid='bob@roost.test/x'/></x></presence>
            """), context: joining, now: now)
        guard case .roomPresence(let bob)? = initial.events.first else { Issue.record("no room presence"); return }
        #expect(bob.initial && bob.realJid == "bob@roost.test" && bob.role == "moderator")
        let own = StanzaRouter.route(parse("""
            <presence from='lounge@conference.roost.test/Alice'><x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' role='participant'/>\
            <status code='110'/></x><occupant-id xmlns='urn:xmpp:occupant-id:0' id='OWN'/></presence>
            """), context: joining, now: now)
        #expect(roomNotes(own) == [.joined(room: room, nick: "Alice", occupantID: "OWN", statusCodes: [110])])
        let kicked = StanzaRouter.route(parse("""
            <presence from='lounge@conference.roost.test/Alice' type='unavailable'><x xmlns='http://jabber.org/protocol/muc#user'>\
            <item affiliation='none' role='none'><reason>spam</reason></item><status code='307'/><status code='110'/></x></presence>
            """), context: context, now: now)
        #expect(roomNotes(kicked) == [.left(room: room, nick: "Alice", statusCodes: [307, 110], reason: "spam", newNick: nil, destroyed: false)])
        let refused = StanzaRouter.route(parse("""
            <presence from='lounge@conference.roost.test/Alice' type='error'><error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>
            """), context: joining, now: now)
        guard case .joinFailed(_, let nick, let error)? = roomNotes(refused).first else { Issue.record("no join failure"); return }
        #expect(nick == "Alice" && error.condition == "conflict")
        // A room Roost is not in: nothing stored, not even as a contact's presence.
        let elsewhere = StanzaRouter.route(parse("<presence from='other@conference.roost.test/bob'><x xmlns='http://jabber.org/protocol/muc#user'/></presence>"),
                                           context: context, now: now)
        #expect(elsewhere.events.isEmpty)
    }

    // MARK: Times

    @Test func aRoomsDelayIsBelievedOnlyOnTheHistoryItWasAskedFor() throws {
        func live(_ delays: String, history: Bool) throws -> MessageRecord {
            var context = self.context
            context.rooms[room]?.history = history
            let out = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/bob' type='groupchat'><body>x</body>\(delays)</message>"),
                                         context: context, now: now)
            return try #require(messages(out).first)
        }
        let roomStamp = "<delay xmlns='urn:xmpp:delay' from='lounge@conference.roost.test' stamp='2023-11-01T00:00:00Z'/>"
        // Live traffic (the room keeps an archive and was asked for no history, or its history has ended): an
        // occupant wrote that stamp, naming the room; the receive time orders it, the claim is kept.
        let forged = try live(roomStamp, history: false)
        #expect(forged.timestamp == now)
        #expect(forged.claimedAt == 1_698_796_800_000)
        // A sender's own far-future stamp is a claim in either phase.
        let future = try live("<delay xmlns='urn:xmpp:delay' stamp='9999-12-31T23:59:59Z'/>", history: true)
        #expect(future.timestamp == now && future.claimedAt == Timestamp.parse("9999-12-31T23:59:59Z"))
        // The history the join asked for: the room's time.
        let replayed = try live(roomStamp, history: true)
        #expect(replayed.timestamp == 1_698_796_800_000 && replayed.claimedAt == nil)
        // Even the room cannot date history after the receipt, nor before 1990.
        let late = try live("<delay xmlns='urn:xmpp:delay' from='lounge@conference.roost.test' stamp='2023-11-20T00:00:00Z'/>", history: true)
        #expect(late.timestamp == now)
        let ancient = try live("<delay xmlns='urn:xmpp:delay' from='lounge@conference.roost.test' stamp='1969-12-31T23:59:59Z'/>", history: true)
        #expect(ancient.timestamp == now)
    }

    @Test func theSubjectEndsTheHistory() {
        var context = self.context
        context.rooms[room]?.history = true
        let repeated = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/bob' type='groupchat'><subject>old subject</subject></message>"),
                                          context: context, now: now)
        #expect(roomNotes(repeated) == [.historyEnded(room: room)])
        context.rooms[room]?.history = false
        let again = StanzaRouter.route(parse("<message from='lounge@conference.roost.test/bob' type='groupchat'><subject>old subject</subject></message>"),
                                       context: context, now: now)
        #expect(roomNotes(again).isEmpty)
    }

    // MARK: The room's archive

    private func page(_ results: [String], queryID: String = "Q1", last: String? = "R2") -> ArchivePage {
        var fin = "<iq xmlns='jabber:client' type='result' id='i1' from='lounge@conference.roost.test'><fin xmlns='urn:xmpp:mam:2' complete='true'>"
        fin += "<set xmlns='http://jabber.org/protocol/rsm'>" + (last.map { "<last>\($0)</last>" } ?? "") + "</set></fin></iq>"
        return ArchivePage(queryID: queryID, results: results.map(parse), fin: IQ(parse(fin)),
                           acknowledgement: Acknowledgement(sequence: 1, generation: 0, streamID: nil, handledCount: nil))
    }

    private func result(from: String?, queryID: String = "Q1", id: String, inner: String) -> String {
        "<message xmlns='jabber:client' \(from.map { "from='\($0)'" } ?? "") to='alice@roost.test/roost'><result xmlns='urn:xmpp:mam:2' queryid='\(queryID)' id='\(id)'>"
            + "<forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2023-11-01T10:00:00Z'/>\(inner)</forwarded></result></message>"
    }

    @Test func roomArchiveResultsOnlyFromTheRoomAndTheQuery() throws {
        let good = "<message xmlns='jabber:client' from='lounge@conference.roost.test/bob' type='groupchat'><body>archived alice!</body></message>"
        let routed = ArchivePageRouter.events(for: page([
            result(from: "lounge@conference.roost.test", id: "R1", inner: good),
            result(from: "mallory@evil.example", id: "F1", inner: good),
            result(from: nil, id: "F2", inner: good),
            result(from: "lounge@conference.roost.test", queryID: "OTHER", id: "F3", inner: good),
            result(from: "lounge@conference.roost.test", id: "F4",
                   inner: "<message xmlns='jabber:client' from='other@conference.roost.test/x' type='groupchat'><body>elsewhere</body></message>"),
        ]), archive: room, context: context, now: now)
        #expect(routed.rejected == 4)
        let stored = routed.events.compactMap { if case .message(let m) = $0 { m } else { nil } }
        #expect(stored.count == 1)
        #expect(stored.first?.stanzaId == "R1" && stored.first?.stanzaIdBy == "lounge@conference.roost.test" && stored.first?.stanzaIdTrusted == true)
        #expect(stored.first?.timestamp == 1_698_832_800_000)
        #expect(routed.mentions == [0])
        #expect(routed.events.contains { if case .room(let u) = $0, case .mark(id: "R2", _) = u.change { true } else { false } })
        #expect(!routed.events.contains { if case .syncState = $0 { true } else { false } })
    }

    @Test func theRoomsArchiveTimeWinsOverStampsInsideTheMessage() throws {
        // An occupant wrote delays into the message, one naming the room: the archive's <forwarded/> time orders it.
        let inner = "<message xmlns='jabber:client' from='lounge@conference.roost.test/bob' type='groupchat'><body>old</body>"
            + "<delay xmlns='urn:xmpp:delay' from='lounge@conference.roost.test' stamp='2001-01-01T00:00:00Z'/></message>"
        var history = context
        history.rooms[room]?.history = true
        let routed = ArchivePageRouter.events(for: page([result(from: "lounge@conference.roost.test", id: "R1", inner: inner)]),
                                              archive: room, context: history, now: now)
        let m = try #require(routed.events.compactMap { if case .message(let m) = $0 { m } else { nil } }.first)
        #expect(m.timestamp == 1_698_832_800_000)
        #expect(m.claimedAt == Timestamp.parse("2001-01-01T00:00:00Z"))
    }

    @Test func aPageOfARoomRoostLeftStoresNothingAndKeepsTheMark() {
        var left = context
        left.rooms = [:]
        let routed = ArchivePageRouter.events(for: page([result(from: "lounge@conference.roost.test", id: "R1",
            inner: "<message xmlns='jabber:client' from='lounge@conference.roost.test/bob' type='groupchat'><body>x</body></message>")]),
            archive: room, context: left, now: now)
        #expect(routed.roomGone && routed.events.isEmpty)
    }

    @Test func invitationsInTheAccountsArchive() {
        let routed = ArchivePageRouter.events(for: page([result(from: nil, id: "A1",
            inner: "<message xmlns='jabber:client' from='bob@roost.test/phone' to='alice@roost.test'><x xmlns='jabber:x:conference' jid='party@conference.roost.test'/></message>")],
            last: "A1"), archive: try! JID("alice@roost.test"), context: context, now: now)
        #expect(routed.rejected == 0)
        #expect(routed.events.contains { if case .invitation(let i) = $0 { i.room == "party@conference.roost.test" && i.fromContact } else { false } })
        #expect(routed.invitations.count == 1)
    }
}
