import Foundation
import Testing
import RoostArchive
import RoostXMPP
@testable import RoostAgent

private func parse(_ s: String) -> Element {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
    for case .stanza(let e) in events { return e }
    fatalError("no stanza")
}

private func annotations(_ outcome: StanzaRouter.Outcome) -> [MessageAnnotation] {
    outcome.events.compactMap { if case .annotation(let a) = $0 { a } else { nil } }
}

private func messages(_ outcome: StanzaRouter.Outcome) -> [MessageRecord] {
    outcome.events.compactMap { if case .message(let m) = $0 { m } else { nil } }
}

/// The stanza shapes of reactions, replies, retractions (0 and 1), moderation (0 and 1), receipts and markers, as
/// the router turns them into archive events.
@Suite("Stanza router: message semantics")
struct MessageSemanticsRoutingTests {
    let context = RoutingContext(account: try! JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
    let now: Int64 = 1_700_000_000_000

    func route(_ xml: String, context: RoutingContext? = nil) -> StanzaRouter.Outcome {
        StanzaRouter.route(parse(xml), context: context ?? self.context, now: now)
    }

    @Test func aReactionIsNoMessageAndKeepsOnlyEmoji() throws {
        let out = route("""
            <message from='bob@roost.test/phone' type='chat' id='r1'><body>👍</body><reactions xmlns='urn:xmpp:reactions:0' id='m1'>\
            <reaction>👍</reaction><reaction>👍</reaction><reaction>not an emoji</reaction><reaction>👨‍👩‍👧</reaction></reactions>\
            <store xmlns='urn:xmpp:hints'/></message>
            """)
        #expect(messages(out).isEmpty)
        let reaction = try #require(annotations(out).first)
        #expect(reaction.kind == .reactions(["👍", "👨‍👩‍👧"]))
        #expect(reaction.target == "m1" && reaction.conversation == "bob@roost.test" && reaction.direction == .incoming)
    }

    @Test func aReplyLosesItsFallbackQuote() throws {
        for namespace in ["urn:xmpp:fallback:0", "urn:xmpp:feature-fallback:0"] {
            let forAttribute = namespace == "urn:xmpp:fallback:0" ? " for='urn:xmpp:reply:0'" : ""
            let out = route("""
                <message from='bob@roost.test/phone' type='chat' id='m2'><body>&gt; Ünïcode quote\nmy answer</body>\
                <reply xmlns='urn:xmpp:reply:0' to='alice@roost.test/phone' id='m1'/>\
                <fallback xmlns='\(namespace)'\(forAttribute)><body start='0' end='16'/></fallback></message>
                """)
            let reply = try #require(messages(out).first)
            #expect(reply.body == "my answer", "\(namespace)")
            #expect(reply.replyTo == "m1" && reply.replyToJid == "alice@roost.test/phone")
            #expect(reply.rawStanza?.contains("Ünïcode quote") == true, "the raw stanza keeps it")
        }
        // A range outside the body leaves it as it came.
        let odd = route("""
            <message from='bob@roost.test/phone' type='chat'><body>short</body><reply xmlns='urn:xmpp:reply:0' id='m1'/>\
            <fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'><body start='0' end='99'/></fallback></message>
            """)
        #expect(messages(odd).first?.body == "short")
    }

    @Test func retractionsOfBothVersions() throws {
        let legacy = route("""
            <message from='bob@roost.test/phone' type='chat'><body>This person attempted to retract</body>\
            <apply-to xmlns='urn:xmpp:fasten:0' id='m1'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>\
            <fallback xmlns='urn:xmpp:fallback:0'/></message>
            """)
        #expect(messages(legacy).isEmpty)
        #expect(annotations(legacy).map(\.kind) == [.retraction] && annotations(legacy).first?.target == "m1")
        let current = route("""
            <message from='bob@roost.test/phone' type='chat'><retract xmlns='urn:xmpp:message-retract:1' id='m2'/></message>
            """)
        #expect(annotations(current).map(\.target) == ["m2"])
    }

    @Test func theUsersMarkerFromAnotherClientIsOutgoing() throws {
        let out = route("""
            <message from='alice@roost.test' to='alice@roost.test/roost' type='chat'><sent xmlns='urn:xmpp:carbons:2'>\
            <forwarded xmlns='urn:xmpp:forward:0'><message xmlns='jabber:client' from='alice@roost.test/phone' to='bob@roost.test' type='chat'>\
            <displayed xmlns='urn:xmpp:chat-markers:0' id='m9'/></message></forwarded></sent></message>
            """)
        let marker = try #require(annotations(out).first)
        #expect(marker.kind == .displayed && marker.direction == .outgoing && marker.conversation == "bob@roost.test")
        #expect(out.notes.contains { if case .conversationRead("bob@roost.test") = $0 { true } else { false } },
                "the notification of that conversation closes")
        let receipt = route("<message from='bob@roost.test/phone' type='chat'><received xmlns='urn:xmpp:receipts' id='o1'/></message>")
        #expect(annotations(receipt).map(\.kind) == [.received])
    }

    @Test func moderationCountsOnlyFromARoom() throws {
        var roomContext = context
        let room = try JID("lounge@conference.roost.test")
        roomContext.rooms[room] = RoomRoute(room: room, nick: "alice", mentionNames: ["alice"], occupantID: "me", trustsStanzaIDs: true)
        let out = route("""
            <message from='lounge@conference.roost.test' type='groupchat'><body>removed</body>\
            <retract xmlns='urn:xmpp:message-retract:1' id='s1'><moderated xmlns='urn:xmpp:message-moderate:1' by='lounge@conference.roost.test/mod'/>\
            <reason>spam</reason></retract></message>
            """, context: roomContext)
        #expect(messages(out).isEmpty)
        #expect(annotations(out).first?.kind == .moderation(moderator: "lounge@conference.roost.test/mod", reason: "spam"))
        let legacy = route("""
            <message from='lounge@conference.roost.test' type='groupchat'><apply-to xmlns='urn:xmpp:fasten:0' id='s2'>\
            <moderated xmlns='urn:xmpp:message-moderate:0' by='lounge@conference.roost.test/mod'><retract xmlns='urn:xmpp:message-retract:0'/>\
            <reason>off topic</reason></moderated></apply-to></message>
            """, context: roomContext)
        #expect(annotations(legacy).first?.kind == .moderation(moderator: "lounge@conference.roost.test/mod", reason: "off topic"))
        // The same payload from a contact in a chat: nothing (and no message).
        let chat = route("""
            <message from='bob@roost.test/phone' type='chat'><retract xmlns='urn:xmpp:message-retract:1' id='s1'>\
            <moderated xmlns='urn:xmpp:message-moderate:1' by='x'/></retract></message>
            """)
        #expect(chat.events.isEmpty)
    }
}
