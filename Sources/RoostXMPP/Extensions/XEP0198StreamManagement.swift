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

/// Tracks which inbound stanzas are handled. Sequence numbers are 64-bit and never wrap; `h` is their
/// contiguous watermark truncated to 32 bits, as the XEP's counter wraps at 2^32.
///
/// `ackLimit` is the highest sequence the layer above has declared committed (and persisted with its `h`):
/// what Roost tells the server never runs ahead of what a restarted process could claim on resume, since
/// Prosody refuses a resumption whose `h` is below what was already acknowledged.
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

    mutating func markHandled(_ seq: UInt64) {
        guard seq > contiguous, seq <= received else { return }
        outOfOrder.insert(seq)
        while outOfOrder.remove(contiguous + 1) != nil { contiguous += 1 }
    }

    mutating func markHandled(through seq: UInt64) {
        let upper = min(seq, received)
        guard upper > contiguous else { return }
        contiguous = upper
        outOfOrder = outOfOrder.filter { $0 > upper }
        while outOfOrder.remove(contiguous + 1) != nil { contiguous += 1 }
    }

    /// Raises the acknowledgement limit: everything up to `seq` is committed (and the `h` for it persisted).
    mutating func commit(through seq: UInt64) {
        markHandled(through: seq)
        ackLimit = max(ackLimit, min(seq, received))
    }

    /// Everything handled, including stanzas the engine answered itself (used to resume in-process).
    var h: UInt32 { base &+ UInt32(truncatingIfNeeded: contiguous) }

    /// What may be told to the server.
    var ackableH: UInt32 { base &+ UInt32(truncatingIfNeeded: min(contiguous, ackLimit)) }

    /// The `h` that stands for "handled through `seq`".
    func h(through seq: UInt64) -> UInt32 { base &+ UInt32(truncatingIfNeeded: seq) }
}

/// Outbound stanzas kept until the server acknowledges them, for resend on resume.
struct OutboundQueue: Sendable {
    private(set) var unacked: [Element] = []
    private(set) var sent: UInt32 = 0
    private var acked: UInt32 = 0

    init() {}

    /// A queue continuing a session whose earlier stanzas were sent by another process (resumed after a restart).
    init(continuingAt count: UInt32) {
        sent = count
        acked = count
    }

    mutating func append(_ stanza: Element) {
        unacked.append(stanza)
        sent &+= 1
    }

    enum AckError: Error { case tooHigh(acked: UInt32, sent: UInt32) }

    /// Drops everything the server says it has; an `h` beyond what was sent is a protocol violation.
    mutating func acknowledge(_ h: UInt32) throws(AckError) {
        let newly = h &- acked
        guard newly <= UInt32(unacked.count) else { throw .tooHigh(acked: h, sent: sent) }
        unacked.removeFirst(Int(newly))
        acked = h
    }
}
