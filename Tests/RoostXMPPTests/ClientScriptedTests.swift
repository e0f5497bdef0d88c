import Foundation
import RoostTestSupport
import Synchronization
import Testing
@testable import RoostXMPP

/// XMPPClient against `ScriptedServer`: stream management, the modules' answers and archive pages, deterministic
/// and in milliseconds.
@Suite("XMPPClient on a scripted channel")
struct ClientScriptedTests {
    private static let account = try! JID("alice@example.org")

    private static func client(_ servers: [ScriptedServer], resumption: StreamResumptionState? = nil,
                               modules: [ClientModule] = []) -> XMPPClient {
        var configuration = ClientConfiguration(jid: account, password: "secret", modules: modules, sendsInitialPresence: false)
        configuration.discoversAccount = false
        // No keepalive wakes the reader within a test: only the server's data and the messages posted to it do.
        configuration.keepaliveInterval = .seconds(3600)
        let queue = Mutex(servers)
        return XMPPClient(configuration: configuration, resumption: resumption, openChannel: { _, _ throws(ClientError) in
            guard let next = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw .notConnected }
            return next
        })
    }

    /// A client logged in to a fresh `ScriptedServer`, and its events (acknowledged by the test, not on arrival).
    private static func loggedIn(modules: [ClientModule] = []) async throws -> (ScriptedServer, XMPPClient, EventCollector) {
        let server = ScriptedServer()
        let client = Self.client([server], modules: modules)
        let events = EventCollector(client, autoAcknowledge: false)
        _ = try await client.connect()
        return (server, client, events)
    }

    /// Waits for what the client wrote after `count` elements already seen, matching `predicate`.
    private static func written(by server: ScriptedServer, _ what: String, after count: Int = 0,
                                _ predicate: @escaping (Element) -> Bool) async throws -> Element {
        try await waitUntil(what, every: .milliseconds(1), detail: {
            server.received.suffix(6).map { XMLSerializer.serialize($0) }.joined(separator: "\n")
        }) { server.received.dropFirst(count).contains(where: predicate) }
        return server.received.dropFirst(count).first(where: predicate)!
    }

    private static func isAck(_ element: Element) -> Bool {
        element.name == "a" && element.namespace == Namespace.streamManagement
    }

    private static func stanzas(_ events: EventCollector) -> [InboundStanza] {
        events.events.compactMap { if case .stanza(let s) = $0 { s } else { nil } }
    }

    // MARK: - The modules' answers

    /// The disco#info answer is built from the registered modules: the built-in ones (what every Roost login
    /// advertised before modules existed: disco#info, caps, ping, version, chat states) and the configuration's.
    @Test func discoPingAndVersionAreAnsweredByTheModules() async throws {
        let (server, client, _) = try await Self.loggedIn(modules: [Receipts.module])
        server.deliver("<iq type='get' id='d1' from='bob@example.org/phone'><query xmlns='http://jabber.org/protocol/disco#info' node='\(EntityCapabilities.node)#x'/></iq>")
        server.deliver("<iq type='get' id='p1' from='example.org'><ping xmlns='urn:xmpp:ping'/></iq>")
        server.deliver("<iq type='get' id='v1' from='bob@example.org/phone'><query xmlns='jabber:iq:version'/></iq>")
        server.deliver("<iq type='get' id='i1' from='bob@example.org/phone'><query xmlns='http://jabber.org/protocol/disco#items'/></iq>")

        let disco = try await Self.written(by: server, "the disco#info answer") { $0[attribute: "id"] == "d1" }
        #expect(disco[attribute: "type"] == "result" && disco[attribute: "to"] == "bob@example.org/phone")
        let query = try #require(disco.child("query", namespace: Namespace.discoInfo))
        #expect(query[attribute: "node"] == "\(EntityCapabilities.node)#x")
        let info = DiscoInfo(query)
        #expect(info.features == [Namespace.discoInfo, Namespace.caps, Namespace.ping, Namespace.version, Namespace.chatStates, Namespace.receipts])
        #expect(info.identities == [.init(category: "client", type: "pc", name: "Roost")])
        #expect(info == client.ownDiscoInfo)

        let ping = try await Self.written(by: server, "the ping answer") { $0[attribute: "id"] == "p1" }
        #expect(ping[attribute: "type"] == "result" && ping.childElements.isEmpty)

        let version = try await Self.written(by: server, "the version answer") { $0[attribute: "id"] == "v1" }
        let versionQuery = try #require(version.child("query", namespace: Namespace.version))
        #expect(versionQuery.child("name", namespace: Namespace.version)?.text == "Roost")
        #expect(versionQuery.child("version", namespace: Namespace.version)?.text == "0.1")

        let items = try await Self.written(by: server, "the answer to a request no module takes") { $0[attribute: "id"] == "i1" }
        #expect(items[attribute: "type"] == "error")
        #expect(items.child("error", namespace: Namespace.client)?.child("service-unavailable", namespace: Namespace.stanzaErrors) != nil)
        await client.disconnect(timeout: .seconds(5))
    }

    /// A roster push goes to the layer above (the roster module delivers it); the engine does not answer it.
    @Test func rosterPushesGoToTheLayerAbove() async throws {
        let (server, client, events) = try await Self.loggedIn()
        server.deliver("<iq type='set' id='r1'><query xmlns='jabber:iq:roster'><item jid='bob@example.org'/></query></iq>")
        server.deliver("<iq type='get' id='p2' from='example.org'><ping xmlns='urn:xmpp:ping'/></iq>")
        _ = try await Self.written(by: server, "the ping answer after the push") { $0[attribute: "id"] == "p2" }
        try await waitUntil("the push as an event", every: .milliseconds(1)) { !Self.stanzas(events).isEmpty }
        #expect(Self.stanzas(events).map { $0.element[attribute: "id"] } == ["r1"])
        #expect(!server.received.contains { $0[attribute: "id"] == "r1" }, "the engine answered a roster push itself")
        await client.disconnect(timeout: .seconds(5))
    }

    // MARK: - Stream management

    /// `h` never runs ahead of what the layer above committed, even past a stanza the engine handled itself (a
    /// ping): the server's `<r/>` is answered with the committed count only.
    @Test func acknowledgementNeverRunsAheadOfTheCommit() async throws {
        let (server, client, events) = try await Self.loggedIn()
        server.deliver("<message from='bob@example.org/phone' id='m1'><body>1</body></message>")
        server.deliver("<iq type='get' id='p1' from='example.org'><ping xmlns='urn:xmpp:ping'/></iq>")
        server.deliver("<message from='bob@example.org/phone' id='m2'><body>2</body></message>")
        try await waitUntil("two messages", every: .milliseconds(1)) { Self.stanzas(events).count == 2 }
        let messages = Self.stanzas(events)
        #expect(messages.map(\.acknowledgement.handledCount) == [1, 3])

        var seen = server.received.count
        server.deliver("<r xmlns='urn:xmpp:sm:3'/>")
        var ack = try await Self.written(by: server, "the answer to <r/> before any commit", after: seen, Self.isAck)
        #expect(ack[attribute: "h"] == "0", "nothing is committed; the ping the engine answered is not either")

        client.acknowledge(messages[0].acknowledgement)
        seen = server.received.count
        server.deliver("<r xmlns='urn:xmpp:sm:3'/>")
        ack = try await Self.written(by: server, "the answer to <r/> after the first commit", after: seen, Self.isAck)
        #expect(ack[attribute: "h"] == "1", "the first message is committed, the ping after it is handled but not committed")

        client.acknowledge(messages[1].acknowledgement)
        seen = server.received.count
        server.deliver("<r xmlns='urn:xmpp:sm:3'/>")
        ack = try await Self.written(by: server, "the answer to <r/> after the second commit", after: seen, Self.isAck)
        #expect(ack[attribute: "h"] == "3")
        #expect(client.resumptionState == StreamResumptionState(id: "sm1", inboundHandled: 3))
        await client.disconnect(timeout: .seconds(5))
    }

    /// The reader owns the stream-management counts and the others send it messages: commits alone, on a link where
    /// the server says nothing more, wake it, and once 50 are committed it hands the writer an unsolicited `<a/>`.
    @Test func commitsOnAQuietLinkGetTheirAcknowledgementOut() async throws {
        let (server, client, events) = try await Self.loggedIn()
        for n in 1...50 { server.deliver("<message from='bob@example.org/phone' id='m\(n)'><body>\(n)</body></message>") }
        try await waitUntil("fifty messages", every: .milliseconds(1)) { Self.stanzas(events).count == 50 }
        let seen = server.received.count
        #expect(!server.received.contains(where: Self.isAck), "nothing is committed yet")
        for stanza in Self.stanzas(events) { client.acknowledge(stanza.acknowledgement) }
        let ack = try await Self.written(by: server, "the unsolicited <a/> after fifty commits", after: seen, Self.isAck)
        #expect(ack[attribute: "h"] == "50")
        #expect(client.resumptionState?.inboundHandled == 50)
        await client.disconnect(timeout: .seconds(5))
    }

    /// `confirmDelivery` is a message to the reader, which asks the server with `<r/>` and answers at its `<a/>`.
    @Test func confirmDeliveryWaitsForTheServersAcknowledgement() async throws {
        let (server, client, _) = try await Self.loggedIn()
        try client.send(Message(to: try JID("bob@example.org"), body: "one"), tracking: "o1")
        #expect(client.unacknowledgedCount == 1)
        let seen = server.received.count
        let confirmed = Task { await client.confirmDelivery(timeout: .seconds(60)) }
        _ = try await Self.written(by: server, "the request for an acknowledgement", after: seen) {
            $0.name == "r" && $0.namespace == Namespace.streamManagement
        }
        server.deliver("<a xmlns='urn:xmpp:sm:3' h='1'/>")
        #expect(await confirmed.value)
        #expect(client.unacknowledgedCount == 0)
        #expect(await client.confirmDelivery(timeout: .seconds(60)), "nothing left unacknowledged: at once")
        await client.disconnect(timeout: .seconds(5))
    }

    /// A clean logout acknowledges what is committed: `disconnect` asks the reader, which hands the writer the `<a/>`
    /// before the stream's end is queued.
    @Test func cleanLogoutAcknowledgesWhatIsCommitted() async throws {
        let (server, client, events) = try await Self.loggedIn()
        server.deliver("<message from='bob@example.org/phone' id='m1'><body>1</body></message>")
        try await waitUntil("the message", every: .milliseconds(1)) { Self.stanzas(events).count == 1 }
        client.acknowledge(Self.stanzas(events)[0].acknowledgement)
        let seen = server.received.count
        await client.disconnect(timeout: .seconds(30))
        let ack = try #require(server.received.dropFirst(seen).first(where: Self.isAck), "an <a/> before the stream's end")
        #expect(ack[attribute: "h"] == "1")
        #expect(client.resumptionState == nil, "a clean logout forgets the resumption")
    }

    /// XEP-0198 §4: an `<a/>` acknowledging more than Roost sent is answered with the stream error
    /// `<handled-count-too-high/>`, and the connection ends with a protocol violation.
    @Test func serverAcknowledgingTooMuchEndsTheStream() async throws {
        let (server, client, events) = try await Self.loggedIn()
        try client.send(Message(to: try JID("bob@example.org"), body: "one"), tracking: "o1")
        _ = try await Self.written(by: server, "the message") { $0.name == "message" }
        server.deliver("<a xmlns='urn:xmpp:sm:3' h='5'/>")

        let error = try await Self.written(by: server, "the stream error") { $0.name == "error" && $0.namespace == Namespace.stream }
        let tooHigh = try #require(error.child("handled-count-too-high", namespace: Namespace.streamManagement))
        #expect(tooHigh[attribute: "h"] == "5" && tooHigh[attribute: "send-count"] == "1")
        #expect(error.child("undefined-condition", namespace: Namespace.streamErrors) != nil)
        try await waitUntil("the end of the connection", every: .milliseconds(1)) {
            events.events.contains { if case .disconnected(.protocolViolation?) = $0 { true } else { false } }
        }
        #expect(!client.isConnected)
        #expect(!events.events.contains { if case .acknowledged = $0 { true } else { false } })
    }

    /// A dropped connection is resumed: the `h` of `<resumed/>` (beyond the server's last `<a/>`) confirms and drops
    /// what the server has, the rest is sent again, and the inbound count continues from what Roost claimed.
    @Test func resumptionAcceptedResendsWhatTheServerDidNotHave() async throws {
        let first = ScriptedServer(), second = ScriptedServer(sm: .resumed(h: 2))
        let client = Self.client([first, second])
        let events = EventCollector(client, autoAcknowledge: false)
        _ = try await client.connect()
        let bob = try JID("bob@example.org")
        try client.send(Message(to: bob, body: "one"), tracking: "o1")
        try client.send(Message(to: bob, body: "two"), tracking: "o2")
        try client.send(Message(to: bob, body: "three"), tracking: "o3")
        first.deliver("<message from='bob@example.org/phone' id='m1'><body>1</body></message>")
        try await waitUntil("the message", every: .milliseconds(1)) { Self.stanzas(events).count == 1 }
        client.acknowledge(Self.stanzas(events)[0].acknowledgement)
        first.deliver("<a xmlns='urn:xmpp:sm:3' h='1'/>")
        try await waitUntil("o1 acknowledged", every: .milliseconds(1)) {
            events.events.contains { if case .acknowledged(let ids) = $0 { ids == ["o1"] } else { false } }
        }
        first.drop()
        try await waitUntil("the drop", every: .milliseconds(1)) { !client.isConnected }

        let info = try await client.connect()
        #expect(info.resumed)
        let resume = try #require(second.received.first { $0.name == "resume" })
        #expect(resume[attribute: "previd"] == "sm1" && resume[attribute: "h"] == "1")
        #expect(!second.received.contains { $0.child("bind", namespace: Namespace.bind) != nil })
        let resent = try await Self.written(by: second, "the resent message") { $0.name == "message" }
        #expect(resent.child("body", namespace: Namespace.client)?.text == "three", "the server's h covers the second message")
        #expect(second.received.filter { $0.name == "message" }.count == 1, "only what the server did not have is resent")
        #expect(client.unacknowledgedCount == 1)
        // The second message, which `<resumed h='2'/>` says the server has, is confirmed as an `<a/>` would: its sender
        // learns it was delivered (it was once left neither confirmed nor unconfirmed).
        try await waitUntil("o2 acknowledged by the resumption", every: .milliseconds(1)) {
            events.events.contains { if case .acknowledged(let ids) = $0 { ids == ["o2"] } else { false } }
        }
        second.deliver("<message from='bob@example.org/phone' id='m2'><body>2</body></message>")
        try await waitUntil("the next message", every: .milliseconds(1)) { Self.stanzas(events).count == 2 }
        #expect(Self.stanzas(events)[1].acknowledgement.handledCount == 2, "the inbound count continues from the claim")
        #expect(!events.events.contains { if case .unconfirmed = $0 { true } else { false } })
        await client.disconnect(timeout: .seconds(5))
    }

    /// A resumption the server refuses starts a fresh session: bound again, stream management enabled again,
    /// and what the old session never got acknowledged is reported as unconfirmed.
    @Test func resumptionFailedStartsAFreshSession() async throws {
        let first = ScriptedServer(), second = ScriptedServer(sm: .failed)
        let client = Self.client([first, second])
        let events = EventCollector(client, autoAcknowledge: false)
        _ = try await client.connect()
        try client.send(Message(to: try JID("bob@example.org"), body: "one"), tracking: "o1")
        _ = try await Self.written(by: first, "the message") { $0.name == "message" }
        first.drop()
        try await waitUntil("the drop", every: .milliseconds(1)) { !client.isConnected }

        let info = try await client.connect()
        #expect(!info.resumed && info.streamManagement)
        #expect(second.received.contains { $0.name == "resume" })
        #expect(second.received.contains { $0.child("bind", namespace: Namespace.bind) != nil })
        #expect(second.received.contains { $0.name == "enable" })
        #expect(!second.received.contains { $0.name == "message" }, "nothing is resent on a fresh session")
        try await waitUntil("o1 unconfirmed", every: .milliseconds(1)) {
            events.events.contains { if case .unconfirmed(let ids) = $0 { ids == ["o1"] } else { false } }
        }
        #expect(client.unacknowledgedCount == 0)
        await client.disconnect(timeout: .seconds(5))
    }

    // MARK: - Archive pages

    /// A query's results are collected into one page, delivered where its answer arrived; live traffic in
    /// between goes on as usual.
    @Test func archiveResultsAreCollectedIntoOnePage() async throws {
        let (server, client, events) = try await Self.loggedIn()
        let query = Task { try await client.queryArchive(MAM.query(queryID: "q1", pageSize: 2), queryID: "q1") }
        let iq = try await Self.written(by: server, "the query") { $0.child("query", namespace: Namespace.mam) != nil }
        server.deliver(Self.result("q1", "a1"))
        server.deliver("<message from='bob@example.org/phone' id='live'><body>live</body></message>")
        server.deliver(Self.result("q1", "a2"))
        server.deliver("<iq type='result' id='\(iq[attribute: "id"]!)'><fin xmlns='urn:xmpp:mam:2' complete='true'/></iq>")
        let fin = try await query.value
        #expect(MAM.fin(in: fin)?.complete == true)

        let page = try #require(events.events.compactMap { if case .archivePage(let p) = $0 { p } else { nil } }.first)
        #expect(page.queryID == "q1")
        #expect(page.results.map { $0.child("result", namespace: Namespace.mam)?[attribute: "id"] } == ["a1", "a2"])
        #expect(page.acknowledgement.handledCount == 4, "the page is acknowledged with its answer, after the results")
        #expect(Self.stanzas(events).map { $0.element[attribute: "id"] } == ["live"])
        await client.disconnect(timeout: .seconds(5))
    }

    /// A page holds at most what the query asked for: one result more fails the query instead of growing it.
    @Test func archivePageBeyondItsSizeFailsTheQuery() async throws {
        let (server, client, events) = try await Self.loggedIn()
        let query = Task { try await client.queryArchive(MAM.query(queryID: "q2", pageSize: 2), queryID: "q2") }
        _ = try await Self.written(by: server, "the query") { $0.child("query", namespace: Namespace.mam) != nil }
        for id in ["a1", "a2", "a3"] { server.deliver(Self.result("q2", id)) }
        let outcome = await query.result
        guard case .failure(let error) = outcome, case .protocolViolation? = error as? ClientError else {
            Issue.record("the query should have failed, not \(outcome)")
            return
        }
        #expect(!events.events.contains { if case .archivePage = $0 { true } else { false } })
        try await waitUntil("the extra result as a stanza", every: .milliseconds(1)) { !Self.stanzas(events).isEmpty }
        await client.disconnect(timeout: .seconds(5))
    }

    private static func result(_ queryID: String, _ id: String) -> String {
        "<message id='r-\(id)'><result xmlns='urn:xmpp:mam:2' queryid='\(queryID)' id='\(id)'><forwarded xmlns='urn:xmpp:forward:0'>"
            + "<delay xmlns='urn:xmpp:delay' stamp='2026-01-01T00:00:00Z'/><message xmlns='jabber:client' from='bob@example.org/phone' to='alice@example.org'>"
            + "<body>\(id)</body></message></forwarded></result></message>"
    }
}

@Suite("Stream management: the unacknowledged queue is bounded")
struct OutboundQueueBoundTests {
    @Test func aFullQueueRefusesMoreUntilTheServerAcknowledges() throws {
        var q = OutboundQueue()
        #expect(q.hasRoom(for: OutboundQueue.capacityBytes * 2), "anything fits into an empty queue")
        q.append(Element("message"), bytes: OutboundQueue.capacityBytes - 10)
        #expect(q.hasRoom(for: 10))
        #expect(!q.hasRoom(for: 11))
        q.append(Element("message"), bytes: 10)
        #expect(q.bytes == OutboundQueue.capacityBytes)
        _ = try q.acknowledge(1)
        #expect(q.bytes == 10 && q.hasRoom(for: OutboundQueue.capacityBytes - 10))
        _ = q.drain()
        #expect(q.bytes == 0)
    }
}
