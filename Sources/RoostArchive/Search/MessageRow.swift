/// A stored message: the one read model of search, transcripts, `roost show`, export and the web view, filled by
/// the one reader, `MessageRowReading` (one column list): everything a line, `--json` or an export shows — the
/// stanza-id's origin, the raw stanza when asked, the stored versions and the reaction history (left out for plain
/// search lines, which show none of them). (`MessageLine` and the export's `MessageRowView` are views of a statement's current row,
/// valid only while it stands there, not copies: what makes a plain line or a jsonl record cost no Strings.)
public struct MessageRow: Sendable, Equatable {
    /// Archive id: time ordered (`timestamp << 20 | n`), stable within one archive but reassigned by import.
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
    /// Number of corrections applied; `edited` is `revisions > 0` (the versions themselves: `versions`).
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

    // Read by export and the web view (`MessageRowReading`) only; empty, nil or false otherwise.

    public var stanzaIdBy: String? = nil
    public var stanzaIdTrusted = false
    /// Set when this message named another in `<replace/>` that was unknown or from someone else.
    public var replaces: String? = nil
    public var retracted = false
    public var rawStanza: String? = nil
    /// Empty unless the message was corrected: revision 0 is the original, then one entry per correction.
    public var versions: [MessageRevision] = []
    /// XEP-0461: the id and author the reply names (`semantics.reply` adds the message found).
    public var replyTo: String? = nil
    public var replyToJid: String? = nil
    /// Every reaction update, oldest first (the current set of each reactor is in `semantics`).
    public var reactionHistory: [ReactionUpdate] = []

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

extension MessageRow {
    /// A message as export reads it (no highlighting; `revisions` counted from `versions`).
    public init(id: Int64, account: String, conversation: String, direction: MessageDirection, kind: MessageKind,
                from: String, to: String, senderName: String?, body: String?, subject: String?, thread: String?,
                timestamp: Int64, receivedAt: Int64, stanzaId: String?, stanzaIdBy: String?, stanzaIdTrusted: Bool,
                originId: String?, messageId: String?, replaces: String?, retracted: Bool, isCarbon: Bool,
                source: MessageSource, rawStanza: String?, versions: [MessageRevision] = [],
                attachments: [AttachmentRecord] = []) {
        self.init(id: id, account: account, conversation: conversation, direction: direction, kind: kind, from: from, to: to,
                  senderName: senderName, timestamp: timestamp, receivedAt: receivedAt, body: body, subject: subject, thread: thread,
                  stanzaId: stanzaId, originId: originId, messageId: messageId, revisions: versions.isEmpty ? 0 : max(1, versions.count - 1),
                  isCarbon: isCarbon, source: source, attachments: attachments, highlighter: .none,
                  stanzaIdBy: stanzaIdBy, stanzaIdTrusted: stanzaIdTrusted, replaces: replaces, retracted: retracted,
                  rawStanza: rawStanza, versions: versions)
    }
}
