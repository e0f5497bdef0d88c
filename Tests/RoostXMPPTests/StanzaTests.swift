import Foundation
import Testing
@testable import RoostXMPP
@testable import RoostCore

private func parse(_ s: String) -> Element {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
    for case .stanza(let e) in events { return e }
    fatalError("no stanza")
}

@Suite("JID")
struct JIDTests {
    @Test func normalisesLocalpartAndDomainButNotResource() throws {
        let jid = try JID("Alice@Example.ORG./Phone")
        #expect(jid.description == "alice@example.org/Phone")
        #expect(jid.bare.description == "alice@example.org")
    }

    @Test func resourceMayContainSlashesAndAt() throws {
        let jid = try JID("a@b/c/d@e")
        #expect(jid.resource == "c/d@e")
    }

    @Test(arguments: ["", "@example.org", "a@", "a@b/", "a b@c", "a\"b@c"])
    func rejectsInvalid(_ s: String) {
        #expect(throws: JID.ParseError.self) { try JID(s) }
    }

    /// All-ASCII addresses take a byte-level path (no Foundation normalisation); it must accept, fold and
    /// refuse exactly as the Unicode path does, which gives every refusal its message.
    @Test func asciiAndUnicodePathsAgree() throws {
        #expect(try JID("BOB@Roost.TEST/Flood-1").description == "bob@roost.test/Flood-1")
        #expect(try JID("Ålice@Example.ORG/Phone").description == "ålice@example.org/Phone")
        #expect(try JID("a@exa_mple-1.org./ spaced ").description == "a@exa_mple-1.org/ spaced ")
        #expect(try JID("a@[::1]/r").description == "a@[::1]/r")
        #expect(try JID("Example.ORG").description == "example.org")
        let refused: [(String, JID.ParseError)] = [
            ("a@b..c", .invalidDomain("has an empty label (two dots in a row, or only a dot)")),
            ("a@" + String(repeating: "x", count: 64), .invalidDomain("has a label longer than 63 bytes")),
            ("a@exa!mple", .forbiddenCharacter("!", part: "domain")),
            ("a\u{7F}@b", .forbiddenCharacter("\u{7F}", part: "localpart")),
            ("a:b@c", .forbiddenCharacter(":", part: "localpart")),
            ("a@b/x\ty", .forbiddenCharacter("\t", part: "resource")),
            ("a@.", .emptyPart("domain")),
        ]
        for (address, problem) in refused {
            #expect(throws: problem) { try JID(address) }
        }
    }
}

extension JIDTests {
    /// An all-ASCII address is split on its bytes; the split must be the general one (at the first `/`, then at
    /// the first `@` before it, by characters) for every arrangement of separators, whatever the parts then say.
    @Test(arguments: ["a@b/c", "a@b@c/d@e", "a/b@c", "@b", "a@", "a@b/", "/r", "a@b/c/d", "b/c@d", "a@b.c./r@s/t", "A@B/C",
                      "a@b\r\n/c", "a\r\n@b", "x", "a@b/ r ", "a b@c", "a@b_c-1.d/é"])
    func asciiSplitIsTheGeneralSplit(_ address: String) {
        let general = Result { () throws(JIDSyntax.Problem) in try JIDSyntax.generalParse(address) }
        let parsed = Result { () throws(JIDSyntax.Problem) in try JIDSyntax.parse(address) }
        #expect(parsed == general)
    }
}

@Suite("Stanzas and extensions")
struct StanzaTests {
    let account = try! JID("alice@example.org")

    @Test func messageFields() {
        let m = Message(parse("<message from='bob@example.org/x' type='chat' id='m1'><body>hi</body><body xml:lang='de'>hallo</body><thread>t1</thread><composing xmlns='http://jabber.org/protocol/chatstates'/><delay xmlns='urn:xmpp:delay' stamp='2026-01-02T03:04:05.678Z'/><stanza-id xmlns='urn:xmpp:sid:0' id='S1' by='alice@example.org'/><origin-id xmlns='urn:xmpp:sid:0' id='O1'/><replace xmlns='urn:xmpp:message-correct:0' id='m0'/></message>"))
        #expect(m.body == "hi")
        #expect(m.type == .chat)
        #expect(m.thread == "t1")
        #expect(m.chatState == .composing)
        #expect(m.stanzaIDs.id(by: account) == "S1")
        #expect(m.stanzaIDs.originID == "O1")
        #expect(m.replacesID == "m0")
        #expect(Delay.milliseconds(of: m.element).map(XMPPDateTime.format(milliseconds:)) == "2026-01-02T03:04:05.678Z")
    }

    @Test func dateTimeWithOffset() {
        #expect(XMPPDateTime.format(XMPPDateTime.parse("2026-01-02T05:04:05+02:00")!) == "2026-01-02T03:04:05.000Z")
        #expect(XMPPDateTime.parse("2026-13-02T05:04:05Z") == nil)
        #expect(XMPPDateTime.parse("garbage") == nil)
    }

    @Test func genuineCarbonIsUnwrapped() throws {
        let m = Message(parse("<message from='alice@example.org' to='alice@example.org/roost' type='chat'><sent xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'><message xmlns='jabber:client' from='alice@example.org/phone' to='bob@example.org' type='chat'><body>out</body></message></forwarded></sent></message>"))
        let carbon = try #require(Carbons.unwrap(m, account: account))
        #expect(carbon.direction == .sent)
        #expect(carbon.inner.body == "out")
    }

    @Test func forgedCarbonsAreRejected() {
        let forged = Message(parse("<message from='mallory@example.org/x' type='chat'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'><message xmlns='jabber:client' from='bob@example.org/x' to='alice@example.org'><body>fake</body></message></forwarded></received></message>"))
        #expect(Carbons.unwrap(forged, account: account) == nil)
        #expect(Carbons.claimsToBeCarbon(forged))
        let groupchat = Message(parse("<message from='alice@example.org' type='groupchat'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'><message xmlns='jabber:client'><body>x</body></message></forwarded></received></message>"))
        #expect(Carbons.unwrap(groupchat, account: account) == nil)
        let empty = Message(parse("<message from='alice@example.org'><received xmlns='urn:xmpp:carbons:2'/></message>"))
        #expect(Carbons.unwrap(empty, account: account) == nil)
    }

    @Test func rosterPushLegitimacy() {
        let fromServer = IQ(parse("<iq type='set' id='p1'><query xmlns='jabber:iq:roster'><item jid='bob@example.org' subscription='both' name='Bob'><group>Friends</group></item></query></iq>"))
        #expect(Roster.isLegitimatePush(fromServer, account: account))
        #expect(Roster.items(in: fromServer) == [RosterItem(jid: try! JID("bob@example.org"), name: "Bob", subscription: .both, groups: ["Friends"])])
        let spoofed = IQ(parse("<iq type='set' id='p2' from='mallory@example.org/x'><query xmlns='jabber:iq:roster'><item jid='mallory@example.org' subscription='both'/></query></iq>"))
        #expect(!Roster.isLegitimatePush(spoofed, account: account))
        let own = IQ(parse("<iq type='set' id='p3' from='alice@example.org'><query xmlns='jabber:iq:roster'><item jid='c@example.org'/></query></iq>"))
        #expect(Roster.isLegitimatePush(own, account: account))
    }

    @Test func mamResultsOnlyFromOwnArchive() {
        let good = Message(parse("<message to='alice@example.org/roost'><result xmlns='urn:xmpp:mam:2' queryid='q1' id='A1'><forwarded xmlns='urn:xmpp:forward:0'><delay xmlns='urn:xmpp:delay' stamp='2026-01-01T00:00:00Z'/><message xmlns='jabber:client' from='bob@example.org/x' type='chat'><body>old</body></message></forwarded></result></message>"))
        #expect(MAM.result(in: good, archive: account)?.archiveID == "A1")
        let bad = Message(parse("<message from='bob@example.org' to='alice@example.org/roost'><result xmlns='urn:xmpp:mam:2' queryid='q1' id='A1'><forwarded xmlns='urn:xmpp:forward:0'><message xmlns='jabber:client'><body>x</body></message></forwarded></result></message>"))
        #expect(MAM.result(in: bad, archive: account) == nil)
    }

    @Test func capsVerificationStringFollowsXEP0115Example() {
        // XEP-0115 §5.2 example: the verification string and its SHA-1.
        let info = DiscoInfo(identities: [.init(category: "client", type: "pc", name: "Exodus 0.9.1")],
                             features: ["http://jabber.org/protocol/caps", "http://jabber.org/protocol/disco#info",
                                        "http://jabber.org/protocol/disco#items", "http://jabber.org/protocol/muc"])
        #expect(EntityCapabilities.hash(for: info) == "QgayPKawpkPSDYmwT/WM94uAlu0=")
    }

    @Test func vcardRoundTrip() throws {
        let card = VCard(fullName: "Alice Example", nickname: "alice", photo: .init(mimeType: "image/png", data: Data([1, 2, 3])))
        let parsed = VCard(parse(XMLSerializer.serialize(card.element)))
        #expect(parsed == card)
    }
}
