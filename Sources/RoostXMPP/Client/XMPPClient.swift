import Foundation
import Synchronization

/// The engine's public face: one account's connection, its requests and its inbound events.
///
/// Socket reading and negotiation run on a dedicated thread (never on the cooperative pool, since reads block);
/// inbound stanzas reach the layer above through `events`. A client can `connect()` again after a drop and
/// then resumes the stream-management session when the server still holds it.
public final class XMPPClient: Sendable {
    public let configuration: ClientConfiguration
    public let events: AsyncStream<ClientEvent>
    private let continuation: AsyncStream<ClientEvent>.Continuation
    private let state: Mutex<State>
    private let log: @Sendable (ClientLogLevel, String) -> Void

    private struct PendingRequest {
        let expectedFrom: JID?
        let continuation: CheckedContinuation<IQ, any Error>
    }

    private struct State: ~Copyable {
        var connection: StreamConnection?
        var boundJID: JID?
        var pending: [String: PendingRequest] = [:]
        var smEnabled = false
        var resumption: StreamResumptionState?
        var handled = HandledCounter()
        var outbound = OutboundQueue()
        var closing = false
        var lastAckSent: UInt32 = 0
        var generation = 0
        /// Extra children of every presence Roost broadcasts (e.g. the XEP-0153 photo hash).
        var presenceExtras: [Element] = []
        /// Why the layer above (or a protocol check) cut the connection; reported instead of the read error it causes.
        var abortReason: ClientError?
        /// Open MAM queries by query id: their results are collected here instead of the event stream.
        var archiveCollectors: [String: [Element]] = [:]
        /// The IQ id of each open MAM query, to deliver its page when the answer arrives.
        var archiveQueryIDs: [String: String] = [:]
    }

    public init(configuration: ClientConfiguration, resumption: StreamResumptionState? = nil,
                log: @escaping @Sendable (ClientLogLevel, String) -> Void = { _, _ in }) {
        self.configuration = configuration
        self.log = log
        var s = State()
        s.resumption = resumption
        if let resumption { s.handled = HandledCounter(base: resumption.inboundHandled) }
        state = Mutex(s)
        (events, continuation) = AsyncStream.makeStream(of: ClientEvent.self, bufferingPolicy: .unbounded)
    }

    public var boundJID: JID? { state.withLock { $0.boundJID } }
    public var isConnected: Bool { state.withLock { $0.connection != nil && !$0.closing } }
    public var resumptionState: StreamResumptionState? {
        state.withLock { s in
            guard var r = s.resumption else { return nil }
            r.inboundHandled = s.handled.h
            return r
        }
    }

    // MARK: - Connecting

    /// Connects, negotiates TLS and SASL, binds (or resumes), sends initial presence, and starts reading.
    public func connect() async throws(ClientError) -> SessionInfo {
        try await negotiate(purpose: .login)
    }

    /// XEP-0077: creates the account on the server, then logs in with it.
    public func registerAccount(extraFields: [String: String] = [:]) async throws(ClientError) -> SessionInfo {
        try await negotiate(purpose: .registerThenLogin(extraFields: extraFields))
    }

    private func negotiate(purpose: StreamNegotiator.Purpose) async throws(ClientError) -> SessionInfo {
        let result: Result<SessionInfo, ClientError> = await withCheckedContinuation { (done: CheckedContinuation<Result<SessionInfo, ClientError>, Never>) in
            let thread = Thread { [self] in
                self.runConnection(purpose: purpose, done: done)
            }
            thread.name = "roost.xmpp.\(configuration.jid)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        return try result.get()
    }

    /// The connection thread: connect, negotiate, report, then read until the stream ends.
    private func runConnection(purpose: StreamNegotiator.Purpose, done: CheckedContinuation<Result<SessionInfo, ClientError>, Never>) {
        let connection: StreamConnection
        let negotiated: NegotiationResult
        do throws(ClientError) {
            connection = try openConnection()
            let resumption = state.withLock { s -> StreamResumptionState? in
                guard var r = s.resumption else { return nil }
                r.inboundHandled = s.handled.h
                return r
            }
            let negotiator = StreamNegotiator(jid: configuration.jid, password: configuration.password, resource: configuration.resource,
                                              purpose: purpose, streamManagement: configuration.streamManagement,
                                              resumption: resumption, stepTimeout: configuration.requestTimeout,
                                              allowedMechanisms: configuration.saslMechanisms?.map { $0.uppercased() })
            do {
                negotiated = try negotiator.run(on: connection)
            } catch {
                connection.close()
                throw error
            }
        } catch {
            done.resume(returning: .failure(error))
            return
        }
        let generation = adopt(connection: connection, negotiated: negotiated)
        let info = SessionInfo(boundJID: negotiated.boundJID, mechanism: negotiated.mechanism,
                               streamManagement: state.withLock { $0.smEnabled },
                               resumed: { if case .resumed = negotiated.streamManagement { true } else { false } }(),
                               tlsPeerFingerprint: connection.peerCertificateSHA256)
        log(.info, "\(configuration.jid): connected as \(negotiated.boundJID) with \(negotiated.mechanism)\(info.resumed ? ", session resumed" : "")")
        for element in negotiated.earlyStanzas { dispatch(element, generation: generation) }
        if !info.resumed, configuration.sendsInitialPresence {
            try? send(initialPresence())
        }
        done.resume(returning: .success(info))
        readLoop(connection: connection, generation: generation)
    }

    private func openConnection() throws(ClientError) -> StreamConnection {
        let endpoints = EndpointResolver.endpoints(domain: configuration.jid.domain, explicitHost: configuration.host,
                                                   explicitPort: configuration.port, mode: configuration.tlsMode)
        var lastError: ClientError = .transport(.resolutionFailed(host: configuration.jid.domain, reason: "no address to try"))
        for endpoint in endpoints {
            do {
                let socket = try Socket.connect(host: endpoint.host, port: endpoint.port, timeout: configuration.connectTimeout)
                var tls = TLSConfiguration(serverName: configuration.jid.domain, caFile: configuration.caFile, pinnedSHA256: configuration.pinnedSHA256)
                if endpoint.directTLS { tls.alpn = ["xmpp-client"] }
                let connection = StreamConnection(socket: socket, tls: tls, maxStanzaBytes: configuration.maxStanzaBytes)
                if endpoint.directTLS {
                    do { try connection.startDirectTLS(timeout: configuration.connectTimeout) } catch {
                        connection.close()
                        throw error
                    }
                }
                log(.debug, "\(configuration.jid): connected to \(endpoint.host):\(endpoint.port)\(endpoint.directTLS ? " (direct TLS)" : "")")
                return connection
            } catch let error as TransportError {
                log(.debug, "\(configuration.jid): \(error)")
                lastError = .transport(error)
            } catch let error as ClientError {
                // A certificate problem is the server's identity failing: trying another address would not fix it.
                if case .tls(let tls) = error, tls.isCertificateProblem { throw error }
                lastError = error
            } catch {
                lastError = .disconnected(String(describing: error))
            }
        }
        throw lastError
    }

    private func adopt(connection: StreamConnection, negotiated: NegotiationResult) -> Int {
        var toResend: [Element] = []
        var resumptionEvent: StreamResumptionState?
        let generation = state.withLock { s -> Int in
            s.generation += 1
            s.connection = connection
            s.boundJID = negotiated.boundJID
            s.closing = false
            switch negotiated.streamManagement {
            case .enabled(let id, let resumable, let location, let maxSeconds):
                s.smEnabled = true
                s.handled = HandledCounter()
                s.outbound = OutboundQueue()
                s.lastAckSent = 0
                if resumable, let id {
                    s.resumption = StreamResumptionState(id: id, inboundHandled: 0, location: location, maxSeconds: maxSeconds)
                    resumptionEvent = s.resumption
                } else {
                    s.resumption = nil
                }
            case .resumed(_, let serverHandled):
                s.smEnabled = true
                s.handled = HandledCounter(base: s.handled.h)
                s.lastAckSent = s.handled.h
                // After a process restart the queue is empty: continue the count where the server is.
                do { try s.outbound.acknowledge(serverHandled) } catch { s.outbound = OutboundQueue(continuingAt: serverHandled) }
                toResend = s.outbound.unacked
                var fresh = OutboundQueue()
                for e in toResend { fresh.append(e) }
                s.outbound = fresh
            case .unavailable, .enableFailed:
                s.smEnabled = false
                s.resumption = nil
            }
            return s.generation
        }
        if let resumptionEvent { continuation.yield(.resumptionState(resumptionEvent)) }
        for element in toResend {
            try? connection.send(XMLSerializer.serialize(element, parentNamespace: Namespace.client))
        }
        if !toResend.isEmpty { log(.info, "\(configuration.jid): resent \(toResend.count) unacknowledged stanzas") }
        return generation
    }

    /// The presence Roost broadcasts: its priority, entity caps and any extras set by the layer above.
    public func currentPresence() -> Presence {
        var presence = Presence(priority: configuration.priority)
        presence.add(EntityCapabilities.element(for: ownDiscoInfo, node: EntityCapabilities.node))
        for extra in state.withLock({ $0.presenceExtras }) { presence.add(extra) }
        return presence
    }

    /// Replaces the extra presence children (kept across reconnects); does not send anything by itself.
    public func setPresenceExtras(_ elements: [Element]) {
        state.withLock { $0.presenceExtras = elements }
    }

    private func initialPresence() -> Presence { currentPresence() }

    // MARK: - Reading

    private func readLoop(connection: StreamConnection, generation: Int) {
        let interval = configuration.keepaliveInterval
        var probeSentAt: ContinuousClock.Instant?
        var endError: ClientError?
        loop: while true {
            let event: XMLStreamParser.Event?
            do {
                event = try connection.pollEvent(timeout: interval / 2)
            } catch {
                endError = error
                break
            }
            guard let event else {
                // Idle: probe once; if the probe also goes unanswered for a whole interval, the link is dead.
                if let sent = probeSentAt, ContinuousClock.now - sent >= interval / 2 {
                    endError = .timeout("the server to answer a keepalive")
                    break
                }
                if probeSentAt == nil {
                    probeSentAt = .now
                    sendKeepaliveProbe(on: connection)
                }
                continue
            }
            probeSentAt = nil
            switch event {
            case .stanza(let element):
                if element.name == "error", element.namespace == Namespace.stream {
                    endError = StreamErrorReader.error(from: element)
                    break loop
                }
                dispatch(element, generation: generation)
            case .streamEnd:
                break loop
            case .streamStart:
                endError = .protocolViolation("a second stream header")
                break loop
            }
        }
        finish(connection: connection, generation: generation, error: endError)
    }

    private func sendKeepaliveProbe(on connection: StreamConnection) {
        let sm = state.withLock { $0.smEnabled }
        if sm {
            try? connection.send(XMLSerializer.serialize(StreamManagement.request()))
        } else {
            try? connection.send(XMLSerializer.serialize(Ping.request(to: JID(parsing: configuration.jid.domain)).element, parentNamespace: Namespace.client))
        }
    }

    private func finish(connection: StreamConnection, generation: Int, error: ClientError?) {
        let (wasClosing, aborted, pending) = state.withLock { s -> (Bool, ClientError?, [PendingRequest]) in
            guard s.generation == generation else { return (true, nil, []) }
            let closing = s.closing
            let aborted = s.abortReason
            s.abortReason = nil
            s.connection = nil
            let pending = Array(s.pending.values)
            s.pending.removeAll()
            return (closing, aborted, pending)
        }
        connection.close()
        let reason = aborted ?? error ?? (wasClosing ? nil : .disconnected("the server ended the stream"))
        for p in pending { p.continuation.resume(throwing: reason ?? ClientError.notConnected) }
        if let reason { log(.warning, "\(configuration.jid): \(reason)") }
        continuation.yield(.disconnected(reason))
    }

    private func dispatch(_ element: Element, generation: Int) {
        if element.namespace == Namespace.streamManagement {
            handleStreamManagement(element)
            return
        }
        let acknowledgement = state.withLock { s -> Acknowledgement in
            guard s.smEnabled else { return Acknowledgement(sequence: 0, generation: generation, streamID: nil, handledCount: nil) }
            let sequence = s.handled.nextSequence()
            return Acknowledgement(sequence: sequence, generation: generation, streamID: s.resumption?.id, handledCount: s.handled.h(through: sequence))
        }
        if element.name == "iq", element.namespace == Namespace.client, handleIQ(IQ(element), acknowledgement: acknowledgement) {
            return
        }
        if element.name == "message", let queryID = element.child("result", namespace: Namespace.mam)?[attribute: "queryid"] {
            let collected = state.withLock { s -> Bool in
                guard s.archiveCollectors[queryID] != nil else { return false }
                s.archiveCollectors[queryID]!.append(element)
                return true
            }
            // A result is handled once its page is: acknowledging the page covers it.
            if collected { return }
        }
        continuation.yield(.stanza(InboundStanza(element: element, acknowledgement: acknowledgement)))
    }

    private func handleStreamManagement(_ element: Element) {
        switch element.name {
        case "r":
            let h = state.withLock { s -> UInt32 in
                s.lastAckSent = s.handled.ackableH
                return s.lastAckSent
            }
            try? rawSend(StreamManagement.answer(handled: h))
        case "a":
            guard let h = StreamManagement.handledCount(in: element) else { return }
            let failure = state.withLock { s -> String? in
                do { try s.outbound.acknowledge(h) } catch {
                    return "the server acknowledged \(h) stanzas, more than Roost sent"
                }
                return nil
            }
            if let failure {
                // XEP-0198 §4: an `h` above what was sent is a stream error.
                var error = StreamErrorReader.element(condition: "undefined-condition", text: failure)
                error.append(Element("handled-count-too-high", namespace: Namespace.streamManagement,
                                     attributes: [("h", String(h)), ("send-count", String(state.withLock { $0.outbound.sent }))]))
                try? rawSend(error)
                abort(.protocolViolation(failure))
            }
        default:
            log(.debug, "\(configuration.jid): ignoring stream-management <\(element.name)/>")
        }
    }

    /// Answers requests the engine itself implements and resolves pending requests; returns true if consumed.
    private func handleIQ(_ iq: IQ, acknowledgement: Acknowledgement) -> Bool {
        let sequence = acknowledgement.sequence
        switch iq.type {
        case .result, .error:
            let id = iq.id ?? ""
            let account = configuration.jid
            let (request, page) = state.withLock { s -> (PendingRequest?, ArchivePage?) in
                guard let p = s.pending[id], Self.answer(from: iq.from, fromAttribute: iq.fromAttribute, matches: p.expectedFrom, account: account) else { return (nil, nil) }
                s.pending[id] = nil
                var page: ArchivePage?
                if let queryID = s.archiveQueryIDs.removeValue(forKey: id) {
                    let results = s.archiveCollectors.removeValue(forKey: queryID) ?? []
                    page = ArchivePage(queryID: queryID, results: results, fin: iq, acknowledgement: acknowledgement)
                }
                return (p, page)
            }
            if let page {
                // In stream order, before the requester learns the query finished.
                continuation.yield(.archivePage(page))
            } else {
                markHandled(sequence)
            }
            if let request {
                request.continuation.resume(returning: iq)
            } else {
                log(.debug, "\(configuration.jid): dropping an IQ answer nobody asked for (id \(id), from \(iq.fromAttribute ?? "-"))")
            }
            return true
        case .get, .set:
            if iq.payload?.namespace == Namespace.roster { return false }
            markHandled(sequence)
            answerRequest(iq)
            return true
        case nil:
            markHandled(sequence)
            return true
        }
    }

    /// RFC 6120 §8.1.2.1 and §10.1.1: an answer must come from where the request went; a request without
    /// `to` went to the account, so its answer may carry no `from`, the bare JID, or the full JID.
    static func answer(from: JID?, fromAttribute: String?, matches expected: JID?, account: JID) -> Bool {
        guard let expected else {
            guard let fromAttribute else { return true }
            guard let from = JID(parsing: fromAttribute) else { return false }
            return from.bare == account.bare || from == JID(parsing: account.domain)
        }
        if fromAttribute == nil { return expected == account.bare || expected == JID(parsing: account.domain) }
        guard let from else { return false }
        return from == expected
    }

    private func answerRequest(_ iq: IQ) {
        let reply: IQ
        if Ping.isPing(iq) {
            reply = iq.result()
        } else if iq.type == .get, let payload = iq.payload, payload.name == "query", payload.namespace == Namespace.discoInfo {
            reply = iq.result(payload: ownDiscoInfo.element(node: payload[attribute: "node"]))
        } else if iq.type == .get, let payload = iq.payload, payload.name == "query", payload.namespace == Namespace.version {
            var query = Element("query", namespace: Namespace.version)
            query.append(Element("name", namespace: Namespace.version, text: configuration.clientName))
            query.append(Element("version", namespace: Namespace.version, text: configuration.clientVersion))
            reply = iq.result(payload: query)
        } else {
            reply = iq.errorReply(StanzaError(type: "cancel", condition: "service-unavailable"))
        }
        try? send(reply)
    }

    /// What Roost says it is to disco#info and entity caps (XEP-0030, XEP-0115).
    public var ownDiscoInfo: DiscoInfo {
        let base: Set<String> = [Namespace.discoInfo, Namespace.caps, Namespace.ping, Namespace.version, Namespace.chatStates]
        return DiscoInfo(identities: [.init(category: "client", type: "pc", name: configuration.clientName)],
                         features: base.union(configuration.features))
    }

    // MARK: - Handled count (ack after commit)

    /// Declares everything through this stanza (or archive page) handled: call once its archive transaction,
    /// holding `acknowledgement.handledCount`, has committed. Sends an unsolicited `<a/>` when enough has
    /// accumulated, so the server can drop them early. Acknowledgements from an earlier connection are ignored.
    public func acknowledge(_ acknowledgement: Acknowledgement) {
        let h = state.withLock { s -> UInt32? in
            guard s.smEnabled, acknowledgement.sequence > 0, acknowledgement.generation == s.generation else { return nil }
            s.handled.commit(through: acknowledgement.sequence)
            let h = s.handled.ackableH
            guard h &- s.lastAckSent >= 50 else { return nil }
            s.lastAckSent = h
            return h
        }
        if let h { try? rawSend(StreamManagement.answer(handled: h)) }
    }

    /// Same as `acknowledge(_:)` for the current connection (for simple clients that handle in order).
    public func acknowledge(through sequence: UInt64) {
        let generation = state.withLock { $0.generation }
        acknowledge(Acknowledgement(sequence: sequence, generation: generation, streamID: nil, handledCount: nil))
    }

    private func markHandled(_ sequence: UInt64) {
        guard sequence > 0 else { return }
        state.withLock { $0.handled.markHandled(sequence) }
    }

    // MARK: - Sending

    /// Sends a stanza; with stream management it is kept until the server acknowledges it.
    public func send(_ stanza: some Stanza) throws(ClientError) {
        let element = stanza.element
        let connection = try state.withLock { s throws(ClientError) -> StreamConnection in
            guard let c = s.connection, !s.closing else { throw .notConnected }
            if s.smEnabled { s.outbound.append(element) }
            return c
        }
        try connection.send(XMLSerializer.serialize(element, parentNamespace: Namespace.client))
    }

    /// Asks the server to acknowledge what was sent (XEP-0198 `<r/>`).
    public func requestAcknowledgement() {
        if state.withLock({ $0.smEnabled }) { try? rawSend(StreamManagement.request()) }
    }

    /// Number of sent stanzas the server has not acknowledged yet.
    public var unacknowledgedCount: Int { state.withLock { $0.outbound.unacked.count } }

    private func rawSend(_ element: Element) throws(ClientError) {
        guard let connection = state.withLock({ $0.connection }) else { throw .notConnected }
        try connection.send(XMLSerializer.serialize(element, parentNamespace: Namespace.client))
    }

    /// Sends an IQ request and waits for its answer; a `type='error'` answer throws `.stanzaError`.
    public func request(_ iq: IQ, timeout: Duration? = nil) async throws(ClientError) -> IQ {
        var iq = iq
        let id = iq.id ?? StanzaID.make()
        iq.id = id
        let expectedFrom = iq.to
        let limit = timeout ?? configuration.requestTimeout
        let what = "an answer to \(iq.payload?.name ?? "iq") from \(expectedFrom?.description ?? "the server")"
        let outgoing = iq
        let answer: IQ
        do {
            answer = try await withCheckedThrowingContinuation { (c: CheckedContinuation<IQ, any Error>) in
                let registered = state.withLock { s -> Bool in
                    guard s.connection != nil, !s.closing else { return false }
                    s.pending[id] = PendingRequest(expectedFrom: expectedFrom, continuation: c)
                    return true
                }
                guard registered else {
                    c.resume(throwing: ClientError.notConnected)
                    return
                }
                do { try send(outgoing) } catch {
                    if let p = state.withLock({ $0.pending.removeValue(forKey: id) }) { p.continuation.resume(throwing: error) }
                    return
                }
                Task { [weak self] in
                    try? await Task.sleep(for: limit)
                    if let p = self?.state.withLock({ $0.pending.removeValue(forKey: id) }) {
                        p.continuation.resume(throwing: ClientError.timeout(what))
                    }
                }
            }
        } catch let error as ClientError {
            throw error
        } catch {
            throw .disconnected(String(describing: error))
        }
        if answer.type == .error {
            throw .stanzaError(answer.error ?? StanzaError(type: "cancel", condition: "undefined-condition"))
        }
        return answer
    }

    /// Runs one XEP-0313 query page. Its `<result/>` messages are collected instead of going to `events`
    /// one by one, and delivered as one `.archivePage` event where the answer arrived in the stream (so the
    /// layer above archives them in order with live traffic). Returns the answer (`<fin/>`) and the number of
    /// results. Validating each result (its `from`, its query id) is the caller's job.
    public func queryArchive(_ iq: IQ, queryID: String, timeout: Duration? = nil) async throws(ClientError) -> IQ {
        var iq = iq
        let id = iq.id ?? StanzaID.make()
        iq.id = id
        state.withLock {
            $0.archiveCollectors[queryID] = []
            $0.archiveQueryIDs[id] = queryID
        }
        do {
            return try await request(iq, timeout: timeout)
        } catch {
            state.withLock {
                $0.archiveCollectors[queryID] = nil
                $0.archiveQueryIDs[id] = nil
            }
            throw error
        }
    }

    // MARK: - Leaving

    /// Clean logout: acknowledges what was handled, sends unavailable presence and `</stream:stream>`,
    /// waits briefly for the server to close its side, then closes the socket.
    public func disconnect(timeout: Duration = .seconds(3)) async {
        let (connection, h, sm) = state.withLock { s -> (StreamConnection?, UInt32, Bool) in
            let c = s.connection
            return (c, s.handled.ackableH, s.smEnabled)
        }
        guard let connection else { return }
        try? send(Presence(type: .unavailable))
        if sm { try? connection.send(XMLSerializer.serialize(StreamManagement.answer(handled: h))) }
        state.withLock {
            $0.closing = true
            $0.resumption = nil
        }
        try? connection.send("</stream:stream>")
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, state.withLock({ $0.connection != nil }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        connection.close()
    }

    /// Drops the connection without a goodbye, keeping SM state so the next `connect()` can resume
    /// (what a network failure looks like; also used by fault tests).
    public func abort(_ reason: ClientError = .disconnected("aborted")) {
        let connection = state.withLock { s -> StreamConnection? in
            if s.connection != nil { s.abortReason = reason }
            return s.connection
        }
        connection?.close()
    }
}
