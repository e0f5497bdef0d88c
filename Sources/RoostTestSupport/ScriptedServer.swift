import Foundation
package import RoostXMPP

/// A server in memory, as the client's channel: it answers the login (PLAIN, bind, stream management enabled or
/// resumed as `smAnswer` says), then plays what the test `deliver`s and parses everything the client writes
/// (`received`). No socket and no thread of its own: the client's reader reads from it, the client's writer
/// drains the real `Outbox` into it.
package final class ScriptedServer: ClientChannel, @unchecked Sendable {
    package enum SMAnswer: Sendable { case enabled, resumed(h: UInt32), failed }

    package let outbox = Outbox(capacityBytes: 1 << 20)
    package let isTLSActive = true
    package let isTLS13 = true
    package let peerCertificateSHA256: String? = nil
    package let tlsProtocol: String? = "scripted"
    private let smAnswer: SMAnswer
    private let answersQueries: Bool
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var toClient: [XMLStreamParser.Event] = []
    private var fromClient: [Element] = []
    private var closed = false
    private var woken = false
    private var counted = 0
    /// Used by the thread that writes: the negotiating thread, then the client's writer.
    private let clientParser = XMLStreamParser()
    // Guarded by `condition`.
    private let serverParser = XMLStreamParser()

    /// `answersQueries`: every query the client sends is answered as an empty server would (an empty roster, a
    /// disco#info with no features, an empty result for the rest), so that a whole session can log in on it.
    package init(sm smAnswer: SMAnswer = .enabled, answersQueries: Bool = false) {
        self.smAnswer = smAnswer
        self.answersQueries = answersQueries
    }

    /// Stanzas (message, presence, iq) played to the client since stream management was enabled or resumed: what
    /// the client's `h` counts once it has handled them all (XEP-0198).
    package var stanzasSinceEnabled: Int { condition.withLock { counted } }

    /// Everything the client wrote after its stream headers, in order.
    package var received: [Element] { condition.withLock { fromClient } }

    /// Plays server XML to the client (whole elements; a new stream header first when `header`).
    package func deliver(_ xml: String, header: Bool = false) {
        let text = header ? "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0' id='s1'>" + xml : xml
        condition.withLock {
            if header { serverParser.reset() }
            let events = try! serverParser.feed(Array(text.utf8))
            for case .stanza(let element) in events {
                if element.name == "enabled" || element.name == "resumed" { counted = 0 }
                if ["message", "presence", "iq"].contains(element.name) { counted += 1 }
            }
            toClient += events
            condition.broadcast()
        }
    }

    /// The server drops the connection: the client's reader sees the end of the stream.
    package func drop() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    // MARK: - What the client calls

    package func send(_ text: String) throws(ClientError) { heard(text) }

    /// The server's side of the client's text: parses it and answers the login steps.
    private func heard(_ text: String) {
        if text.hasPrefix("<?xml") { clientParser.reset() }
        let events = (try? clientParser.feed(Array(text.utf8))) ?? []
        for event in events {
            switch event {
            case .streamStart:
                // The first header gets the SASL features; the one after <success/> the bound stream's.
                let authenticated = condition.withLock { fromClient.contains { $0.name == "auth" } }
                deliver(authenticated
                        ? "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/></stream:features>"
                        : "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>",
                        header: true)
            case .streamEnd:
                deliver("</stream:stream>")
            case .stanza(let element):
                condition.withLock { fromClient.append(element) }
                answerLogin(element)
            }
        }
    }

    private func answerLogin(_ element: Element) {
        switch (element.name, element.namespace) {
        case ("auth", Namespace.sasl?):
            deliver("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        case ("iq", _) where element.child("bind", namespace: Namespace.bind) != nil:
            deliver("<iq type='result' id='\(element[attribute: "id"] ?? "")'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>alice@example.org/roost</jid></bind></iq>")
        case ("enable", Namespace.streamManagement?):
            deliver("<enabled xmlns='urn:xmpp:sm:3' id='sm1' resume='true'/>")
        case ("resume", Namespace.streamManagement?):
            switch smAnswer {
            case .resumed(let h): deliver("<resumed xmlns='urn:xmpp:sm:3' previd='\(element[attribute: "previd"] ?? "")' h='\(h)'/>")
            case .failed, .enabled: deliver("<failed xmlns='urn:xmpp:sm:3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")
            }
        case ("iq", _) where answersQueries && (element[attribute: "type"] == "get" || element[attribute: "type"] == "set"):
            let id = element[attribute: "id"] ?? ""
            if element.child("query", namespace: "jabber:iq:roster") != nil, element[attribute: "type"] == "get" {
                deliver("<iq type='result' id='\(id)'><query xmlns='jabber:iq:roster'/></iq>")
            } else if element.child("query", namespace: "http://jabber.org/protocol/disco#info") != nil {
                deliver("<iq type='result' id='\(id)' from='\(element[attribute: "to"] ?? "example.org")'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>")
            } else {
                deliver("<iq type='result' id='\(id)'\(element[attribute: "to"].map { " from='\($0)'" } ?? "")/>")
            }
        default:
            break
        }
    }

    package func nextEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event {
        guard let event = try pollEvent(timeout: timeout) else { throw .timeout("scripted data") }
        return event
    }

    package func pollEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event? {
        let deadline = Date.now.addingTimeInterval(Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while toClient.isEmpty, !closed, !woken {
            guard condition.wait(until: deadline) else { return nil }
        }
        if toClient.isEmpty, woken {
            woken = false
            return nil
        }
        if toClient.isEmpty { throw .disconnected("the server closed the connection") }
        return toClient.removeFirst()
    }

    package func startTLS() throws(ClientError) {}
    package func restartStream() {}
    package func channelBindings() -> [ChannelBinding] { [] }

    package func wake() {
        condition.withLock {
            woken = true
            condition.broadcast()
        }
    }

    package func startWriter(name: String, failed: @escaping @Sendable (ClientError) -> Void) {
        let thread = Thread { [self] in
            outbox.drain(failed: failed) { chunks, _ throws(ClientError) in
                for chunk in chunks { heard(String(decoding: chunk, as: UTF8.self)) }
            }
        }
        thread.name = name
        thread.start()
    }

    package func finishWriting() { outbox.finish() }

    package func close() {
        outbox.close()
        drop()
    }
}

extension NSCondition {
    fileprivate func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

