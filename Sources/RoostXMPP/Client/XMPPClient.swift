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
/// the layer above archives it → `acknowledge(_:)` after the commit, a message to the reader, which owns the
/// stream-management counts (`StreamManagementOwner`) → the reader hands the writer the `h` → `<a h=…/>`.
///
/// The client is the connection; what each protocol extension does with the stream is its module's
/// (`ClientModule`: ping, disco, version, stream management, archive paging, roster pushes), and the disco#info
/// answer is built from the registered modules. The connection comes from a `ChannelFactory` (the real
/// `StreamConnection` by default), so the client runs as well against a scripted channel in memory.
/// Requests, answers and archive pages: `XMPPClient+Requests.swift`; stream management (acknowledgements both
/// ways): `XMPPClient+StreamManagement.swift`.
public final class XMPPClient: Sendable {
    public let configuration: ClientConfiguration
    /// Everything that happened, in stream order; bounded (back-pressure on the reader).
    public let events: BoundedQueue<ClientEvent>
    let state: Mutex<State>
    /// XEP-0198's bookkeeping, owned by the connection's reader thread; the others post to its mailbox.
    let streamManagement: StreamManagementOwner
    let log: @Sendable (LogLevel, String) -> Void
    /// The built-in modules and the configuration's, by what they handle.
    let routes: ModuleRoutes
    private let openChannel: ChannelFactory

    struct PendingRequest {
        let expectedFrom: JID?
        let continuation: CheckedContinuation<IQ, any Error>
        /// Its deadline, cancelled when the answer (or the end of the connection) comes first.
        var timer: Task<Void, Never>? = nil
    }

    struct State: ~Copyable {
        var connection: (any ClientChannel)?
        /// Starts as the configuration's; the layer above may replace it (a `password_command` run again).
        var password: String
        var boundJID: JID?
        var pending: [String: PendingRequest] = [:]
        var closing = false
        var generation = 0
        /// Extra children of every presence Roost broadcasts (e.g. the XEP-0153 photo hash).
        var presenceExtras: [Element] = []
        /// Why the layer above (or a protocol check) cut the connection; reported instead of the read error it causes.
        var abortReason: ClientError?
        /// Open MAM queries: their results are collected here instead of the event stream (bounded, see there).
        var archive = ArchiveCollector()
        /// The server offers subscription pre-approval (RFC 6121 §3.4: `<sub xmlns='urn:xmpp:features:pre-approval'/>`).
        var preApproval = false
        /// The largest stanza the server accepts (XEP-0478), when it said.
        var serverStanzaLimit: Int?
        /// Fulfilled when the current connection's reader has finished (clean `disconnect` waits for it).
        var connectionEnded = OneShot<Void>()
        /// Fulfilled when the last reader thread started has ended: the next one waits for it before it takes
        /// over the stream-management bookkeeping (`StreamManagementOwner`).
        var readerEnded: OneShot<Void>?
        /// Stanzas refused on this connection because the server left too much unacknowledged (`enqueue`).
        var refusedUnacknowledged = 0
    }

    public convenience init(configuration: ClientConfiguration, resumption: StreamResumptionState? = nil, eventCapacity: Int = 512,
                            log: @escaping @Sendable (LogLevel, String) -> Void = { _, _ in }) {
        self.init(configuration: configuration, resumption: resumption, eventCapacity: eventCapacity, log: log,
                  openChannel: StreamConnection.open)
    }

    /// `openChannel` makes the connection of each `connect()`.
    package init(configuration: ClientConfiguration, resumption: StreamResumptionState? = nil, eventCapacity: Int = 512,
                 log: @escaping @Sendable (LogLevel, String) -> Void = { _, _ in }, openChannel: @escaping ChannelFactory) {
        self.configuration = configuration
        self.log = log
        self.openChannel = openChannel
        routes = ModuleRoutes(ClientModule.builtIn + configuration.modules)
        state = Mutex(State(password: configuration.password))
        streamManagement = StreamManagementOwner(restoring: resumption)
        events = BoundedQueue(capacity: eventCapacity)
    }

    public var boundJID: JID? { state.withLock { $0.boundJID } }

    /// Uses `password` from the next login on (the configuration's is only the first).
    public func updatePassword(_ password: String) {
        state.withLock { $0.password = password }
    }
    public var isConnected: Bool { state.withLock { $0.connection != nil && !$0.closing } }
    /// The resumption state with the committed `h` (what a restarted process may resume with).
    public var resumptionState: StreamResumptionState? { streamManagement.mailbox.resumption }
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
            startThread(named: "roost.xmpp.read.\(configuration.jid)", stackSize: 1 << 20) { [self] in
                self.runConnection(purpose: purpose, done: done)
            }
        }
        return try result.get()
    }

    /// The reader thread: connect, negotiate, hand over the session, then read until the stream ends. It owns the
    /// stream-management bookkeeping from when the previous reader has ended to its own end.
    private func runConnection(purpose: StreamNegotiator.Purpose, done: CheckedContinuation<Result<SessionInfo, ClientError>, Never>) {
        let ended = OneShot<Void>()
        let previousReader = state.withLock { s -> OneShot<Void>? in
            defer { s.readerEnded = ended }
            return s.readerEnded
        }
        defer { ended.fulfil(()) }
        previousReader?.wait()
        // What was posted since the last reader took its messages (a commit after the drop counts in `<resume h/>`).
        streamManagement.settle(outbox: nil)
        let connection: any ClientChannel
        let negotiated: NegotiationResult
        var claimedHandled: UInt32 = 0
        do throws(ClientError) {
            connection = try openChannel(configuration, log)
            let resumption = streamManagement.session?.persistable
            let password = state.withLock { $0.password }
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
        let (generation, resend, confirmed, unconfirmed) = adopt(connection: connection, negotiated: negotiated, claimed: claimedHandled)
        let resumed = if case .resumed = negotiated.streamManagement { true } else { false }
        let info = SessionInfo(boundJID: negotiated.boundJID, mechanism: negotiated.authentication.mechanism,
                               channelBinding: negotiated.authentication.channelBinding,
                               streamManagement: streamManagement.session != nil, resumed: resumed,
                               tlsPeerFingerprint: connection.peerCertificateSHA256,
                               tlsProtocol: connection.tlsProtocol, certificatePinned: configuration.pinnedSHA256 != nil,
                               accountFeatures: negotiated.accountFeatures,
                               maxStanzaBytes: negotiated.maxStanzaBytes)
        connection.startWriter(name: "roost.xmpp.write.\(configuration.jid)",
                               failed: { [weak self] error in self?.writeFailed(error, generation: generation) })
        log(.info, "\(configuration.jid): connected as \(LogText.quote(negotiated.boundJID)) with \(info.mechanism)\(info.channelBinding.map { " (\($0))" } ?? "")\(resumed ? ", session resumed" : "")")
        if let persist = streamManagement.session?.persistable, !resumed { events.put(.resumptionState(persist)) }
        if !unconfirmed.isEmpty { events.put(.unconfirmed(unconfirmed)) }
        events.put(.connected(info))
        // What `<resumed h/>` says the server has is delivered, as if an `<a/>` had said so before the link broke.
        if !confirmed.isEmpty { events.put(.acknowledged(confirmed)) }
        for entry in resend { try? enqueue(entry.element, tracking: entry.tracking, checkingSize: false) }
        if !resend.isEmpty { log(.info, "\(configuration.jid): resent \(resend.count) stanzas the server had not acknowledged") }
        for early in negotiated.earlyStanzas {
            switch early {
            case .uncounted(let element): dispatch(element, generation: generation, counted: false)
            case .counted(let element): dispatch(element, generation: generation)
            case .answered:
                if let sequence = streamManagement.session?.receive().sequence { markHandled(sequence) }
            }
        }
        if !resumed, configuration.sendsInitialPresence {
            try? send(currentPresence())
        }
        done.resume(returning: .success(info))
        readLoop(connection: connection, generation: generation)
    }

    /// Makes the negotiated connection current and settles stream management: a fresh session starts its
    /// counters; a resumed one drops what the server has and returns the rest to be sent again. Tracked
    /// stanzas of a session that could not be resumed are returned as unconfirmed. On the reader, which owns the
    /// stream-management bookkeeping: it publishes it before the connection is current (senders read whether it is on).
    private func adopt(connection: any ClientChannel, negotiated: NegotiationResult, claimed: UInt32)
        -> (generation: Int, resend: [OutboundQueue.Entry], confirmed: [String], unconfirmed: [String]) {
        let sm = streamManagement
        var resend: [OutboundQueue.Entry] = []
        var confirmed: [OutboundQueue.Entry] = []
        var lost: [OutboundQueue.Entry] = []
        switch negotiated.streamManagement {
        case .enabled(let id, let resumable, let location, let maxSeconds):
            lost = sm.session?.outbound.drain() ?? []
            let resumption = resumable ? id.map { StreamResumptionState(id: $0, inboundHandled: 0, location: location, maxSeconds: maxSeconds) } : nil
            sm.session = StreamManagementSession(resumption: resumption)
        case .resumed(_, let serverHandled):
            let resumption = sm.session?.resumed(serverHandled: serverHandled, claimed: claimed) ?? OutboundQueue.Resumption()
            (resend, confirmed, lost) = (resumption.resend, resumption.confirmed, resumption.unknown)
        case .unavailable, .enableFailed:
            lost = sm.session?.outbound.drain() ?? []
            sm.session = nil
        }
        for element in negotiated.countedStanzas { sm.session?.outbound.append(element) }
        sm.endDeliveryWaits()
        sm.lastAckRequest = nil
        let generation = state.withLock { s in
            s.generation += 1
            sm.generation = s.generation
            sm.publish()
            s.connection = connection
            s.connectionEnded = OneShot()
            s.boundJID = negotiated.boundJID
            s.closing = false
            s.abortReason = nil
            s.refusedUnacknowledged = 0
            s.serverStanzaLimit = negotiated.maxStanzaBytes
            s.preApproval = negotiated.features.child("sub", namespace: Namespace.preApproval) != nil
            return s.generation
        }
        sm.mailbox.setWake { [weak connection] in connection?.wake() }
        return (generation, resend, confirmed.compactMap(\.tracking), lost.compactMap(\.tracking))
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

    /// Reads, and between elements applies what was posted to the stream-management bookkeeping (a message wakes
    /// the wait for the server).
    private func readLoop(connection: any ClientChannel, generation: Int) {
        let interval = configuration.keepaliveInterval
        var probeSentAt: ContinuousClock.Instant?
        var quietSince = ContinuousClock.now
        var endError: ClientError?
        loop: while true {
            let quiet = ContinuousClock.now - quietSince
            if quiet >= interval / 2 {
                // Idle: probe once; if the probe also goes unanswered for half an interval, the link is dead.
                // (A probe that cannot even be written ends the connection through the writer's timeout.)
                if probeSentAt != nil {
                    endError = .timeout("the server to answer a keepalive")
                    break
                }
                probeSentAt = .now
                quietSince = .now
                sendKeepaliveProbe(on: connection)
                continue
            }
            let event: XMLStreamParser.Event?
            do {
                event = try connection.pollEvent(timeout: interval / 2 - quiet)
            } catch {
                endError = error
                break
            }
            streamManagement.settle(outbox: connection.outbox)
            guard let event else { continue }
            probeSentAt = nil
            quietSince = .now
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
    private func requestAcknowledgementIfDue(on connection: any ClientChannel, every: Duration) {
        let now = ContinuousClock.now
        guard let oldest = streamManagement.session?.outbound.oldestQueuedAt, now - oldest >= every else { return }
        if let last = streamManagement.lastAckRequest, now - last < every { return }
        streamManagement.lastAckRequest = now
        connection.outbox.request()
    }

    private func sendKeepaliveProbe(on connection: any ClientChannel) {
        if streamManagement.session != nil {
            connection.outbox.request()
        } else {
            try? send(Ping.request(to: JID(parsing: configuration.jid.domain)))
        }
    }

    private func finish(connection: any ClientChannel, generation: Int, error: ClientError?) {
        let (wasClosing, aborted, pending, ended) = state.withLock { s -> (Bool, ClientError?, [PendingRequest], OneShot<Void>?) in
            guard s.generation == generation else { return (true, nil, [], nil) }
            let closing = s.closing
            let aborted = s.abortReason
            s.abortReason = nil
            s.connection = nil
            let pending = Array(s.pending.values)
            s.pending.removeAll()
            s.archive.removeAll()
            return (closing, aborted, pending, s.connectionEnded)
        }
        connection.close()
        // The bookkeeping stays for a resumption; messages posted from now on wait for the next reader.
        streamManagement.mailbox.setWake(nil)
        streamManagement.settle(outbox: nil)
        streamManagement.endDeliveryWaits()
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
        ended?.fulfil(())
    }

    /// `counted`: false for stanzas that arrived before stream management was enabled (the server does not
    /// count them, so they get no sequence number and need no acknowledgement). Stream-level elements go to their
    /// module uncounted; a stanza gets its sequence number, then its module (an IQ's, a message's) or `events`.
    private func dispatch(_ element: Element, generation: Int, counted: Bool = true) {
        if let handle = routes.nonza(element.namespace) {
            handle(element, self, generation)
            return
        }
        let acknowledgement: Acknowledgement
        if counted, let (sequence, h) = streamManagement.session?.receive() {
            acknowledgement = Acknowledgement(sequence: sequence, generation: generation, streamID: streamManagement.session?.resumption?.id,
                                              handledCount: h)
        } else {
            acknowledgement = Acknowledgement(sequence: 0, generation: generation, streamID: nil, handledCount: nil)
        }
        if element.name == "iq", element.namespace == Namespace.client, handleIQ(IQ(element), acknowledgement: acknowledgement) {
            return
        }
        // A message a module takes (an archive result) is handled with what the module delivers (its page).
        if element.name == "message", routes.take(message: element, acknowledgement: acknowledgement, client: self) {
            return
        }
        events.put(.stanza(InboundStanza(element: element, acknowledgement: acknowledgement)))
    }

    /// Answers (`result`, `error`) resolve their request; requests (`get`, `set`) go to the module registered for
    /// their payload's namespace, `service-unavailable` when there is none. Returns true if consumed.
    private func handleIQ(_ iq: IQ, acknowledgement: Acknowledgement) -> Bool {
        switch iq.type {
        case .result, .error:
            answered(iq, acknowledgement: acknowledgement)
            return true
        case .get, .set:
            let reply: IQ
            switch routes.request(iq, client: self) {
            case .deliver: return false
            case .answer(let answer): reply = answer
            case .unsupported: reply = iq.errorReply(StanzaError(type: "cancel", condition: "service-unavailable"))
            }
            markHandled(acknowledgement.sequence)
            try? send(reply)
            return true
        case nil:
            markHandled(acknowledgement.sequence)
            return true
        }
    }

    /// What Roost says it is to disco#info and entity caps (XEP-0030, XEP-0115).
    public var ownDiscoInfo: DiscoInfo {
        DiscoInfo(identities: [.init(category: "client", type: "pc", name: configuration.clientName)], features: routes.features)
    }

    // MARK: - Leaving

    /// Clean logout: acknowledges what was handled, sends unavailable presence and `</stream:stream>`,
    /// waits (up to `timeout`) for the server to close its side, then closes the socket.
    public func disconnect(timeout: Duration = .seconds(3)) async {
        guard let connection = state.withLock({ $0.connection }) else { return }
        try? send(Presence(type: .unavailable))
        state.withLock { $0.closing = true }
        // The reader hands the writer the committed `h` and forgets the resumption; the stream's end goes behind it.
        // A reader that cannot take the message (blocked on a full `events`) does it later, without that `<a/>`.
        if streamManagement.mailbox.isEnabled {
            let acknowledged = OneShot<Void>()
            streamManagement.mailbox.post(.closing(acknowledged))
            let late = Task {
                do { try await Task.sleep(for: min(timeout, .seconds(1))) } catch { return }
                acknowledged.fulfil(())
            }
            await acknowledged.value
            late.cancel()
        }
        _ = connection.outbox.enqueue(Array("</stream:stream>".utf8))
        connection.finishWriting()
        // The server closes its side, or the deadline closes ours; whichever is first, the other is cancelled.
        let deadline = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            connection.close()
        }
        if let ended = state.withLock({ $0.connection === connection ? $0.connectionEnded : nil }) {
            await ended.value
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

    func abort(_ reason: ClientError, generation: Int) {
        let connection = state.withLock { s -> (any ClientChannel)? in
            guard s.generation == generation, let c = s.connection else { return nil }
            if s.abortReason == nil { s.abortReason = reason }
            return c
        }
        connection?.close()
    }
}
