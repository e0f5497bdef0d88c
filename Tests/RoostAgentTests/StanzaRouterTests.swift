import Foundation
import Testing
import RoostArchive
import RoostCore
import RoostXMPP
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

@Suite("Stanza router")
struct StanzaRouterTests {
    let context = RoutingContext(account: try! JID("alice@roost.test"), trustsOwnStanzaIDs: true,
                                 displayNames: [try! JID("bob@roost.test"): "Bob"])
    let now: Int64 = 1_700_000_000_000

    @Test func incomingChatWithStateAndTrustedStanzaID() throws {
        let out = StanzaRouter.route(parse("""
            <message from='bob@roost.test/phone' to='alice@roost.test/roost' type='chat' id='m1'><body>hi 你好</body>\
            <active xmlns='http://jabber.org/protocol/chatstates'/><stanza-id xmlns='urn:xmpp:sid:0' id='S1' by='alice@roost.test'/></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.direction == .incoming)
        #expect(m.conversation == "bob@roost.test")
        #expect(m.senderName == "Bob")
        #expect(m.stanzaId == "S1" && m.stanzaIdTrusted)
        #expect(m.timestamp == now)
        #expect(out.events.contains { if case .chatState(let s) = $0 { s.state == .active } else { false } })
    }

    @Test func stanzaIDFromAnotherEntityIsNotTrusted() throws {
        let out = StanzaRouter.route(parse("""
            <message from='bob@roost.test/phone' type='chat'><body>x</body><stanza-id xmlns='urn:xmpp:sid:0' id='FAKE' by='bob@roost.test'/></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.stanzaId == nil)
        #expect(!m.stanzaIdTrusted)
    }

    @Test func standaloneChatStateIsArchivedWithoutMessage() {
        let out = StanzaRouter.route(parse("<message from='bob@roost.test/phone' type='chat'><composing xmlns='http://jabber.org/protocol/chatstates'/></message>"),
                                     context: context, now: now)
        #expect(messages(out).isEmpty)
        #expect(out.events.count == 1)
    }

    @Test func senderDelayIsOnlyAClaim() throws {
        // A <delay/> the sender wrote: the receive time orders the message, the claim is kept beside it.
        for stamp in ["2023-11-01T00:00:00.250Z", "9999-12-31T23:59:59Z", "2001-01-01T00:00:00Z", "0000-01-01T00:00:00Z"] {
            for from in ["", " from='bob@roost.test/x'", " from='evil.example'"] {
                let out = StanzaRouter.route(parse("<message from='bob@roost.test/x' type='chat'><body>old</body><delay xmlns='urn:xmpp:delay'\(from) stamp='\(stamp)'/></message>"),
                                             context: context, now: now)
                let m = try #require(messages(out).first)
                #expect(m.timestamp == now, "\(stamp)\(from)")
                #expect(m.claimedAt == Timestamp.parse(stamp), "\(stamp)\(from)")
                #expect(m.receivedAt == now)
            }
        }
    }

    @Test func offlineStorageStampOfTheOwnServerIsTheTimeWhileOfflineMessagesArrive() throws {
        var delivering = context
        delivering.offlineDeliveryUntil = now + 30_000
        // Prosody and ejabberd stamp from the domain; some servers from the account's bare JID.
        for from in ["roost.test", "alice@roost.test"] {
            let out = StanzaRouter.route(parse("<message from='bob@roost.test/x' type='chat'><body>kept</body><delay xmlns='urn:xmpp:delay' from='\(from)' stamp='2023-11-01T00:00:00.250Z'/></message>"),
                                         context: delivering, now: now)
            let m = try #require(messages(out).first)
            #expect(m.timestamp == Timestamp.parse("2023-11-01T00:00:00.250Z"), "\(from)")
            #expect(m.claimedAt == nil)
        }
        // Outside that window the same stamp may be anyone's: a claim.
        let later = StanzaRouter.route(parse("<message from='bob@roost.test/x' type='chat'><body>kept</body><delay xmlns='urn:xmpp:delay' from='roost.test' stamp='2023-11-01T00:00:00.250Z'/></message>"),
                                       context: context, now: now)
        #expect(messages(later).first?.timestamp == now)
        #expect(messages(later).first?.claimedAt == Timestamp.parse("2023-11-01T00:00:00.250Z"))
    }

    @Test func implausibleServerStampsAreNotBelieved() throws {
        var delivering = context
        delivering.offlineDeliveryUntil = now + 30_000
        // Before 1990, in the far future, or later than the receipt: never the message's time.
        let cases: [(String, Int64)] = [("1969-12-31T23:59:59Z", now), ("0000-01-01T00:00:00Z", now), ("9999-12-31T23:59:59Z", now),
                                        ("2023-11-14T23:00:00Z", now)]
        for (stamp, expected) in cases {
            let out = StanzaRouter.route(parse("<message from='bob@roost.test/x' type='chat'><body>x</body><delay xmlns='urn:xmpp:delay' from='roost.test' stamp='\(stamp)'/></message>"),
                                         context: delivering, now: now)
            #expect(messages(out).first?.timestamp == expected, "\(stamp)")
        }
    }

    @Test func archiveTimeWinsOverTheSendersOwnDelay() throws {
        // A server archive result: the <forwarded/> wrapper's delay is the time, the inner one only a claim.
        let element = parse("""
            <message to='alice@roost.test/roost'><result xmlns='urn:xmpp:mam:2' queryid='q1' id='A1'><forwarded xmlns='urn:xmpp:forward:0'>\
            <delay xmlns='urn:xmpp:delay' stamp='2023-10-01T10:00:00Z'/><message xmlns='jabber:client' from='bob@roost.test/x' type='chat'>\
            <body>old</body><delay xmlns='urn:xmpp:delay' from='roost.test' stamp='9999-12-31T23:59:59Z'/></message></forwarded></result></message>
            """)
        // As ArchivePageRouter reads a page.
        let result = try #require(MAM.result(in: Message(element), archive: context.account))
        let events = StanzaRouter.records(for: result.message, direction: .incoming, source: .mam, context: context, now: now,
                                          stanzaIDSource: result.message, archiveID: result.archiveID, stamp: result.stamp)
        let m = try #require(events.compactMap { if case .message(let m) = $0 { m } else { nil } }.first)
        #expect(m.timestamp == Timestamp.parse("2023-10-01T10:00:00Z"))
        #expect(m.claimedAt == Timestamp.parse("9999-12-31T23:59:59Z"))
    }

    @Test func carbonWrapperTimeIsTheServers() throws {
        let out = StanzaRouter.route(parse("""
            <message from='alice@roost.test' to='alice@roost.test/roost'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\
            <delay xmlns='urn:xmpp:delay' stamp='2023-11-14T22:00:00Z'/><message xmlns='jabber:client' from='bob@roost.test/x' to='alice@roost.test' type='chat'>\
            <body>c</body><delay xmlns='urn:xmpp:delay' stamp='2001-01-01T00:00:00Z'/></message></forwarded></received></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.timestamp == Timestamp.parse("2023-11-14T22:00:00Z"))
        #expect(m.claimedAt == Timestamp.parse("2001-01-01T00:00:00Z"))
    }

    @Test func sentCarbonIsOutgoingInThePeersConversation() throws {
        let out = StanzaRouter.route(parse("""
            <message from='alice@roost.test' to='alice@roost.test/roost' type='chat'><sent xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\
            <message xmlns='jabber:client' from='alice@roost.test/phone' to='bob@roost.test' type='chat' id='x1'><body>from phone</body>\
            <origin-id xmlns='urn:xmpp:sid:0' id='O1'/></message></forwarded></sent>\
            <stanza-id xmlns='urn:xmpp:sid:0' id='S9' by='alice@roost.test'/></message>
            """), context: context, now: now)
        let m = try #require(messages(out).first)
        #expect(m.direction == .outgoing)
        #expect(m.conversation == "bob@roost.test")
        #expect(m.isCarbon && m.source == .carbon)
        #expect(m.originId == "O1")
    }

    @Test func forgedCarbonFromAContactIsDropped() {
        let out = StanzaRouter.route(parse("""
            <message from='mallory@roost.test/x' type='chat'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\
            <message xmlns='jabber:client' from='bob@roost.test/x' to='alice@roost.test'><body>forged</body></message></forwarded></received></message>
            """), context: context, now: now)
        #expect(out.events.isEmpty)
        #expect(out.rejected != nil)
    }

    @Test func spoofedRosterPushIsRefusedAndNotArchived() {
        let out = StanzaRouter.route(parse("<iq type='set' id='p' from='mallory@roost.test/x'><query xmlns='jabber:iq:roster'><item jid='mallory@roost.test' name='Trusted'/></query></iq>"),
                                     context: context, now: now)
        #expect(out.events.isEmpty)
        #expect(out.rosterChanges.isEmpty)
        #expect(out.replies.first?[attribute: "type"] == "error")
    }

    @Test func legitimateRosterPushIsArchivedAndAnswered() {
        let out = StanzaRouter.route(parse("<iq type='set' id='p'><query xmlns='jabber:iq:roster'><item jid='carol@roost.test' name='Carol' subscription='both'><group>Work</group></item></query></iq>"),
                                     context: context, now: now)
        #expect(out.replies.first?[attribute: "type"] == "result")
        #expect(out.rosterChanges.first?.name == "Carol")
        #expect(out.events.count == 1)
    }

    @Test func presenceAndSubscriptionsAreLogged() {
        let away = StanzaRouter.route(parse("<presence from='bob@roost.test/phone'><show>away</show><status>lunch</status><priority>5</priority></presence>"),
                                      context: context, now: now)
        guard case .presence(let p) = away.events.first else { Issue.record("no presence"); return }
        #expect(p.show == "away" && p.status == "lunch" && p.priority == 5 && p.resource == "phone")
        let request = StanzaRouter.route(parse("<presence from='dave@roost.test' type='subscribe'><status>hi, it's Dave</status></presence>"),
                                         context: context, now: now)
        guard case .subscription(let s) = request.events.first else { Issue.record("no subscription"); return }
        #expect(s.kind == .subscribe && s.direction == .incoming && s.message == "hi, it's Dave")
    }

    /// Roost's own presence (the server reflects it; another client holding the same resource comes and goes under
    /// the same full JID) is not recorded; the user's other clients are.
    @Test func ownResourcePresenceIsNotRecorded() {
        var context = self.context
        context.ownResource = "roost"
        for type in ["", " type='unavailable'"] {
            let own = StanzaRouter.route(parse("<presence from='alice@roost.test/roost'\(type)/>"), context: context, now: now)
            #expect(own.events.isEmpty && own.notes.isEmpty, "\(own.events)")
        }
        let phone = StanzaRouter.route(parse("<presence from='alice@roost.test/phone' type='unavailable'/>"), context: context, now: now)
        guard case .presence(let p) = phone.events.first else { Issue.record("no presence of the user's phone"); return }
        #expect(p.resource == "phone" && p.availability == .unavailable)
    }

    @Test func correctionCarriesTheReplacedID() throws {
        let out = StanzaRouter.route(parse("<message from='bob@roost.test/x' type='chat' id='m2'><body>fixed</body><replace xmlns='urn:xmpp:message-correct:0' id='m1'/></message>"),
                                     context: context, now: now)
        #expect(try #require(messages(out).first).replaces == "m1")
    }

    @Test func unsolicitedArchiveResultsAreDropped() {
        let out = StanzaRouter.route(parse("<message from='alice@roost.test'><result xmlns='urn:xmpp:mam:2' queryid='nope' id='A'><forwarded xmlns='urn:xmpp:forward:0'><message xmlns='jabber:client' from='bob@roost.test/x' type='chat'><body>injected</body></message></forwarded></result></message>"),
                                     context: context, now: now)
        #expect(out.events.isEmpty)
    }
}

/// The router with a scripted decryptor (the capability the OMEMO service provides): what is archived for an
/// `<encrypted/>` message, and that the fallback body never is.
@Suite("Stanza router: encrypted messages")
struct StanzaRouterEncryptionTests {
    let now: Int64 = 1_700_000_000_000
    let encrypted = """
        <message from='bob@roost.test/phone' to='alice@roost.test/roost' type='chat' id='e1'>\
        <body>I sent you an OMEMO encrypted message but your client doesn't seem to support that.</body>\
        <encrypted xmlns='eu.siacs.conversations.axolotl'><header sid='7'><key rid='9'>AAEC</key><iv>AAAAAAAAAAAAAAAA</iv></header>\
        <payload>AAE=</payload></encrypted><stanza-id xmlns='urn:xmpp:sid:0' id='S9' by='alice@roost.test'/></message>
        """

    func route(_ outcome: StanzaRouter.DecryptionOutcome, seen: InputBox = InputBox()) -> StanzaRouter.Outcome {
        var context = RoutingContext(account: try! JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
        context.decryptor = { input in
            seen.set(input)
            return outcome
        }
        return StanzaRouter.route(parse(encrypted), context: context, now: now)
    }

    final class InputBox: @unchecked Sendable {
        private(set) var input: StanzaRouter.EncryptedInput?
        func set(_ value: StanzaRouter.EncryptedInput) { input = value }
    }

    @Test func decryptedBodyIsArchivedWithItsEncryption() throws {
        let how = MessageEncryption(protocolNamespace: "eu.siacs.conversations.axolotl", senderDevice: 7, fingerprint: "ab", trust: "blind")
        let seen = InputBox()
        let out = route(.decrypted(body: "the secret", how), seen: seen)
        let m = try #require(messages(out).first)
        #expect(m.body == "the secret")
        #expect(m.encryption == how)
        #expect(out.notes == [.incomingMessage(eventIndex: 0)])
        // The decryptor got the trusted stanza-id, so it can recognise an archived copy before decrypting.
        #expect(seen.input?.stanzaID == "S9")
        #expect(seen.input?.sender.description == "bob@roost.test/phone")
    }

    @Test func undecryptableIsArchivedWithoutTheFallbackBody() throws {
        let how = MessageEncryption(protocolNamespace: "eu.siacs.conversations.axolotl", senderDevice: 7, failure: "not encrypted for this device")
        let out = route(.undecryptable(how))
        let m = try #require(messages(out).first)
        #expect(m.body == nil)
        #expect(m.encryption?.failure == "not encrypted for this device")
        #expect(m.rawStanza?.contains("<payload>AAE=</payload>") == true)
        #expect(out.notes == [.incomingMessage(eventIndex: 0)])
    }

    @Test func keyTransportAndCopiesAreNotArchived() {
        #expect(messages(route(.skip("key transport"))).isEmpty)
        // Without OMEMO (omemo = off) the message is archived as it came.
        let context = RoutingContext(account: try! JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
        let plain = messages(StanzaRouter.route(parse(encrypted), context: context, now: now))
        #expect(plain.first?.encryption == nil && plain.first?.body?.hasPrefix("I sent you") == true)
    }
}
