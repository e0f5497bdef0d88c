/// One stored version of a corrected message (`message_revisions`): revision 0 is the original text,
/// 1… the corrections in the order they arrived.
public struct MessageRevision: Sendable, Equatable {
    public var revision: Int
    public var body: String?
    public var from: String
    /// UTC milliseconds.
    public var timestamp: Int64
    public var receivedAt: Int64
    public var stanzaId: String?
    public var stanzaIdTrusted: Bool
    public var originId: String?
    public var messageId: String?
    public var source: MessageSource
    public var rawStanza: String?

    public init(revision: Int, body: String?, from: String, timestamp: Int64, receivedAt: Int64, stanzaId: String?,
                stanzaIdTrusted: Bool, originId: String?, messageId: String?, source: MessageSource, rawStanza: String?) {
        self.revision = revision
        self.body = body
        self.from = from
        self.timestamp = timestamp
        self.receivedAt = receivedAt
        self.stanzaId = stanzaId
        self.stanzaIdTrusted = stanzaIdTrusted
        self.originId = originId
        self.messageId = messageId
        self.source = source
        self.rawStanza = rawStanza
    }
}
