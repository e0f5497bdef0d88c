import RoostCore

/// XEP-0198 Stream Management: counting stanzas so nothing is lost across a dropped connection.
///
/// Roost counts an inbound stanza as handled only after the layer above has committed it (ack after commit),
/// so `h` is driven by `HandledCounter`, not by the parser.
public enum StreamManagement {
    public static let namespace = Namespace.streamManagement

    public static func enable(resume: Bool, max: Int? = nil) -> Element {
        var e = Element("enable", namespace: namespace)
        if resume { e[attribute: "resume"] = "true" }
        if let max { e[attribute: "max"] = String(max) }
        return e
    }

    public static func resume(previousID: String, handled: UInt32) -> Element {
        Element("resume", namespace: namespace, attributes: [("previd", previousID), ("h", String(handled))])
    }

    public static func request() -> Element { Element("r", namespace: namespace) }

    public static func answer(handled: UInt32) -> Element {
        Element("a", namespace: namespace, attributes: [("h", String(handled))])
    }

    public static func handledCount(in element: Element) -> UInt32? {
        element[attribute: "h"].flatMap { UInt32($0) }
    }

    public static func isStreamManagement(_ element: Element) -> Bool { element.namespace == namespace }
}

/// State a session needs to resume after a reconnect or a process restart; the agent persists it.
public struct StreamResumptionState: Sendable, Equatable, Codable {
    public var id: String
    /// Stanzas handled (committed) from the server, mod 2^32.
    public var inboundHandled: UInt32
    public var location: String?
    public var maxSeconds: Int?

    public init(id: String, inboundHandled: UInt32, location: String? = nil, maxSeconds: Int? = nil) {
        self.id = id
        self.inboundHandled = inboundHandled
        self.location = location
        self.maxSeconds = maxSeconds
    }
}

/// All of XEP-0198's counting for one session, in one place: which inbound stanzas are handled (and may be
/// acknowledged), which outbound stanzas the server has not acknowledged yet, and what resumption needs.
/// It outlives a connection (a resumed session continues the same counts) and has one owner, the reader thread
/// of the current connection (`StreamManagementOwner`); the other threads send that owner messages.
///
/// Inbound: every stanza gets a 64-bit sequence number in stream order. The layer above declares a
/// sequence *committed* once the archive transaction holding it (and the `h` it stands for) is on disk;
/// the engine itself marks what it answered or consumed (IQ answers, pings) handled at once. `h` is the
/// contiguous watermark of handled sequences, and what Roost tells the server never runs ahead of what is
/// committed, since a restarted process resumes with the committed `h` and Prosody refuses a resumption
/// whose `h` is below what was already acknowledged.
///
/// Outbound: `outbound` holds the counted stanzas in exactly the order they were queued for the wire (a sender
/// queues the bytes and posts the stanza to the owner under one lock), so a resumption resends
/// exactly what the server did not acknowledge, with the counter continuing from the server's `h`.
struct StreamManagementSession: Sendable {
    /// How the session can be resumed; nil when the server did not offer resumption.
    var resumption: StreamResumptionState?
    var inbound: HandledCounter
    var outbound: OutboundQueue
    /// The last `h` written to the server.
    var lastAckSent: UInt32
    /// Send an unsolicited `<a/>` when this many more stanzas are committed than last acknowledged.
    static let ackEvery: UInt32 = 50

    /// A fresh session (`<enabled/>`).
    init(resumption: StreamResumptionState?) {
        self.resumption = resumption
        inbound = HandledCounter()
        outbound = OutboundQueue()
        lastAckSent = 0
    }

    /// A session saved by an earlier process, to be resumed: nothing of its outbound queue is known.
    init(restoring resumption: StreamResumptionState) {
        self.resumption = resumption
        inbound = HandledCounter(base: resumption.inboundHandled)
        outbound = OutboundQueue()
        lastAckSent = resumption.inboundHandled
    }

    /// The state to persist for resumption, with the committed `h`.
    var persistable: StreamResumptionState? {
        guard var r = resumption else { return nil }
        r.inboundHandled = inbound.ackableH
        return r
    }

    /// `<resumed h=…/>`: drops what the server has, and returns what must be sent again, in order. The
    /// inbound counter continues from exactly the `h` Roost claimed in `<resume/>`: the server resends what
    /// came after it (even what this process had received but not committed).
    mutating func resumed(serverHandled: UInt32, claimed: UInt32) -> OutboundQueue.Resumption {
        inbound = HandledCounter(base: claimed)
        lastAckSent = claimed
        return outbound.resume(serverHandled: serverHandled)
    }

    /// Records an inbound stanza: its sequence number and the `h` that stands for "handled through it".
    mutating func receive() -> (sequence: UInt64, handledCount: UInt32) {
        let sequence = inbound.nextSequence()
        return (sequence, inbound.h(through: sequence))
    }

    /// Everything through `sequence` is committed; returns an `h` worth sending unsolicited, if any.
    mutating func commit(through sequence: UInt64) -> UInt32? {
        inbound.commit(through: sequence)
        let h = inbound.ackableH
        guard h &- lastAckSent >= Self.ackEvery else { return nil }
        return h
    }

    /// The first sequence whose commit makes an unsolicited `<a/>` due (`commit(through:)`).
    var unsolicitedAckDue: UInt64 {
        let since = inbound.ackableH &- lastAckSent
        return since >= Self.ackEvery ? 0 : inbound.ackLimit + UInt64(Self.ackEvery - since)
    }

    /// The `h` to answer `<r/>` with (or to send unsolicited); remembers it as sent.
    mutating func takeAck() -> UInt32 {
        lastAckSent = inbound.ackableH
        return lastAckSent
    }

    /// `<a h=…/>` from the server: the tracking ids of the stanzas it just confirmed.
    mutating func acknowledged(_ h: UInt32) throws(OutboundQueue.AckError) -> [String] {
        try outbound.acknowledge(h).compactMap(\.tracking)
    }
}

extension StreamManagement {
    /// `<r/>` and `<a/>` from the server (`XMPPClient.handleStreamManagement`); the negotiation part (`<enable/>`,
    /// `<resume/>`) is `StreamNegotiator`'s. Nothing advertised: stream management is a stream feature.
    static let module = ClientModule(name: "XEP-0198 Stream Management", features: [], handlers: [
        .nonza(namespace: namespace) { element, client, generation in client.handleStreamManagement(element, generation: generation) },
    ])
}

/// Tracks which inbound stanzas are handled. Sequence numbers are 64-bit and never wrap; `h` is their
/// contiguous watermark truncated to 32 bits, as the XEP's counter wraps at 2^32.
///
/// `ackLimit` is the highest sequence the layer above has declared committed (and persisted with its `h`).
struct HandledCounter: Sendable {
    private(set) var received: UInt64 = 0
    private(set) var contiguous: UInt64 = 0
    private(set) var ackLimit: UInt64 = 0
    private var outOfOrder: Set<UInt64> = []
    let base: UInt32

    init(base: UInt32 = 0) { self.base = base }

    mutating func nextSequence() -> UInt64 {
        received += 1
        return received
    }

    /// One stanza the engine handled itself (answered or consumed); earlier ones may still be pending.
    mutating func markHandled(_ seq: UInt64) {
        guard seq > contiguous, seq <= received else { return }
        outOfOrder.insert(seq)
        while outOfOrder.remove(contiguous + 1) != nil { contiguous += 1 }
    }

    /// Everything through `seq` is committed. Commits arrive in stream order (the archive writer retries a
    /// failed batch and commits nothing after it meanwhile), so every earlier stanza is settled too.
    mutating func commit(through seq: UInt64) {
        let upper = min(seq, received)
        if upper > contiguous {
            contiguous = upper
            outOfOrder = outOfOrder.filter { $0 > upper }
            while outOfOrder.remove(contiguous + 1) != nil { contiguous += 1 }
        }
        ackLimit = max(ackLimit, upper)
    }

    /// Everything handled, including stanzas the engine answered itself (used to resume in-process).
    var h: UInt32 { base &+ UInt32(truncatingIfNeeded: contiguous) }

    /// What may be told to the server.
    var ackableH: UInt32 { base &+ UInt32(truncatingIfNeeded: min(contiguous, ackLimit)) }

    /// The `h` that stands for "handled through `seq`".
    func h(through seq: UInt64) -> UInt32 { base &+ UInt32(truncatingIfNeeded: seq) }
}

/// Outbound stanzas kept until the server acknowledges them, for resend on resume. `sent` and `acked`
/// are the XEP's 32-bit counters (they wrap); `unacked.count == sent - acked` always.
///
/// Bounded by size: it holds at most `capacityBytes` of serialized stanzas (one stanza more than that into an
/// empty queue). A server that stops acknowledging fills it, and then the client refuses to send more
/// (`hasRoom`, `.outboundQueueFull`, logged) until the server acknowledges or the session ends.
struct OutboundQueue: Sendable {
    struct Entry: Sendable {
        var element: Element
        /// Set by the layer above for stanzas whose delivery it records (an outgoing message's origin-id).
        var tracking: String?
        /// Its serialized size, counted against `capacityBytes`.
        var bytes: Int
        /// When it was queued for the wire: how long the server has left it unacknowledged.
        var queuedAt = ContinuousClock.now
    }

    static let capacityBytes = 16 << 20

    private(set) var unacked = Ring<Entry>(minimumCapacity: 16)
    private(set) var sent: UInt32 = 0
    private(set) var acked: UInt32 = 0
    /// The serialized size of `unacked`.
    private(set) var bytes = 0

    init() {}

    /// Whether a stanza of `size` bytes fits (anything fits into an empty queue).
    func hasRoom(for size: Int) -> Bool { bytes == 0 || bytes + size <= Self.capacityBytes }

    /// `bytes`: the stanza's serialized size when the caller has it.
    mutating func append(_ element: Element, tracking: String? = nil, bytes: Int? = nil) {
        let size = bytes ?? XMLSerializer.serialize(element, parentNamespace: Namespace.client).utf8.count
        append(Entry(element: element, tracking: tracking, bytes: size))
    }

    mutating func append(_ entry: Entry) {
        unacked.append(entry)
        bytes += entry.bytes
        sent &+= 1
    }

    private mutating func popFirst() -> Entry? {
        guard let entry = unacked.popFirst() else { return nil }
        bytes -= entry.bytes
        return entry
    }

    private mutating func removeAll() -> [Entry] {
        bytes = 0
        return unacked.removeAll()
    }

    enum AckError: Error { case tooHigh(acked: UInt32, sent: UInt32) }

    /// Drops (and returns) everything the server says it has; an `h` beyond what was sent is a protocol
    /// violation, and an `h` below what it acknowledged before changes nothing.
    mutating func acknowledge(_ h: UInt32) throws(AckError) -> [Entry] {
        let newly = h &- acked
        if newly > UInt32(Int32.max) { return [] }   // an old `h` arriving late
        guard newly <= UInt32(unacked.count) else { throw .tooHigh(acked: h, sent: sent) }
        var confirmed: [Entry] = []
        for _ in 0..<newly { if let entry = popFirst() { confirmed.append(entry) } }
        acked = h
        return confirmed
    }

    /// What `<resumed h=…/>` says of the queue: what the server has (confirmed, as by an `<a/>`), what it does not
    /// (to be sent again, in order), and what it cannot say (an `h` past what this session counted).
    struct Resumption {
        var confirmed: [Entry] = []
        var resend: [Entry] = []
        var unknown: [Entry] = []
    }

    /// Continues after `<resumed h=…/>`: what the server has is dropped and confirmed; the rest is returned to be
    /// sent again (and appended again by the caller, in order). A queue from another process (empty, counters
    /// unknown) continues at the server's count.
    mutating func resume(serverHandled h: UInt32) -> Resumption {
        let newly = h &- acked
        var result = Resumption()
        if newly <= UInt32(unacked.count) {
            for _ in 0..<newly { if let entry = popFirst() { result.confirmed.append(entry) } }
            result.resend = removeAll()
        } else {
            result.unknown = removeAll()
        }
        sent = h
        acked = h
        return result
    }

    /// Everything not acknowledged, oldest first, leaving the queue empty (the session is gone).
    mutating func drain() -> [Entry] {
        let left = removeAll()
        acked = sent
        return left
    }

    var count: Int { unacked.count }

    /// When the oldest stanza the server has not acknowledged was queued; nil when it acknowledged everything.
    var oldestQueuedAt: ContinuousClock.Instant? { unacked.first?.queuedAt }
}
