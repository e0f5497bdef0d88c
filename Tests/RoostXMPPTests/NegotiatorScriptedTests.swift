import Foundation
import Testing
@testable import RoostXMPP

/// A channel that plays back the server's side from a script and records what the client sent.
private final class ScriptedChannel: StreamChannel {
    var script: [XMLStreamParser.Event]
    var sent: [String] = []
    var isTLSActive = false
    var isTLS13 = false
    var restarts = 0
    var bindings: [ChannelBinding] = []

    init(_ script: [XMLStreamParser.Event], bindings: [ChannelBinding] = []) {
        self.script = script
        self.bindings = bindings
    }

    func send(_ text: String) throws(ClientError) { sent.append(text) }
    func nextEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event {
        guard !script.isEmpty else { throw .timeout("scripted data") }
        return script.removeFirst()
    }
    func startTLS() throws(ClientError) { isTLSActive = true; restarts += 1 }
    func restartStream() { restarts += 1 }
    func channelBindings() -> [ChannelBinding] { bindings }
}

private func xml(_ s: String) -> Element {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
    for case .stanza(let e) in events { return e }
    fatalError("no stanza in \(s)")
}

private let header = XMLStreamParser.Event.streamStart(Element("stream", namespace: Namespace.stream, attributes: [("version", "1.0"), ("id", "s1")]))
private let tlsFeatures = XMLStreamParser.Event.stanza(xml("<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>"))
private let proceed = XMLStreamParser.Event.stanza(xml("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>"))
private let plainFeatures = XMLStreamParser.Event.stanza(xml("<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>"))
private let success = XMLStreamParser.Event.stanza(xml("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"))
private let boundFeatures = XMLStreamParser.Event.stanza(xml("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/></stream:features>"))

private func negotiator(resumption: StreamResumptionState? = nil) -> StreamNegotiator {
    StreamNegotiator(jid: try! JID("alice@example.org"), password: "secret", resource: "roost", purpose: .login,
                     streamManagement: true, resumption: resumption, stepTimeout: .seconds(1))
}

/// The bind IQ carries a random id; answer it by reading the id the client actually sent.
private final class BindingChannel: StreamChannel {
    let inner: ScriptedChannel
    var bindAnswers: [(String) -> Element]
    init(_ inner: ScriptedChannel, bindAnswers: [(String) -> Element]) {
        self.inner = inner
        self.bindAnswers = bindAnswers
    }
    var isTLSActive: Bool { inner.isTLSActive }
    var isTLS13: Bool { false }
    func send(_ text: String) throws(ClientError) {
        try inner.send(text)
        if text.contains("urn:ietf:params:xml:ns:xmpp-bind"), !bindAnswers.isEmpty,
           let range = text.range(of: "id=\""), let end = text[range.upperBound...].firstIndex(of: "\"") {
            let id = String(text[range.upperBound..<end])
            inner.script.insert(.stanza(bindAnswers.removeFirst()(id)), at: 0)
        }
    }
    func nextEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event { try inner.nextEvent(timeout: timeout) }
    func startTLS() throws(ClientError) { try inner.startTLS() }
    func restartStream() { inner.restartStream() }
    func channelBindings() -> [ChannelBinding] { [] }
}

@Suite("Stream negotiation, scripted")
struct NegotiatorScriptedTests {
    @Test func fullLoginWithStartTLSPlainBindAndSM() throws {
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, plainFeatures, success, header, boundFeatures,
                                      .stanza(xml("<enabled xmlns='urn:xmpp:sm:3' id='sm1' resume='true' max='300'/>"))])
        let channel = BindingChannel(script, bindAnswers: [{ id in
            xml("<iq type='result' id='\(id)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>alice@example.org/roost</jid></bind></iq>")
        }])
        let result = try negotiator().run(on: channel)
        #expect(result.boundJID.description == "alice@example.org/roost")
        #expect(result.authentication.mechanism == "PLAIN")
        #expect(result.authentication.channelBinding == nil)
        #expect(result.streamManagement == .enabled(id: "sm1", resumable: true, location: nil, maxSeconds: 300))
        #expect(script.sent[0].contains("to='example.org'"))
        #expect(!script.sent[0].contains("from="), "the JID must not be sent before TLS")
        #expect(script.sent[1].contains("starttls"))
        #expect(script.sent[2].contains("from='alice@example.org'"))
        #expect(script.sent[3].contains("mechanism=\"PLAIN\""))
        #expect(script.sent.contains { $0.contains("<enable xmlns=\"urn:xmpp:sm:3\" resume=\"true\"/>") })
    }

    @Test func serverWithoutStartTLSIsRefusedBeforeCredentials() {
        let script = ScriptedChannel([header, plainFeatures])
        #expect(throws: ClientError.self) { try negotiator().run(on: script) }
        #expect(!script.sent.contains { $0.contains("auth") })
        do { _ = try negotiator().run(on: ScriptedChannel([header, plainFeatures])) } catch {
            guard case .tlsNotOffered = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test func saslFailureIsAuthenticationFailure() {
        let failure = XMLStreamParser.Event.stanza(xml("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>bad</text></failure>"))
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, plainFeatures, failure])
        do {
            _ = try negotiator().run(on: script)
            Issue.record("expected failure")
        } catch {
            guard case .authenticationFailed(let condition, let text) = error else { Issue.record("wrong error \(error)"); return }
            #expect(condition == "not-authorized")
            #expect(text == "bad")
            #expect(error.isAuthenticationFailure)
            #expect(!error.description.contains("secret"))
        }
    }

    /// What the client sent in each `<auth/>`: the mechanism and the GS2 header of the initial response.
    private func authAttempts(_ sent: [String]) -> [String] {
        sent.filter { $0.hasPrefix("<auth ") }.map { auth in
            let mechanism = auth.components(separatedBy: "mechanism=\"")[1].prefix { $0 != "\"" }
            let payload = auth.components(separatedBy: ">")[1].components(separatedBy: "<")[0]
            let initial = String(decoding: Data(base64Encoded: payload) ?? Data(), as: UTF8.self)
            return "\(mechanism) \(initial.components(separatedBy: "n=")[0])"
        }
    }

    @Test func guessedBindingRejectedRetriesWithoutPlusOnTheSameStream() {
        // ejabberd 23.01 on TLS 1.2: -PLUS offered without XEP-0440. A server that rejects tls-unique gets a
        // second exchange without binding; the failure of that one is what the caller sees.
        let features = XMLStreamParser.Event.stanza(xml("<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism><mechanism>SCRAM-SHA-1-PLUS</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms></stream:features>"))
        let badBinding = XMLStreamParser.Event.stanza(xml("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/><text>Invalid channel binding</text></failure>"))
        let wrongPassword = XMLStreamParser.Event.stanza(xml("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>"))
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, features, badBinding, wrongPassword],
                                     bindings: [.tlsUnique([1, 2, 3]), .tlsServerEndPoint([4])])
        #expect(throws: ClientError.self) { try negotiator().run(on: script) }
        #expect(authAttempts(script.sent) == ["SCRAM-SHA-1-PLUS p=tls-unique,,", "SCRAM-SHA-1 n,,"])
    }

    @Test func listedBindingIsNeverDroppedAfterAFailure() {
        // The server listed tls-unique (XEP-0440) and we used it: a failure is final, not a reason to go unbound.
        let features = XMLStreamParser.Event.stanza(xml("<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1-PLUS</mechanism><mechanism>SCRAM-SHA-1</mechanism></mechanisms><sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-unique'/></sasl-channel-binding></stream:features>"))
        let failure = XMLStreamParser.Event.stanza(xml("<failure xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><not-authorized/></failure>"))
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, features, failure, failure], bindings: [.tlsUnique([1, 2, 3])])
        do {
            _ = try negotiator().run(on: script)
            Issue.record("expected failure")
        } catch {
            guard case .authenticationFailed(let condition, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(condition == "not-authorized")
        }
        #expect(authAttempts(script.sent) == ["SCRAM-SHA-1-PLUS p=tls-unique,,"])
    }

    @Test func seeOtherHostStreamError() {
        let redirect = XMLStreamParser.Event.stanza(xml("<stream:error><see-other-host xmlns='urn:ietf:params:xml:ns:xmpp-streams'>other.example:5222</see-other-host></stream:error>"))
        do {
            _ = try negotiator().run(on: ScriptedChannel([header, redirect]))
            Issue.record("expected failure")
        } catch {
            guard case .seeOtherHost(let host) = error else { Issue.record("wrong error \(error)"); return }
            #expect(host == "other.example:5222")
        }
    }

    @Test func bindConflictPicksAnotherResource() throws {
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, plainFeatures, success, header,
                                      .stanza(xml("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>"))])
        let channel = BindingChannel(script, bindAnswers: [
            { id in xml("<iq type='error' id='\(id)'><error type='modify'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>") },
            { id in xml("<iq type='result' id='\(id)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>alice@example.org/roost.x</jid></bind></iq>") },
        ])
        let result = try negotiator().run(on: channel)
        #expect(result.boundJID.resource == "roost.x")
        #expect(result.streamManagement == .unavailable)
    }

    @Test func resumeFailureFallsBackToBind() throws {
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, plainFeatures, success, header, boundFeatures,
                                      .stanza(xml("<failed xmlns='urn:xmpp:sm:3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")),
                                      .stanza(xml("<enabled xmlns='urn:xmpp:sm:3' id='sm2' resume='true'/>"))])
        let channel = BindingChannel(script, bindAnswers: [{ id in
            xml("<iq type='result' id='\(id)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>alice@example.org/roost</jid></bind></iq>")
        }])
        let result = try negotiator(resumption: StreamResumptionState(id: "old", inboundHandled: 7)).run(on: channel)
        #expect(script.sent.contains { $0.contains("previd=\"old\"") && $0.contains("h=\"7\"") })
        #expect(result.streamManagement == .enabled(id: "sm2", resumable: true, location: nil, maxSeconds: nil))
    }

    @Test func resumeSuccessSkipsBind() throws {
        let script = ScriptedChannel([header, tlsFeatures, proceed, header, plainFeatures, success, header, boundFeatures,
                                      .stanza(xml("<resumed xmlns='urn:xmpp:sm:3' previd='old' h='3'/>"))])
        let result = try negotiator(resumption: StreamResumptionState(id: "old", inboundHandled: 7)).run(on: script)
        #expect(result.streamManagement == .resumed(id: "old", serverHandled: 3))
        #expect(!script.sent.contains { $0.contains("xmpp-bind") })
    }
}

@Suite("Stream management counters")
struct StreamManagementCounterTests {
    @Test func handledWatermarkIsContiguous() {
        var c = HandledCounter()
        let s1 = c.nextSequence(), s2 = c.nextSequence(), s3 = c.nextSequence()
        c.markHandled(s2)
        #expect(c.h == 0)
        c.markHandled(s1)
        #expect(c.h == 2)
        c.commit(through: s3)
        #expect(c.h == 3)
    }

    @Test func handledWrapsAt32Bits() {
        var c = HandledCounter(base: UInt32.max)
        c.commit(through: c.nextSequence())
        #expect(c.h == 0)
    }

    @Test func onlyCommittedStanzasAreAcknowledged() {
        var sm = StreamManagementSession(resumption: nil)
        let first = sm.receive(), second = sm.receive()
        sm.inbound.markHandled(second.sequence)   // the engine answered an IQ; the message before it is pending
        #expect(sm.takeAck() == 0)
        #expect(sm.commit(through: first.sequence) == nil)   // below the unsolicited-ack threshold
        #expect(sm.takeAck() == 1, "h covers the committed message only; the IQ after it is not committed")
        #expect(first.handledCount == 1 && second.handledCount == 2)
    }

    @Test func ackAboveSentIsRejected() throws {
        var q = OutboundQueue()
        q.append(Element("message"))
        q.append(Element("message"))
        _ = try q.acknowledge(1)
        #expect(q.count == 1)
        #expect(throws: OutboundQueue.AckError.self) { _ = try q.acknowledge(5) }
    }

    @Test func acknowledgedTrackingIDsAreReported() throws {
        var sm = StreamManagementSession(resumption: nil)
        sm.outbound.append(Element("message"), tracking: "a")
        sm.outbound.append(Element("iq"))
        sm.outbound.append(Element("message"), tracking: "b")
        #expect(try sm.acknowledged(2) == ["a"])
        #expect(try sm.acknowledged(3) == ["b"])
        #expect(try sm.acknowledged(2) == [], "a late, lower h changes nothing")
    }

    /// After `<resumed h=…/>` the counters continue from the server's count: what the server has is dropped,
    /// the rest is sent again and counted again, so the next `<a/>` from the server is never "too high".
    @Test func resumptionContinuesTheCounters() throws {
        var sm = StreamManagementSession(resumption: StreamResumptionState(id: "s", inboundHandled: 0))
        for i in 1...5 { sm.outbound.append(Element("message", attributes: [("id", "m\(i)")]), tracking: "t\(i)") }
        _ = try sm.acknowledged(2)
        let resumption = sm.resumed(serverHandled: 3, claimed: 0)
        #expect(resumption.confirmed.map(\.tracking) == ["t3"], "what the server has is confirmed")
        let resend = resumption.resend
        #expect(resend.map { $0.element[attribute: "id"] } == ["m4", "m5"])
        for entry in resend { sm.outbound.append(entry.element, tracking: entry.tracking) }
        #expect(sm.outbound.sent == 5)
        #expect(try sm.acknowledged(5) == ["t4", "t5"], "the resent ones, confirmed by the next <a/>")
        #expect(sm.outbound.count == 0)
    }

    /// The inbound count continues from exactly what was claimed in `<resume h=…/>`, even when more had
    /// been received (and handled by the engine) than committed: the server resends from the claim on.
    @Test func resumptionContinuesInboundFromTheClaim() {
        var sm = StreamManagementSession(resumption: StreamResumptionState(id: "s", inboundHandled: 0))
        let first = sm.receive(), second = sm.receive()
        _ = sm.commit(through: first.sequence)
        sm.inbound.markHandled(second.sequence)    // an IQ answer the engine handled: h 2, committed 1
        let claim = sm.persistable?.inboundHandled ?? 99
        #expect(claim == 1)
        _ = sm.resumed(serverHandled: 0, claimed: claim)
        let resent = sm.receive()   // the server resends stanza 2
        #expect(resent.handledCount == 2, "the resent stanza is the second one, not a third")
    }

    /// A restarted process knows nothing of what it sent before: the queue continues at the server's `h`.
    @Test func resumptionAfterARestartContinuesAtTheServersCount() throws {
        var sm = StreamManagementSession(restoring: StreamResumptionState(id: "s", inboundHandled: 40))
        #expect(sm.resumed(serverHandled: 17, claimed: 40).resend.isEmpty)
        sm.outbound.append(Element("message"))
        _ = try sm.acknowledged(18)
        #expect(sm.outbound.count == 0)
        #expect(sm.takeAck() == 40)
    }

    @Test func iqAnswerMustComeFromTheRequestTarget() throws {
        let account = try JID("alice@example.org")
        let bob = try JID("bob@example.org")
        #expect(XMPPClient.answer(from: nil, fromAttribute: nil, matches: nil, account: account))
        #expect(XMPPClient.answer(from: account, fromAttribute: "alice@example.org", matches: nil, account: account))
        #expect(!XMPPClient.answer(from: bob, fromAttribute: "bob@example.org", matches: nil, account: account))
        #expect(XMPPClient.answer(from: bob, fromAttribute: "bob@example.org", matches: bob, account: account))
        #expect(!XMPPClient.answer(from: account, fromAttribute: "alice@example.org", matches: bob, account: account))
        #expect(!XMPPClient.answer(from: nil, fromAttribute: nil, matches: bob, account: account))
        // ejabberd answers an account removal sent to the server from the session's own full JID.
        let server = try JID("example.org"), session = try JID("alice@example.org/roost"), other = try JID("alice@example.org/phone")
        #expect(XMPPClient.answer(from: session, fromAttribute: "alice@example.org/roost", matches: server, account: account, bound: session))
        #expect(!XMPPClient.answer(from: other, fromAttribute: "alice@example.org/phone", matches: server, account: account, bound: session))
        #expect(!XMPPClient.answer(from: session, fromAttribute: "alice@example.org/roost", matches: bob, account: account, bound: session))
    }
}
