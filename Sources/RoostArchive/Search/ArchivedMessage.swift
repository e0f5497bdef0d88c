/// Every stored field of a message, as export reads it: the `messages` row, its XEP-0308 revisions and its
/// attachments. (`MessageRow` is the lighter shape search returns.)
public struct ArchivedMessage: Sendable, Equatable {
    /// Archive id: time ordered (`timestamp << 20 | n`), stable within one archive but reassigned by import.
    public var id: Int64
    public var account: String
    public var conversation: String
    public var direction: MessageDirection
    public var kind: MessageKind
    public var from: String
    public var to: String
    public var senderName: String?
    /// The latest text (after corrections); the original is revision 0 in `revisions`.
    public var body: String?
    public var subject: String?
    public var thread: String?
    /// UTC milliseconds.
    public var timestamp: Int64
    public var receivedAt: Int64
    /// The time the sender's own `<delay/>` claimed (see `SchemaV6`).
    public var claimedAt: Int64? = nil
    public var stanzaId: String?
    public var stanzaIdBy: String?
    public var stanzaIdTrusted: Bool
    public var originId: String?
    public var messageId: String?
    /// Set when this message named another in `<replace/>` that was unknown or from someone else.
    public var replaces: String?
    public var retracted: Bool
    public var isCarbon: Bool
    public var source: MessageSource
    public var rawStanza: String?
    /// Empty unless the message was corrected: revision 0 is the original, then one entry per correction.
    public var revisions: [MessageRevision]
    public var attachments: [AttachmentRecord]
    /// Set for messages that arrived end-to-end encrypted.
    public var encryption: MessageEncryption? = nil
    /// Group chat: the sender's occupant id (XEP-0421) and real bare JID, when known.
    public var occupantId: String? = nil
    public var realJid: String? = nil
    /// Reactions, the message answered, retraction, receipts and read state (schema v8).
    public var semantics = MessageSemantics()
    /// XEP-0461: the id and author the reply names (`semantics.reply` adds the message found).
    public var replyTo: String? = nil
    public var replyToJid: String? = nil
    /// Every reaction update, oldest first (the current set of each reactor is in `semantics`).
    public var reactionHistory: [ReactionUpdate] = []

    public var edited: Bool { !revisions.isEmpty }

    public init(id: Int64, account: String, conversation: String, direction: MessageDirection, kind: MessageKind,
                from: String, to: String, senderName: String?, body: String?, subject: String?, thread: String?,
                timestamp: Int64, receivedAt: Int64, stanzaId: String?, stanzaIdBy: String?, stanzaIdTrusted: Bool,
                originId: String?, messageId: String?, replaces: String?, retracted: Bool, isCarbon: Bool,
                source: MessageSource, rawStanza: String?, revisions: [MessageRevision] = [],
                attachments: [AttachmentRecord] = []) {
        self.id = id
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
        self.receivedAt = receivedAt
        self.stanzaId = stanzaId
        self.stanzaIdBy = stanzaIdBy
        self.stanzaIdTrusted = stanzaIdTrusted
        self.originId = originId
        self.messageId = messageId
        self.replaces = replaces
        self.retracted = retracted
        self.isCarbon = isCarbon
        self.source = source
        self.rawStanza = rawStanza
        self.revisions = revisions
        self.attachments = attachments
    }
}
