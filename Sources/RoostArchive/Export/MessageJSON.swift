/// The one JSON object of a message (docs/export.md, "jsonl"), and its one encoder: the `jsonl` export's message lines, and the
/// objects of `roost search --json`, `roost log --json` and `roost show --json`. One schema, in two forms:
///
/// - `.export`: the message as stored, portable and lossless — what `roost import` reads back, the same bytes for
///   the same archive, and the same again after an import into another archive. Adds the stanzas (`raw`) and
///   each attachment's copy beside the export (`file`).
/// - `.archive`: the same fields in the same order, plus what this archive says of the message now, which an
///   export leaves out because an import would not give it back the same: the archive's ids (`id`, `short_id`),
///   the names as they are now (`conversation_name`, `sender_display_name`), the kept file's place in the file
///   store (an attachment's `path`), the message a reply answers as found here (`reply`) and each reactor's
///   current set (`current_reactions`). Without the stanzas.
///
/// So the object of `--json` minus those fields is the export's line minus `raw`, `file` and the revisions' `raw`
/// (`MessageJSONTests` checks it on the same messages).
package enum MessageJSON {
    /// What the `.archive` form adds that the CLI knows (the names as they are now).
    package struct Names: Sendable {
        package var conversation: String
        package var sender: String?
        /// `roost show --context`: whether this is the message asked for (else nil, and no `target` field).
        package var target: Bool?

        package init(conversation: String, sender: String?, target: Bool? = nil) {
            self.conversation = conversation
            self.sender = sender
            self.target = target
        }
    }

    enum Form {
        /// `copier` copies stored files beside the export; an attachment names its copy in `file`, relative to the
        /// jsonl file (`up` leads to the export's top folder).
        case export(copier: AttachmentCopier?, up: String)
        case archive(Names)
    }

    /// The `.archive` object of `message`, one line of JSON Lines (with its line feed).
    package static func line(_ message: MessageRow, names: Names) -> [UInt8] {
        let sink = ByteSink.memory()
        var json = JSONByteEncoder(sink: sink)
        do {
            try encode(message, .archive(names), into: &json)
        } catch {
            // A `MessageRow` is read already, and this form copies no file: nothing here can fail.
            preconditionFailure("encoding a read message failed: \(error)")
        }
        return sink.takeBytes()
    }

    /// One message as one line (with its line feed), in `form`.
    static func encode(_ message: some MessageJSONSource, _ form: Form, into json: inout JSONByteEncoder) throws {
        var names: Names?
        if case .archive(let given) = form { names = given }
        json.beginObject()
        json.field("version", Int64(JSONLinesSchema.version))
        json.field("event", "message")
        if let names {
            json.field("id", message.id)
            json.field("short_id", ShortID.text(for: message.id))
            if let target = names.target { json.field("target", target) }
        }
        json.field("account", message.account)
        message.text(.conversation, "conversation", into: &json)
        if let names { json.field("conversation_name", names.conversation) }
        message.text(.direction, "direction", into: &json)
        message.text(.kind, "type", into: &json)
        message.text(.from, "from", into: &json)
        message.text(.to, "to", into: &json)
        message.text(.senderName, "sender_name", into: &json)
        if let names { json.field("sender_display_name", names.sender) }
        json.timeField("timestamp", message.timestamp)
        json.timeField("received_at", message.receivedAt)
        if let claimed = message.claimedAt { json.timeField("claimed_at", claimed) }
        message.text(.body, "body", into: &json)
        if let encryption = message.encryption {
            json.field("encryption", encryption.scheme)
            json.field("encryption_namespace", encryption.protocolNamespace)
            json.field("sender_device", encryption.senderDevice)
            json.field("sender_fingerprint", encryption.fingerprint)
            json.field("sender_trust", encryption.trust)
            json.field("undecryptable", encryption.failure)
        }
        message.text(.subject, "subject", into: &json)
        message.text(.thread, "thread", into: &json)
        message.text(.stanzaId, "stanza_id", into: &json)
        message.text(.stanzaIdBy, "stanza_id_by", into: &json)
        json.field("stanza_id_trusted", message.stanzaIdTrusted)
        message.text(.originId, "origin_id", into: &json)
        message.text(.messageId, "message_id", into: &json)
        message.text(.replaces, "replaces", into: &json)
        json.field("retracted", message.retracted)
        json.field("carbon", message.isCarbon)
        message.text(.source, "source", into: &json)
        if message.hasRoomFields {
            message.text(.occupantId, "occupant_id", into: &json)
            message.text(.realJid, "real_jid", into: &json)
        }
        let semantics = try message.readSemantics()
        encodeSemantics(semantics, replyTo: message.replyTo, replyToJid: message.replyToJid, archive: names != nil, into: &json)
        try encodeAttachments(try message.readAttachments(), timestamp: message.timestamp, form: form, into: &json)
        encodeRevisions(try message.readVersions(), raw: names == nil, into: &json)
        encodeReactions(try message.readReactionHistory(), into: &json)
        if names != nil {
            if !semantics.reactions.isEmpty {
                json.beginArray("current_reactions")
                for reaction in semantics.reactions {
                    json.element()
                    json.beginObject()
                    json.field("emoji", reaction.emoji)
                    json.field("from", reaction.own ? "me" : reaction.from)
                    json.field("own", reaction.own)
                    json.endObject()
                }
                json.endArray()
            }
        } else {
            message.text(.raw, "raw", into: &json)
        }
        json.endObject()
        json.newline()
    }

    /// Replies, retractions, receipts and read state (schema v8), each only when it applies (so exports of archives
    /// without them stay as they were). `archive`: with the message answered as found in this archive (`reply`).
    private static func encodeSemantics(_ semantics: MessageSemantics, replyTo: String?, replyToJid: String?, archive: Bool,
                                        into json: inout JSONByteEncoder) {
        if let replyTo {
            json.field("reply_to", replyTo)
            json.field("reply_to_jid", replyToJid)
            if archive, let reply = semantics.reply {
                json.key("reply")
                if let row = reply.messageRow {
                    json.beginObject()
                    json.field("archive_id", row)
                    json.field("from", reply.own ? "me" : reply.sender)
                    json.field("body", reply.text)
                    json.endObject()
                } else {
                    json.appendNull()
                }
            }
        }
        if let retraction = semantics.retraction {
            json.field("retracted_by", retraction.by)
            json.timeField("retracted_at", retraction.at)
            json.field("retraction_reason", retraction.reason)
        }
        if let progress = semantics.peerProgress { json.field("receipt", progress.rawValue) }
        if semantics.unread { json.field("unread", true) }
    }

    /// A stored file is named by `sha256`; `local_path` only carries a path outside the file store (from an old
    /// archive). The export adds `file`, its copy beside the export; `--json` adds `path`, the kept file on this
    /// machine (null unless `state` is `stored`).
    private static func encodeAttachments(_ attachments: [AttachmentRecord], timestamp: Int64, form: Form,
                                          into json: inout JSONByteEncoder) throws(ExportError) {
        json.beginArray("attachments")
        for attachment in attachments {
            json.element()
            json.beginObject()
            json.field("url", attachment.url)
            json.field("local_path", attachment.sha256 == nil ? attachment.localPath : nil)
            json.field("mime", attachment.mime)
            json.field("size", attachment.size)
            json.field("name", attachment.name)
            json.field("description", attachment.description)
            json.field("width", attachment.width.map { Int64($0) })
            json.field("height", attachment.height.map { Int64($0) })
            json.stringArray("hashes", attachment.hashes.map { "\($0.algorithm)=\($0.base64)" })
            json.field("sha256", attachment.sha256)
            json.field("state", attachment.state.rawValue)
            switch form {
            case .export(let copier, let up):
                json.field("file", try copier?.copy(attachment, timestamp: timestamp).map { up + $0 })
            case .archive:
                json.field("path", attachment.state == .stored ? attachment.localPath : nil)
            }
            json.endObject()
        }
        json.endArray()
    }

    /// Revision 0 the original, then one per correction; `raw`: with each version's stanza (the export).
    private static func encodeRevisions(_ revisions: [MessageRevision], raw: Bool, into json: inout JSONByteEncoder) {
        json.beginArray("revisions")
        for revision in revisions {
            json.element()
            json.beginObject()
            json.field("revision", Int64(revision.revision))
            json.field("body", revision.body)
            json.field("from", revision.from)
            json.timeField("timestamp", revision.timestamp)
            json.timeField("received_at", revision.receivedAt)
            json.field("stanza_id", revision.stanzaId)
            json.field("stanza_id_trusted", revision.stanzaIdTrusted)
            json.field("origin_id", revision.originId)
            json.field("message_id", revision.messageId)
            json.field("source", revision.source.rawValue)
            if raw { json.field("raw", revision.rawStanza) }
            json.endObject()
        }
        json.endArray()
    }

    /// Every reaction update to the message, oldest first; omitted when there is none.
    private static func encodeReactions(_ updates: [ReactionUpdate], into json: inout JSONByteEncoder) {
        guard !updates.isEmpty else { return }
        json.beginArray("reactions")
        for update in updates {
            json.element()
            json.beginObject()
            json.field("target", update.target)
            json.field("reactor", update.reactor)
            json.field("name", update.name)
            json.field("direction", update.direction.rawValue)
            json.stringArray("emojis", update.emojis)
            json.timeField("timestamp", update.timestamp)
            json.field("source", update.source.rawValue)
            json.field("key", update.key)
            json.endObject()
        }
        json.endArray()
    }
}

/// The text fields of a message, by their column in `MessageRowReading.columns`.
enum MessageTextField: Int32 {
    case conversation = 2, direction = 3, kind = 4, from = 5, to = 6, senderName = 7, body = 8, subject = 9, thread = 10
    case stanzaId = 13, stanzaIdBy = 14, originId = 16, messageId = 17, replaces = 18, source = 21, raw = 22
    case occupantId = 31, realJid = 32
}

/// What `MessageJSON` reads of a message: a `MessageRow`, or the row an export's cursor stands on (`MessageRowView`:
/// its text is copied from SQLite's buffers, no Swift string made — the export's speed).
protocol MessageJSONSource {
    var id: Int64 { get }
    var account: String { get }
    var timestamp: Int64 { get }
    var receivedAt: Int64 { get }
    var claimedAt: Int64? { get }
    var stanzaIdTrusted: Bool { get }
    var retracted: Bool { get }
    var isCarbon: Bool { get }
    var encryption: MessageEncryption? { get }
    var replyTo: String? { get }
    var replyToJid: String? { get }
    /// Group chat: an occupant id or a real JID is known (both are written then, else neither).
    var hasRoomFields: Bool { get }
    func text(_ field: MessageTextField, _ key: StaticString, into json: inout JSONByteEncoder)
    func readSemantics() throws(SQLiteError) -> MessageSemantics
    func readAttachments() throws(SQLiteError) -> [AttachmentRecord]
    func readVersions() throws(SQLiteError) -> [MessageRevision]
    func readReactionHistory() throws(SQLiteError) -> [ReactionUpdate]
}

extension MessageRow: MessageJSONSource {
    var hasRoomFields: Bool { occupantId != nil || realJid != nil }

    func text(_ field: MessageTextField, _ key: StaticString, into json: inout JSONByteEncoder) {
        let value: String? = switch field {
        case .conversation: conversation
        case .direction: direction.rawValue
        case .kind: kind.rawValue
        case .from: from
        case .to: to
        case .senderName: senderName
        case .body: body
        case .subject: subject
        case .thread: thread
        case .stanzaId: stanzaId
        case .stanzaIdBy: stanzaIdBy
        case .originId: originId
        case .messageId: messageId
        case .replaces: replaces
        case .source: source.rawValue
        case .raw: rawStanza
        case .occupantId: occupantId
        case .realJid: realJid
        }
        json.field(key, value)
    }

    func readSemantics() -> MessageSemantics { semantics }
    func readAttachments() -> [AttachmentRecord] { attachments }
    func readVersions() -> [MessageRevision] { versions }
    func readReactionHistory() -> [ReactionUpdate] { reactionHistory }
}

extension MessageRowView: MessageJSONSource {
    var id: Int64 { row.int(0) }
    var account: String { reading.accounts[row.int(1)] ?? "" }
    var receivedAt: Int64 { row.int(12) }
    var claimedAt: Int64? { row.optionalInt(33) }
    var stanzaIdTrusted: Bool { row.bool(15) }
    var retracted: Bool { row.bool(19) }
    var isCarbon: Bool { row.bool(20) }
    var encryption: MessageEncryption? { MessageRowReading.encryption(row, at: 25) }
    var replyTo: String? { row.optionalText(35) }
    var replyToJid: String? { row.optionalText(36) }
    var hasRoomFields: Bool { row.optionalText(31) != nil || row.optionalText(32) != nil }

    func text(_ field: MessageTextField, _ key: StaticString, into json: inout JSONByteEncoder) {
        json.textColumn(key, row, field.rawValue)
    }

    func readSemantics() throws(SQLiteError) -> MessageSemantics { try reading.semantics(row) }
    func readAttachments() throws(SQLiteError) -> [AttachmentRecord] { reading.hasAttachments(row) ? try reading.attachments(of: id) : [] }
    func readVersions() throws(SQLiteError) -> [MessageRevision] {
        row.int(23) > 0 ? try reading.revisions(of: id, includeRaw: includeRevisionRaw) : []
    }
    func readReactionHistory() throws(SQLiteError) -> [ReactionUpdate] {
        reading.hasReactions(row) ? try reading.reactionHistory(of: id) : []
    }
}
