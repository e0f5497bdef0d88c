/// A stored message as returned by search, transcript and export.
public struct MessageRow: Sendable, Equatable {
    /// Archive id: time ordered (`timestamp << 20 | n`), stable.
    public var id: Int64
    public var account: String
    public var conversation: String
    public var direction: MessageDirection
    public var kind: MessageKind
    public var from: String
    public var to: String
    public var senderName: String?
    /// UTC milliseconds: the server's `<delay/>` stamp when present, else receipt time.
    public var timestamp: Int64
    public var receivedAt: Int64
    /// The time the sender's own `<delay/>` claimed (shown, not believed).
    public var claimedAt: Int64? = nil
    /// The latest text (after XEP-0308 corrections).
    public var body: String?
    public var subject: String?
    public var thread: String?
    public var stanzaId: String?
    public var originId: String?
    public var messageId: String?
    /// Number of corrections applied; `edited` is `revisions > 0`.
    public var revisions: Int
    public var isCarbon: Bool
    public var source: MessageSource
    /// Files shared with the message (URL, name, type, size, state, and the stored copy's path).
    public var attachments: [AttachmentRecord] = []
    /// The words and phrases of the query that found this row (empty for transcripts).
    public var highlighter: Highlighter
    /// Set for messages that arrived end-to-end encrypted.
    public var encryption: MessageEncryption? = nil
    /// Group chat: the room's XEP-0421 id of the sender, and the sender's real bare JID where the room showed it.
    public var occupantId: String? = nil
    public var realJid: String? = nil
    /// Reactions, the message answered, retraction, receipts and read state (schema v7).
    public var semantics = MessageSemantics()

    /// The body, or what to show instead for a message that could not be decrypted.
    public var displayBody: String? { body ?? encryption?.undecryptableText.map { "[\($0)]" } }

    public var edited: Bool { revisions > 0 }

    /// Ranges of `body` matching the query.
    public var bodyHighlightRanges: [Range<String.Index>] {
        highlighter.ranges(in: body ?? "")
    }

    /// The body with matches wrapped in `open`/`close`.
    public func highlightedBody(open: String, close: String) -> String {
        highlighter.apply(to: body ?? "", open: open, close: close)
    }
}
