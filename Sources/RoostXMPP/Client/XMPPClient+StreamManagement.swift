import RoostCore
import Synchronization

/// XEP-0198 on the client's side: the handled count (ack after commit), the acknowledgements the server sends,
/// and waiting for them.
///
/// One owner: the stream-management bookkeeping (`StreamManagementOwner`: the counts, the unacknowledged queue,
/// the delivery waiters) is touched only by the reader thread of the current connection, which counts what
/// arrives, reads the server's `<r/>` and `<a/>`, and hands the writer the `h` to send. The other threads send it
/// messages (`StreamManagementMailbox`): the session "committed through N", a sender "sent stanza S",
/// `confirmDelivery` "tell me when the server has everything sent so far", `disconnect` "closing". The reader
/// applies them, in order, before each element it reads and whenever a message wakes it; what others read
/// (`resumptionState`, `unacknowledgedCount`) is what it published.
extension XMPPClient {
    // MARK: - Handled count (ack after commit)

    /// Declares everything through this stanza (or archive page) handled: call once its archive transaction,
    /// holding `acknowledgement.handledCount`, has committed — in stream order. Never blocks and never
    /// touches the socket: a message to the reader, which asks the connection's writer to send `<a/>` when enough
    /// has accumulated. Acknowledgements from an earlier connection are ignored.
    public func acknowledge(_ acknowledgement: Acknowledgement) {
        guard acknowledgement.sequence > 0 else { return }
        streamManagement.mailbox.post(.committed(sequence: acknowledgement.sequence, generation: acknowledgement.generation))
    }

    /// Same as `acknowledge(_:)` for the current connection (for simple clients that handle in order).
    public func acknowledge(through sequence: UInt64) {
        let generation = state.withLock { $0.generation }
        acknowledge(Acknowledgement(sequence: sequence, generation: generation, streamID: nil, handledCount: nil))
    }

    /// A stanza the engine handled itself (answered or consumed). On the reader only.
    func markHandled(_ sequence: UInt64) {
        guard sequence > 0 else { return }
        streamManagement.session?.inbound.markHandled(sequence)
    }

    // MARK: - The server's acknowledgements

    /// Waits until the server has acknowledged everything sent so far (XEP-0198: asks with `<r/>`; without
    /// stream management, a ping's answer proves the server has processed what came before it). False on
    /// timeout or when the connection ended first.
    public func confirmDelivery(timeout: Duration = .seconds(15)) async -> Bool {
        guard state.withLock({ $0.connection != nil }) else { return false }
        guard streamManagement.mailbox.isEnabled else {
            return (try? await request(Ping.request(to: JID(parsing: configuration.jid.domain)), timeout: timeout)) != nil
        }
        // The reader answers at once when nothing is unacknowledged, else asks with `<r/>` and answers at the `<a/>`.
        let delivered = OneShot<Bool>()
        streamManagement.mailbox.post(.awaitDelivery(delivered))
        // The acknowledgement, the end of the connection or the deadline: the first fulfils, the timer goes.
        let timer = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            delivered.fulfil(false)
        }
        let result = await delivered.value
        timer.cancel()
        return result
    }

    /// Asks the server to acknowledge what was sent (XEP-0198 `<r/>`).
    public func requestAcknowledgement() {
        guard streamManagement.mailbox.isEnabled else { return }
        state.withLock { $0.connection }?.outbox.request()
    }

    /// Number of sent stanzas the server has not acknowledged yet.
    public var unacknowledgedCount: Int { streamManagement.mailbox.unacknowledgedCount }

    /// How long the oldest stanza the server has not acknowledged has waited; nil when it acknowledged everything.
    public var oldestUnacknowledgedAge: Duration? {
        streamManagement.mailbox.oldestQueuedAt.map { ContinuousClock.now - $0 }
    }

    /// The stream-management module's handler, on the reader: `<r/>` hands the writer an `<a/>` with the committed
    /// `h`; `<a/>` drops what the server has from the unacknowledged queue and wakes `confirmDelivery`. An `h` above
    /// what was sent is a protocol violation: Roost sends the stream error of XEP-0198 §4 and drops the connection.
    func handleStreamManagement(_ element: Element, generation: Int) {
        let outbox = state.withLock { $0.generation == generation ? $0.connection?.outbox : nil }
        switch element.name {
        case "r":
            streamManagement.sendAcknowledgement(to: outbox)
        case "a":
            guard let h = StreamManagement.handledCount(in: element) else { return }
            do throws(OutboundQueue.AckError) {
                let confirmed = try streamManagement.serverAcknowledged(h)
                if !confirmed.isEmpty { events.put(.acknowledged(confirmed)) }
            } catch {
                guard case .tooHigh(_, let sent) = error else { return }
                // XEP-0198 §4: an `h` above what was sent is a stream error.
                let text = "the server acknowledged \(h) stanzas, more than Roost sent (\(sent))"
                var streamError = StreamErrorReader.element(condition: "undefined-condition", text: text)
                streamError.append(Element("handled-count-too-high", namespace: Namespace.streamManagement,
                                           attributes: [("h", String(h)), ("send-count", String(sent))]))
                try? rawSend(streamError)
                abort(.protocolViolation(text), generation: generation)
            }
        default:
            log(.debug, "\(configuration.jid): ignoring stream-management <\(LogText.quote(element.name))/>")
        }
    }
}

/// The stream-management bookkeeping of one client and its one owner, the reader thread of the current connection.
/// A connection's reader takes it over once the previous reader has ended (`XMPPClient.runConnection` waits for
/// it), so it spans connections as a resumed session must. No other thread touches `session` or the waiters:
/// they post to `mailbox`, which the owner drains with `settle`.
final class StreamManagementOwner: @unchecked Sendable {
    /// A `confirmDelivery` call waiting for the server to acknowledge everything sent up to `upTo`: true when it
    /// did, false when the connection ended first (or, from the call's own timer, the deadline passed).
    private struct DeliveryWaiter {
        let upTo: UInt32
        let delivered: OneShot<Bool>
    }

    let mailbox = StreamManagementMailbox()
    // Owned by the reader thread (see above).
    /// XEP-0198 for the current session; nil when the server has no stream management.
    var session: StreamManagementSession?
    /// The connection whose sequence numbers `session` counts (commits of another are ignored).
    var generation = 0
    /// When the reader last asked for an acknowledgement on a busy link (`XMPPClient.requestAcknowledgementIfDue`).
    var lastAckRequest: ContinuousClock.Instant?
    private var deliveryWaiters: [DeliveryWaiter] = []
    /// `.sent` messages applied since the last `publish`, and their bytes.
    private var takenSent = (count: 0, bytes: 0)

    init(restoring resumption: StreamResumptionState?) {
        session = resumption.map { StreamManagementSession(restoring: $0) }
        publish()
    }

    /// Applies what the other threads posted, in order. `outbox`: the current connection's, where an `<a/>` that
    /// became due goes and where an `<r/>` asks for what a delivery waiter waits for; nil between connections
    /// (a waiter then hears false).
    func settle(outbox: Outbox?) {
        let messages = mailbox.take()
        guard !messages.isEmpty else { return }
        var ackDue = false
        var requestDue = false
        var closed: [OneShot<Void>] = []
        for message in messages {
            switch message {
            case .committed(let sequence, let generation):
                guard generation == self.generation, session?.commit(through: sequence) != nil else { continue }
                ackDue = true
            case .sent(let entry):
                takenSent.count += 1
                takenSent.bytes += entry.bytes
                session?.outbound.append(entry)
            case .awaitDelivery(let delivered):
                guard outbox != nil, let session else {
                    delivered.fulfil(false)
                    continue
                }
                if session.outbound.count == 0 {
                    delivered.fulfil(true)
                } else {
                    deliveryWaiters.append(DeliveryWaiter(upTo: session.outbound.sent, delivered: delivered))
                    requestDue = true
                }
            case .closing(let done):
                session?.resumption = nil
                ackDue = ackDue || session != nil
                closed.append(done)
            }
        }
        if ackDue { sendAcknowledgement(to: outbox) } else { publish() }
        if requestDue { outbox?.request() }
        // After the `<a/>` is in the write queue: `disconnect` queues the stream's end behind it.
        for done in closed { done.fulfil(()) }
    }

    /// Hands the writer an `<a/>` with the committed `h` (the answer to `<r/>`, or unsolicited once due).
    func sendAcknowledgement(to outbox: Outbox?) {
        if let outbox, var sm = session {
            outbox.acknowledge(sm.takeAck())
            session = sm
        }
        publish()
    }

    /// The server's `<a h/>`: the tracking ids of what it confirmed; wakes the delivery waiters it satisfies.
    func serverAcknowledged(_ h: UInt32) throws(OutboundQueue.AckError) -> [String] {
        guard var sm = session else { return [] }
        let confirmed = try sm.acknowledged(h)
        session = sm
        let acked = sm.outbound.acked
        deliveryWaiters.removeAll { waiter in
            guard Int32(bitPattern: acked &- waiter.upTo) >= 0 else { return false }
            waiter.delivered.fulfil(true)
            return true
        }
        publish()
        return confirmed
    }

    /// The connection ended (or a new one replaced it): nobody waits for its acknowledgements any more.
    func endDeliveryWaits() {
        for waiter in deliveryWaiters { waiter.delivered.fulfil(false) }
        deliveryWaiters.removeAll()
    }

    /// Tells the other threads what they may read: whether stream management is on, the resumption state with
    /// the committed `h`, the unacknowledged queue's size.
    func publish() {
        mailbox.publish(StreamManagementMailbox.Published(
            enabled: session != nil, resumption: session?.persistable, unacknowledged: session?.outbound.count ?? 0,
            unacknowledgedBytes: session?.outbound.bytes ?? 0, oldestQueuedAt: session?.outbound.oldestQueuedAt,
            generation: generation, ackDue: session?.unsolicitedAckDue ?? .max), taken: takenSent)
        takenSent = (0, 0)
    }
}

/// Messages to the stream-management bookkeeping's owner (`StreamManagementOwner`, the reader thread), and what the
/// owner published for the others to read. Never drops a message: one the current reader did not take is taken
/// by the next connection's, before it negotiates (so a commit after a drop still counts in `<resume h/>`).
final class StreamManagementMailbox: Sendable {
    enum Message: Sendable {
        /// The layer above committed everything through this sequence number of that connection (`acknowledge`).
        case committed(sequence: UInt64, generation: Int)
        /// A counted stanza went into the connection's write queue (`XMPPClient.enqueue`: in the queue's order).
        case sent(OutboundQueue.Entry)
        /// `confirmDelivery`: fulfilled with true once the server has acknowledged everything sent before it.
        case awaitDelivery(OneShot<Bool>)
        /// `disconnect`: hand the writer the committed `h` and forget the resumption; fulfilled once done.
        case closing(OneShot<Void>)
    }

    /// What the owner last published.
    struct Published: Sendable {
        var enabled = false
        var resumption: StreamResumptionState?
        var unacknowledged = 0
        var unacknowledgedBytes = 0
        var oldestQueuedAt: ContinuousClock.Instant?
        /// The connection whose commits count, and the first of its sequences whose commit makes an `<a/>` due.
        var generation = 0
        var ackDue: UInt64 = 0
    }

    private struct State {
        var messages: [Message] = []
        var published = Published()
        /// `.sent` posted and not yet published by the owner as part of its queue: counted with it.
        var pendingSent = 0
        var pendingBytes = 0
        /// Wakes the owner's wait (`ClientChannel.wake`); nil between connections.
        var wake: (@Sendable () -> Void)?
        /// A wake-up is on its way: more messages need none until the owner takes them.
        var woken = false
    }

    private let state = Mutex(State())

    /// Posts a message and wakes the reader (`.sent` goes through `postSent` instead). Commits arrive in stream
    /// order, so a commit right behind another of the same connection replaces it: while the reader cannot take
    /// (blocked on a full `events`), a flood of commits holds one message, not one per stanza. A commit wakes the
    /// reader only when it makes an unsolicited `<a/>` due (`Published.ackDue`); the others wait for the next element
    /// it reads (the server's `<r/>` is answered with them).
    func post(_ message: Message) {
        let wake = state.withLock { s -> (@Sendable () -> Void)? in
            var urgent = true
            if case .committed(let sequence, let generation) = message {
                urgent = generation == s.published.generation && sequence >= s.published.ackDue
                if case .committed(let previous, generation)? = s.messages.last {
                    s.messages[s.messages.count - 1] = .committed(sequence: max(sequence, previous), generation: generation)
                } else {
                    s.messages.append(message)
                }
            } else {
                s.messages.append(message)
            }
            guard urgent, !s.woken else { return nil }
            s.woken = s.wake != nil
            return s.wake
        }
        wake?()
    }

    /// The bytes the unacknowledged queue holds (the owner's, with what was posted since) when a stanza `bytes`
    /// long does not fit (`OutboundQueue.capacityBytes`: anything fits into an empty one); nil when it does. The
    /// senders ask under the client's lock, and only the owner's acknowledgements change the answer meanwhile
    /// (making room), so the `postSent` after it keeps the bound.
    func unacknowledgedBytes(ifNoRoomFor bytes: Int) -> Int? {
        state.withLock { s -> Int? in
            let held = s.published.unacknowledgedBytes + s.pendingBytes
            return held == 0 || held + bytes <= OutboundQueue.capacityBytes ? nil : held
        }
    }

    /// A counted stanza went into the write queue: called under the client's lock, right after the write queue's
    /// `enqueue`, so both keep one order. It wakes nobody: the reader takes it before the next element it reads,
    /// in time for the `<a/>` that confirms it.
    func postSent(_ entry: OutboundQueue.Entry) {
        state.withLock { s in
            s.messages.append(.sent(entry))
            s.pendingSent += 1
            s.pendingBytes += entry.bytes
        }
    }

    /// The owner: everything posted since it last took, oldest first.
    func take() -> [Message] {
        state.withLock { s in
            s.woken = false
            guard !s.messages.isEmpty else { return [] }
            defer { s.messages.removeAll(keepingCapacity: true) }
            return s.messages
        }
    }

    /// The owner: its state after a change; `taken` the `.sent` it applied since it last published (no longer pending).
    func publish(_ published: Published, taken: (count: Int, bytes: Int)) {
        state.withLock { s in
            s.published = published
            s.pendingSent -= taken.count
            s.pendingBytes -= taken.bytes
        }
    }

    /// The owner: what wakes it while it waits for the server (nil between connections).
    func setWake(_ wake: (@Sendable () -> Void)?) {
        state.withLock { s in
            s.wake = wake
            s.woken = false
        }
        // Whatever was posted before the reader could be woken is taken at its first wait.
        if let wake, state.withLock({ !$0.messages.isEmpty }) { wake() }
    }

    var isEnabled: Bool { state.withLock { $0.published.enabled } }
    var resumption: StreamResumptionState? { state.withLock { $0.published.resumption } }
    var unacknowledgedCount: Int { state.withLock { $0.published.unacknowledged + $0.pendingSent } }

    var oldestQueuedAt: ContinuousClock.Instant? {
        state.withLock { s in
            if let oldest = s.published.oldestQueuedAt { return oldest }
            for case .sent(let entry) in s.messages { return entry.queuedAt }
            return nil
        }
    }
}
