/// What the engine reports to the layer above, in stream order.
public enum ClientEvent: Sendable {
    /// A connection is established (or a session resumed); comes before any stanza of it.
    case connected(SessionInfo)
    /// An inbound stanza. The layer above must call `acknowledge(through: sequence)` once it has handled
    /// (committed) it: only then does the stream-management count include it.
    case stanza(InboundStanza)
    /// Stream management is on; persist this so a restarted process can resume.
    case resumptionState(StreamResumptionState)
    /// A page of a `queryArchive` query: its results in stream order, delivered where its `<fin/>` arrived.
    case archivePage(ArchivePage)
    /// The server acknowledged these tracked stanzas (`send(_:tracking:)`).
    case acknowledged([String])
    /// These tracked stanzas were sent on a session that ended without acknowledging them and could not
    /// be resumed: the server may or may not have them.
    case unconfirmed([String])
    /// The connection ended; nil when the layer above asked for it.
    case disconnected(ClientError?)
}

/// One XEP-0313 page: the result messages of one query and the answer that closed it.
public struct ArchivePage: Sendable {
    public let queryID: String
    public let results: [Element]
    public let fin: IQ
    /// Acknowledge the page through this (it covers the results and the `<fin/>`).
    public let acknowledgement: Acknowledgement
}

/// Identifies what `XMPPClient.acknowledge(_:)` marks as handled, and the stream-management count that
/// stands for it, so the layer above can persist that count in the same transaction as the data.
public struct Acknowledgement: Sendable, Equatable {
    public let sequence: UInt64
    let generation: Int
    /// The SM session and its `h` once everything through `sequence` is handled; nil without SM.
    public let streamID: String?
    public let handledCount: UInt32?
}

public struct InboundStanza: Sendable {
    public let element: Element
    public let acknowledgement: Acknowledgement
    public var sequence: UInt64 { acknowledgement.sequence }

    public var kind: Kind {
        switch element.name {
        case "message": .message(Message(element))
        case "presence": .presence(Presence(element))
        case "iq": .iq(IQ(element))
        default: .other
        }
    }

    public enum Kind: Sendable {
        case message(Message)
        case presence(Presence)
        case iq(IQ)
        case other
    }
}

/// What a successful `connect()` established.
public struct SessionInfo: Sendable {
    public let boundJID: JID
    public let mechanism: String
    /// The channel-binding type of a SCRAM-*-PLUS login ("tls-unique", "tls-exporter", …); nil otherwise.
    public let channelBinding: String?
    public let streamManagement: Bool
    /// True when a previous session was resumed (no roster/presence re-sync needed, nothing was lost).
    public let resumed: Bool
    public let tlsPeerFingerprint: String?
    /// The TLS version negotiated, e.g. "TLSv1.3".
    public let tlsProtocol: String?
    /// True when the server's certificate was accepted because it is the pinned one (`fingerprint`), false when
    /// its chain was verified against the trusted CAs.
    public let certificatePinned: Bool
    /// The account's disco#info features (MAM, stanza-ids, …); nil when the server did not say.
    public let accountFeatures: Set<String>?
    /// XEP-0478: the largest stanza the server accepts, when it said.
    public let maxStanzaBytes: Int?
}
