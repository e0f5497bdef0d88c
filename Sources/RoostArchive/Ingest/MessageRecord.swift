/// A message to archive. JIDs are plain strings the caller has already normalised; times are UTC
/// milliseconds since 1970.
public struct MessageRecord: Sendable, Equatable {
    /// The account's bare JID.
    public var account: String
    /// The conversation's bare JID (the peer, or the room for groupchat).
    public var conversation: String
    public var direction: MessageDirection
    public var kind: MessageKind
    /// Full JIDs as on the stanza (for groupchat `room@service/nick`).
    public var from: String
    public var to: String
    /// The sender's display name (roster name, nickname, MUC nick), indexed for search.
    public var senderName: String?
    public var body: String?
    public var subject: String?
    public var thread: String?
    /// A time Roost can believe (the server's `<delay/>` or archive time), else the receipt time.
    public var timestamp: Int64
    public var receivedAt: Int64
    /// The time a `<delay/>` of the sender claims (not believed, only shown; see `SchemaV6`).
    public var claimedAt: Int64? = nil
    /// XEP-0359 `<stanza-id/>` and its `by`.
    public var stanzaId: String?
    public var stanzaIdBy: String?
    /// Set by the caller when `stanzaIdBy` is the account's bare JID and the server advertises
    /// `urn:xmpp:sid:0` or MAM; only trusted ids are used for deduplication.
    public var stanzaIdTrusted: Bool
    public var originId: String?
    /// The stanza's `id` attribute.
    public var messageId: String?
    /// XEP-0308: the id of the message this one corrects.
    public var replaces: String?
    public var isCarbon: Bool
    public var source: MessageSource
    /// The stanza as received, for export and debugging.
    public var rawStanza: String?
    public var attachments: [AttachmentRecord]
    /// For a message Roost sends itself: `.pending` until the server acknowledges it; nil otherwise.
    public var delivery: DeliveryState?
    /// Set when the message arrived end-to-end encrypted (`body` is then the plaintext, or nil if undecryptable).
    public var encryption: MessageEncryption? = nil
    /// Group chat: the room's XEP-0421 id of the sender, and the sender's real bare JID where the room shows it.
    public var occupantId: String? = nil
    public var realJid: String? = nil
    /// XEP-0461: the id of the message this one answers, and its author as the reply names it.
    public var replyTo: String? = nil
    public var replyToJid: String? = nil
    /// Set by a jsonl import: the retraction, receipts and read state the export recorded.
    public var imported: ImportedState? = nil

    public init(account: String, conversation: String, direction: MessageDirection, kind: MessageKind = .chat,
                from: String, to: String, senderName: String? = nil, body: String?, subject: String? = nil,
                thread: String? = nil, timestamp: Int64, receivedAt: Int64? = nil, stanzaId: String? = nil,
                stanzaIdBy: String? = nil, stanzaIdTrusted: Bool = false, originId: String? = nil,
                messageId: String? = nil, replaces: String? = nil, isCarbon: Bool = false,
                source: MessageSource = .live, rawStanza: String? = nil, attachments: [AttachmentRecord] = [],
                delivery: DeliveryState? = nil) {
        self.account = account
        self.conversation = conversation
        self.direction = direction
        self.kind = kind
        self.from = from
        self.to = to
        self.senderName = senderName
        self.body = body
        self.subject = subject
        self.thread = thread
        self.timestamp = timestamp
        self.receivedAt = receivedAt ?? timestamp
        self.stanzaId = stanzaId
        self.stanzaIdBy = stanzaIdBy
        self.stanzaIdTrusted = stanzaIdTrusted
        self.originId = originId
        self.messageId = messageId
        self.replaces = replaces
        self.isCarbon = isCarbon
        self.source = source
        self.rawStanza = rawStanza
        self.attachments = attachments
        self.delivery = delivery
    }
}

/// Where an outgoing message Roost sent stands (see `SchemaV2`).
public enum DeliveryState: String, Sendable, Codable, CaseIterable {
    case pending, sent, failed
}
