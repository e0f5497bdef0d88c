public import RoostCore
import Foundation
import Synchronization

/// The engine's public face: one account's connection, its requests and its inbound events.
///
/// Each connection has two threads of its own: the reader (connect, negotiate, then read, parse and
/// dispatch until the stream ends) and the writer (`StreamConnection`'s write queue). Inbound stanzas
/// reach the layer above through `events`, a bounded queue: when the layer above stops taking (the
/// archive cannot keep up or cannot write), the reader stops reading the socket and the server keeps
/// what is not acknowledged. A client can `connect()` again after a drop and then resumes the
/// stream-management session when the server still holds it.
///
/// The path of one inbound stanza: socket → TLS → parser → `dispatch` (sequence number) → `events` →
/// the layer above archives it → `acknowledge(_:)` after the commit → the writer sends `<a h=…/>`.
public final class XMPPClient: Sendable {
    public let configuration: ClientConfiguration
    /// Everything that happened, in stream order; bounded (back-pressure on the reader).
    public let events: BoundedQueue<ClientEvent>
    private let state: Mutex<State>
    private let log: @Sendable (LogLevel, String) -> Void

    private struct PendingRequest {
        let expectedFrom: JID?
        let continuation: CheckedContinuation<IQ, any Error>
        /// Its deadline, cancelled when the answer (or the end of the connection) comes first.
        var timer: Task<Void, Never>? = nil
    }

    /// A `confirmDelivery` call waiting for the server to acknowledge everything sent up to `upTo`.
    private struct DeliveryWaiter {
        let id: UInt64
        let upTo: UInt32
        let continuation: CheckedContinuation<Bool, Never>
        /// Its deadline, cancelled when the acknowledgement (or the end of the connection) comes first.
        var timer: Task<Void, Never>? = nil

        func resume(returning delivered: Bool) {
            timer?.cancel()
            continuation.resume(returning: delivered)
        }
    }

    private struct State: ~Copyable {
        var connection: StreamConnection?
        /// Starts as the configuration's; the layer above may replace it (a `password_command` run again).
        var password: String
        var boundJID: JID?
        var pending: [String: PendingRequest] = [:]
        /// XEP-0198 for the current session; nil when the server has no stream management.
        var sm: StreamManagementSession?
        var closing = false
        var generation = 0
        /// Extra children of every presence Roost broadcasts (e.g. the XEP-0153 photo hash).
        var presenceExtras: [Element] = []
        /// Why the layer above (or a protocol check) cut the connection; reported instead of the read error it causes.
        var abortReason: ClientError?
        /// Open MAM queries by query id: their results are collected here instead of the event stream.
        var archiveCollectors: [String: [Element]] = [:]
        /// The IQ id of each open MAM query, to deliver its page when the answer arrives.
        var archiveQueryIDs: [String: String] = [:]
        /// The server offers subscription pre-approval (RFC 6121 §3.4: `<sub xmlns='urn:xmpp:features:pre-approval'/>`).
        var preApproval = false
        /// The largest stanza the server accepts (XEP-0478), when it said.
        var serverStanzaLimit: Int?
        /// Woken when the server has acknowledged everything sent up to a count (`confirmDelivery`).
        var deliveryWaiters: [DeliveryWaiter] = []
        var nextDeliveryWaiter: UInt64 = 0
        /// Woken when the reader has finished (clean `disconnect`).
        var finishWaiters: [CheckedContinuation<Void, Never>] = []
        /// When the reader last asked for an acknowledgement on a busy link (`requestAcknowledgementIfDue`).
        var lastAckRequest: ContinuousClock.Instant?
    }

    public init(configuration: ClientConfiguration, resumption: StreamResumptionState? = nil, eventCapacity: Int = 512,
                log: @escaping @Sendable (LogLevel, String) -> Void = { _, _ in }) {
        self.configuration = configuration
        self.log = log
        var s = State(password: configuration.password)
        if let resumption { s.sm = StreamManagementSession(restoring: resumption) }
        state = Mutex(s)
        events = BoundedQueue(capacity: eventCapacity)
    }

    public var boundJID: JID? { state.withLock { $0.boundJID } }

    /// Uses `password` from the next login on (the configuration's is only the first).
    public func updatePassword(_ password: String) {
        state.withLock { $0.password = password }
    }
    public var isConnected: Bool { state.withLock { $0.connection != nil && !$0.closing } }
    /// The resumption state with the committed `h` (what a restarted process may resume with).
    public var resumptionState: StreamResumptionState? { state.withLock { $0.sm?.persistable } }
    /// Whether the server offered subscription pre-approval (RFC 6121 §3.4) on the current stream.
    public var supportsPreApproval: Bool { state.withLock { $0.preApproval } }

    /// The largest stanza Roost may send: the server's XEP-0478 limit when it gave one, else the configured default.
    public var outboundStanzaLimit: Int { state.withLock { $0.serverStanzaLimit } ?? configuration.maxOutboundStanzaBytes }

    // MARK: - Connecting

    /// Connects, negotiates TLS and SASL, binds (or resumes), learns the account's features, sends initial
    /// presence, and starts reading. `events` receives `.connected` before anything of the new session.
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
            thread.name = "roost.xmpp.read.\(configuration.jid)"
            thread.stackSize = 1 << 20
            thread.start()
        }
        return try result.get()
    }

    /// The reader thread: connect, negotiate, hand over the session, then read until the stream ends.
    private func runConnection(purpose: StreamNegotiator.Purpose, done: CheckedContinuation<Result<SessionInfo, ClientError>, Never>) {
        let connection: StreamConnection
        let negotiated: NegotiationResult
        var claimedHandled: UInt32 = 0
        do throws(ClientError) {
            connection = try openConnection()
            let (resumption, password) = state.withLock { ($0.sm?.persistable, $0.password) }
            claimedHandled = resumption?.inboundHandled ?? 0
            var negotiator = StreamNegotiator(jid: configuration.jid, password: password, resource: configuration.resource,
                                              purpose: purpose, streamManagement: configuration.streamManagement,
                                              resumption: resumption, stepTimeout: configuration.requestTimeout,
                                              allowedMechanisms: configuration.saslMechanisms?.map { $0.uppercased() })
            negotiator.discoverAccount = configuration.discoversAccount
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
        let (generation, resend, unconfirmed) = adopt(connection: connection, negotiated: negotiated, claimed: claimedHandled)
        let resumed = if case .resumed = negotiated.streamManagement { true } else { false }
        let info = SessionInfo(boundJID: negotiated.boundJID, mechanism: negotiated.authentication.mechanism,
                               channelBinding: negotiated.authentication.channelBinding,
                               streamManagement: state.withLock { $0.sm != nil }, resumed: resumed,
                               tlsPeerFingerprint: connection.peerCertificateSHA256,
                               tlsProtocol: connection.tlsProtocol, certificatePinned: configuration.pinnedSHA256 != nil,
                               accountFeatures: negotiated.accountFeatures,
                               maxStanzaBytes: negotiated.maxStanzaBytes)
        connection.startWriter(name: "roost.xmpp.write.\(configuration.jid)",
                               acknowledgement: { [weak self] in self?.takeAcknowledgement() },
                               failed: { [weak self] error in self?.writeFailed(error, generation: generation) })
        log(.info, "\(configuration.jid): connected as \(LogText.quote(negotiated.boundJID)) with \(info.mechanism)\(info.channelBinding.map { " (\($0))" } ?? "")\(resumed ? ", session resumed" : "")")
        if let persist = state.withLock({ $0.sm?.persistable }), !resumed { events.put(.resumptionState(persist)) }
        if !unconfirmed.isEmpty { events.put(.unconfirmed(unconfirmed)) }
        events.put(.connected(info))
        for entry in resend { try? enqueue(entry.element, tracking: entry.tracking, checkingSize: false) }
        if !resend.isEmpty { log(.info, "\(configuration.jid): resent \(resend.count) stanzas the server had not acknowledged") }
        for early in negotiated.earlyStanzas {
            switch early {
            case .uncounted(let element): dispatch(element, generation: generation, counted: false)
            case .counted(let element): dispatch(element, generation: generation)
            case .answered: state.withLock { s in
                guard var sm = s.sm else { return }
                sm.inbound.markHandled(sm.receive().sequence)
                s.sm = sm
            }
            }
        }
        if !resumed, configuration.sendsInitialPresence {
            try? send(currentPresence())
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
                let connection = StreamConnection(socket: socket, tls: tls, maxStanzaBytes: configuration.maxStanzaBytes,
                                                  writeTimeout: configuration.keepaliveInterval,
                                                  outboxBytes: configuration.outboundQueueBytes)
                connection.trace = configuration.trace
                if endpoint.directTLS {
                    do { try connection.startDirectTLS(timeout: configuration.connectTimeout) } catch {
                        connection.close()
                        throw error
                    }
                }
                log(.debug, "\(configuration.jid): connected to \(LogText.quote(endpoint.host)):\(endpoint.port)\(endpoint.directTLS ? " (direct TLS)" : "")")
                return connection
            } catch let error as TransportError {
                log(.debug, "\(configuration.jid): \(LogText.quote(error))")
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

    /// Makes the negotiated connection current and settles stream management: a fresh session starts its
    /// counters; a resumed one drops what the server has and returns the rest to be sent again. Tracked
    /// stanzas of a session that could not be resumed are returned as unconfirmed.
    private func adopt(connection: StreamConnection, negotiated: NegotiationResult, claimed: UInt32) -> (Int, [OutboundQueue.Entry], [String]) {
        state.withLock { s in
            s.generation += 1
            s.connection = connection
            s.boundJID = negotiated.boundJID
            s.closing = false
            s.abortReason = nil
            s.serverStanzaLimit = negotiated.maxStanzaBytes
            s.preApproval = negotiated.features.child("sub", namespace: Namespace.preApproval) != nil
            var resend: [OutboundQueue.Entry] = []
            var lost: [OutboundQueue.Entry] = []
            switch negotiated.streamManagement {
            case .enabled(let id, let resumable, let location, let maxSeconds):
                lost = s.sm?.outbound.drain() ?? []
                let resumption = resumable ? id.map { StreamResumptionState(id: $0, inboundHandled: 0, location: location, maxSeconds: maxSeconds) } : nil
                s.sm = StreamManagementSession(resumption: resumption)
            case .resumed(_, let serverHandled):
                resend = s.sm?.resumed(serverHandled: serverHandled, claimed: claimed) ?? []
            case .unavailable, .enableFailed:
                lost = s.sm?.outbound.drain() ?? []
                s.sm = nil
            }
            for element in negotiated.countedStanzas { s.sm?.outbound.append(element) }
            for waiter in s.deliveryWaiters { waiter.resume(returning: false) }
            s.deliveryWaiters.removeAll()
            return (s.generation, resend, lost.compactMap(\.tracking))
        }
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
                // Idle: probe once; if the probe also goes unanswered for half an interval, the link is dead.
                // (A probe that cannot even be written ends the connection through the writer's timeout.)
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
            requestAcknowledgementIfDue(on: connection, every: interval / 2)
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

    /// On a busy link the keepalive probe (the idle `<r/>`) never goes out, and what Roost sent (answers, receipts,
    /// presence) would stay unacknowledged for as long as traffic flows: once the oldest unacknowledged stanza is
    /// `every` old, ask for an acknowledgement — at most once per `every`.
    private func requestAcknowledgementIfDue(on connection: StreamConnection, every: Duration) {
        let now = ContinuousClock.now
        let due = state.withLock { s -> Bool in
            guard let sm = s.sm, let oldest = sm.outbound.oldestQueuedAt, now - oldest >= every else { return false }
            if let last = s.lastAckRequest, now - last < every { return false }
            s.lastAckRequest = now
            return true
        }
        if due { connection.outbox.request() }
    }

    private func sendKeepaliveProbe(on connection: StreamConnection) {
        if state.withLock({ $0.sm != nil }) {
            connection.outbox.request()
        } else {
            try? send(Ping.request(to: JID(parsing: configuration.jid.domain)))
        }
    }

    private func finish(connection: StreamConnection, generation: Int, error: ClientError?) {
        let (wasClosing, aborted, pending, waiters) = state.withLock { s -> (Bool, ClientError?, [PendingRequest], [CheckedContinuation<Void, Never>]) in
            guard s.generation == generation else { return (true, nil, [], []) }
            let closing = s.closing
            let aborted = s.abortReason
            s.abortReason = nil
            s.connection = nil
            let pending = Array(s.pending.values)
            s.pending.removeAll()
            s.archiveCollectors.removeAll()
            s.archiveQueryIDs.removeAll()
            for waiter in s.deliveryWaiters { waiter.resume(returning: false) }
            s.deliveryWaiters.removeAll()
            let waiters = s.finishWaiters
            s.finishWaiters.removeAll()
            return (closing, aborted, pending, waiters)
        }
        connection.close()
        let reason = aborted ?? error ?? (wasClosing ? nil : .disconnected("the server ended the stream"))
        for p in pending {
            p.timer?.cancel()
            p.continuation.resume(throwing: reason ?? ClientError.notConnected)
        }
        if let reason {
            // After Roost's own `</stream:stream>` (a clean stop) the server may close TLS and the socket in any
            // order: how the session ends then is no problem of anyone's.
            log(wasClosing && aborted == nil ? .debug : .warning, "\(configuration.jid): \(LogText.quote(reason))")
        }
        events.put(.disconnected(reason))
        for waiter in waiters { waiter.resume() }
    }

    /// `counted`: false for stanzas that arrived before stream management was enabled (the server does not
    /// count them, so they get no sequence number and need no acknowledgement).
    private func dispatch(_ element: Element, generation: Int, counted: Bool = true) {
        if element.namespace == Namespace.streamManagement {
            handleStreamManagement(element, generation: generation)
            return
        }
        let acknowledgement = state.withLock { s -> Acknowledgement in
            guard counted, var sm = s.sm else { return Acknowledgement(sequence: 0, generation: generation, streamID: nil, handledCount: nil) }
            let (sequence, h) = sm.receive()
            let id = sm.resumption?.id
            s.sm = sm
            return Acknowledgement(sequence: sequence, generation: generation, streamID: id, handledCount: h)
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
        events.put(.stanza(InboundStanza(element: element, acknowledgement: acknowledgement)))
    }

    private func handleStreamManagement(_ element: Element, generation: Int) {
        switch element.name {
        case "r":
            state.withLock { $0.connection }?.outbox.acknowledge()
        case "a":
            guard let h = StreamManagement.handledCount(in: element) else { return }
            let outcome = state.withLock { s -> Result<[String], OutboundQueue.AckError>? in
                guard var sm = s.sm else { return nil }
                defer { s.sm = sm }
                do throws(OutboundQueue.AckError) {
                    let confirmed = try sm.acknowledged(h)
                    let acked = sm.outbound.acked
                    s.deliveryWaiters.removeAll { waiter in
                        guard Int32(bitPattern: acked &- waiter.upTo) >= 0 else { return false }
                        waiter.resume(returning: true)
                        return true
                    }
                    return .success(confirmed)
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let confirmed) where !confirmed.isEmpty:
                events.put(.acknowledged(confirmed))
            case .failure(.tooHigh(_, let sent)):
                // XEP-0198 §4: an `h` above what was sent is a stream error.
                let text = "the server acknowledged \(h) stanzas, more than Roost sent (\(sent))"
                var error = StreamErrorReader.element(condition: "undefined-condition", text: text)
                error.append(Element("handled-count-too-high", namespace: Namespace.streamManagement,
                                     attributes: [("h", String(h)), ("send-count", String(sent))]))
                try? rawSend(error)
                abort(.protocolViolation(text), generation: generation)
            default:
                break
            }
        default:
            log(.debug, "\(configuration.jid): ignoring stream-management <\(LogText.quote(element.name))/>")
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
                guard let p = s.pending[id], Self.answer(from: iq.from, fromAttribute: iq.fromAttribute, matches: p.expectedFrom, account: account,
                                                         bound: s.boundJID) else { return (nil, nil) }
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
                events.put(.archivePage(page))
            } else {
                markHandled(sequence)
            }
            if let request {
                request.timer?.cancel()
                request.continuation.resume(returning: iq)
            } else {
                log(.debug, "\(configuration.jid): dropping an IQ answer nobody asked for (id \(LogText.quote(id)), from \(LogText.quote(iq.fromAttribute ?? "-")))")
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
    /// `to` went to the account, so its answer may carry no `from`, the bare JID, or the full JID. A request
    /// to the account's server may also be answered from this very session's full JID (`bound`): ejabberd
    /// answers an XEP-0077 account removal that way, and only the server can send from that address.
    static func answer(from: JID?, fromAttribute: String?, matches expected: JID?, account: JID, bound: JID? = nil) -> Bool {
        if let expected, let from, let bound, expected == JID(parsing: account.domain), from == bound { return true }
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
    /// holding `acknowledgement.handledCount`, has committed — in stream order. Never blocks and never
    /// touches the socket: when enough has accumulated it asks the connection's writer to send `<a/>`.
    /// Acknowledgements from an earlier connection are ignored.
    public func acknowledge(_ acknowledgement: Acknowledgement) {
        let writer = state.withLock { s -> StreamConnection? in
            guard var sm = s.sm, acknowledgement.sequence > 0, acknowledgement.generation == s.generation else { return nil }
            let due = sm.commit(through: acknowledgement.sequence)
            s.sm = sm
            return due != nil ? s.connection : nil
        }
        writer?.outbox.acknowledge()
    }

    /// Same as `acknowledge(_:)` for the current connection (for simple clients that handle in order).
    public func acknowledge(through sequence: UInt64) {
        let generation = state.withLock { $0.generation }
        acknowledge(Acknowledgement(sequence: sequence, generation: generation, streamID: nil, handledCount: nil))
    }

    private func markHandled(_ sequence: UInt64) {
        guard sequence > 0 else { return }
        state.withLock { $0.sm?.inbound.markHandled(sequence) }
    }

    /// Called by the writer when it writes an acknowledgement: the `<a/>` for what is committed now.
    private func takeAcknowledgement() -> String? {
        guard let h = state.withLock({ s -> UInt32? in
            guard var sm = s.sm else { return nil }
            let h = sm.takeAck()
            s.sm = sm
            return h
        }) else { return nil }
        return XMLSerializer.serialize(StreamManagement.answer(handled: h))
    }

    // MARK: - Sending

    /// Queues a stanza for the writer; with stream management it is kept until the server acknowledges it.
    /// `tracking` names it in `.acknowledged`/`.unconfirmed` events (an outgoing message's origin-id).
    /// Throws `.stanzaTooLarge` above `outboundStanzaLimit`, `.outboundQueueFull` when the server is not
    /// taking what was sent, `.notConnected` between connections.
    public func send(_ stanza: some Stanza, tracking: String? = nil) throws(ClientError) {
        try enqueue(stanza.element, tracking: tracking, checkingSize: true)
    }

    /// Serialises and queues under the client's lock, so the order of the stream-management queue is the
    /// order of the wire.
    private func enqueue(_ element: Element, tracking: String?, checkingSize: Bool) throws(ClientError) {
        let text = XMLSerializer.serialize(element, parentNamespace: Namespace.client)
        let bytes = Array(text.utf8)
        if checkingSize {
            let limit = outboundStanzaLimit
            if bytes.count > limit { throw .stanzaTooLarge(bytes: bytes.count, limit: limit) }
        }
        try state.withLock { s throws(ClientError) in
            guard let c = s.connection, !s.closing else { throw .notConnected }
            guard c.outbox.enqueue(bytes) else { throw c.outbox.isClosed ? .notConnected : .outboundQueueFull }
            s.sm?.outbound.append(element, tracking: tracking)
        }
    }

    /// Waits until the server has acknowledged everything sent so far (XEP-0198: asks with `<r/>`; without
    /// stream management, a ping's answer proves the server has processed what came before it). False on
    /// timeout or when the connection ended first.
    public func confirmDelivery(timeout: Duration = .seconds(15)) async -> Bool {
        let (connection, sm) = state.withLock { ($0.connection, $0.sm != nil) }
        guard let connection else { return false }
        guard sm else {
            return (try? await request(Ping.request(to: JID(parsing: configuration.jid.domain)), timeout: timeout)) != nil
        }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let waiter = state.withLock { s -> UInt64? in
                guard let sm = s.sm, s.connection === connection, sm.outbound.count > 0 else { return nil }
                s.nextDeliveryWaiter &+= 1
                s.deliveryWaiters.append(DeliveryWaiter(id: s.nextDeliveryWaiter, upTo: sm.outbound.sent, continuation: c))
                return s.nextDeliveryWaiter
            }
            guard let waiter else {
                c.resume(returning: state.withLock { $0.connection === connection })
                return
            }
            connection.outbox.request()
            let timer = Task { [weak self] in
                do { try await Task.sleep(for: timeout) } catch { return }
                self?.expireDeliveryWaiter(waiter)
            }
            // Already woken (the acknowledgement came meanwhile): its deadline goes at once.
            let kept = state.withLock { s -> Bool in
                guard let index = s.deliveryWaiters.firstIndex(where: { $0.id == waiter }) else { return false }
                s.deliveryWaiters[index].timer = timer
                return true
            }
            if !kept { timer.cancel() }
        }
    }

    private func expireDeliveryWaiter(_ id: UInt64) {
        let expired = state.withLock { s -> DeliveryWaiter? in
            guard let index = s.deliveryWaiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.deliveryWaiters.remove(at: index)
        }
        expired?.continuation.resume(returning: false)
    }

    /// Asks the server to acknowledge what was sent (XEP-0198 `<r/>`).
    public func requestAcknowledgement() {
        state.withLock { s in s.sm != nil ? s.connection : nil }?.outbox.request()
    }

    /// Number of sent stanzas the server has not acknowledged yet.
    public var unacknowledgedCount: Int { state.withLock { $0.sm?.outbound.count ?? 0 } }

    /// How long the oldest stanza the server has not acknowledged has waited; nil when it acknowledged everything.
    public var oldestUnacknowledgedAge: Duration? {
        state.withLock { $0.sm?.outbound.oldestQueuedAt }.map { ContinuousClock.now - $0 }
    }

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
                let timer = Task { [weak self] in
                    do { try await Task.sleep(for: limit) } catch { return }
                    if let p = self?.state.withLock({ $0.pending.removeValue(forKey: id) }) {
                        p.continuation.resume(throwing: ClientError.timeout(what))
                    }
                }
                // Answered already (a fast server): its deadline goes at once.
                let kept = state.withLock { s -> Bool in
                    guard s.pending[id] != nil else { return false }
                    s.pending[id]?.timer = timer
                    return true
                }
                if !kept { timer.cancel() }
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
    /// layer above archives them in order with live traffic). Returns the answer (`<fin/>`). Validating each
    /// result (its `from`, its query id) is the caller's job.
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
    /// waits (up to `timeout`) for the server to close its side, then closes the socket.
    public func disconnect(timeout: Duration = .seconds(3)) async {
        guard let connection = state.withLock({ $0.connection }) else { return }
        try? send(Presence(type: .unavailable))
        if state.withLock({ $0.sm != nil }) { connection.outbox.acknowledge() }
        state.withLock {
            $0.closing = true
            $0.sm?.resumption = nil
        }
        _ = connection.outbox.enqueue(Array("</stream:stream>".utf8))
        connection.finishWriting()
        // The server closes its side, or the deadline closes ours; whichever is first, the other is cancelled.
        let deadline = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            connection.close()
        }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let finished = state.withLock { s -> Bool in
                guard s.connection === connection else { return true }
                s.finishWaiters.append(c)
                return false
            }
            if finished { c.resume() }
        }
        deadline.cancel()
        connection.close()
    }

    /// Drops the connection without a goodbye, keeping SM state so the next `connect()` can resume
    /// (what a network failure looks like; also used by fault tests and when the archive cannot write).
    public func abort(_ reason: ClientError = .disconnected("aborted")) {
        let generation = state.withLock { $0.generation }
        abort(reason, generation: generation)
    }

    /// A write failed. When the server closed the connection (a reset, a broken pipe) what it sent before closing
    /// is still in the socket — often the answer a request waits for, as when an account is deleted and the
    /// server answers, then closes — so the reader gets a moment to read it before the socket is closed.
    /// A stalled write (or any other failure) closes at once.
    private func writeFailed(_ error: ClientError, generation: Int) {
        guard case .transport(.ioError) = error else { return abort(error, generation: generation) }
        state.withLock { s in
            if s.generation == generation, s.abortReason == nil { s.abortReason = error }
        }
        Task { [weak self] in
            try? await Task.sleep(for: .seconds(5))
            self?.abort(error, generation: generation)
        }
    }

    private func abort(_ reason: ClientError, generation: Int) {
        let connection = state.withLock { s -> StreamConnection? in
            guard s.generation == generation, let c = s.connection else { return nil }
            if s.abortReason == nil { s.abortReason = reason }
            return c
        }
        connection?.close()
    }
}
