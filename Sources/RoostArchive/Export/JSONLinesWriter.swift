/// `--format jsonl`: one JSON object per line and event, schema version `JSONLinesSchema.version`
/// (documented in docs/export.md). Lossless and deterministic: the same archive always gives the same bytes,
/// and `roost import` rebuilds an archive that exports to the same bytes again.
final class JSONLinesWriter: ExportWriter {
    let byConversation = false
    let needsRawStanzas = true
    private var encoder: JSONByteEncoder?
    /// Leads from the partition's file up to the export's top folder, where the attachment copies are.
    private var up = ""

    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws {
        guard case .file(let sink, let depth) = target else { preconditionFailure("jsonl writes files") }
        encoder = JSONByteEncoder(sink: sink)
        up = TextTranscriptWriter.up(depth)
        guard context.options.include.contains(.contacts) else { return }
        if context.selection.everything {
            // A complete export keeps every contact and friend request, also of those never written to; with
            // a split they go to their own file (see `finish`).
            if context.options.split == .none {
                try writeContacts(of: nil, context: context)
                try writeSubscriptions(of: nil, context: context)
            }
        } else {
            try writeContacts(of: partition.slices, context: context)
            try writeSubscriptions(of: partition.slices, context: context)
        }
    }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard var encoder else { return }
        switch event {
        case .message(let view):
            try Self.encode(view, accounts: context.selection.accounts, copier: context.attachments, up: up, into: &encoder)
            context.messageWritten()
        case .chatState(let state):
            Self.encode(state, into: &encoder)
            context.summary.chatStates += 1
        case .presence(let presence):
            Self.encode(presence, into: &encoder)
            context.summary.presenceChanges += 1
        }
        self.encoder = encoder
    }

    func endPartition(context: ExportContext) throws {
        encoder = nil
    }

    func finish(context: ExportContext) throws {
        guard context.options.include.contains(.contacts), context.selection.everything, context.options.split != .none else { return }
        let sink = try context.createFile(["contacts.jsonl"])
        encoder = JSONByteEncoder(sink: sink)
        try writeContacts(of: nil, context: context)
        try writeSubscriptions(of: nil, context: context)
        try context.close(sink)
        encoder = nil
    }

    /// Contacts of `slices` (every contact of the exported accounts when nil), ordered by account and JID.
    private func writeContacts(of slices: [ConversationSlice]?, context: ExportContext) throws {
        guard var encoder else { return }
        let wanted = slices.map { Set($0.map(\.key)) }
        let (accountSQL, parameters) = context.selection.accountClause(column: "c.account_id")
        let columns = ContactDirectory.columns.replacingOccurrences(of: "%RAW%", with: "c.vcard_raw")
        let sql = """
            SELECT \(columns) FROM contacts c JOIN accounts a ON a.id = c.account_id
            WHERE \(accountSQL) ORDER BY a.jid COLLATE NOCASE, c.jid COLLATE NOCASE, c.id
            """
        let accounts = context.selection.accounts
        var written = 0
        try context.database.prepare(sql).forEachRow(parameters) { row in
            if let wanted, !wanted.contains(SliceKey(accountID: row.int(0), conversation: row.text(1).lowercased())) { return true }
            Self.encode(ContactDirectory.contact(row, accounts: accounts), into: &encoder)
            written += 1
            return true
        }
        context.summary.contacts += written
        self.encoder = encoder
    }

    /// Friend requests and answers of `slices`' contacts (all of the exported accounts' when nil), oldest first:
    /// importing them in this order rebuilds each request's status.
    private func writeSubscriptions(of slices: [ConversationSlice]?, context: ExportContext) throws {
        guard var encoder else { return }
        let wanted = slices.map { Set($0.map(\.key)) }
        let (accountSQL, parameters) = context.selection.accountClause(column: "s.account_id")
        let sql = """
            SELECT s.account_id, s.jid, s.direction, s.kind, s.status, s.message, s.created_at, s.updated_at
            FROM subscription_requests s WHERE \(accountSQL) ORDER BY s.created_at, s.id
            """
        let accounts = context.selection.accounts
        var written = 0
        try context.database.prepare(sql).forEachRow(parameters) { row in
            if let wanted, !wanted.contains(SliceKey(accountID: row.int(0), conversation: row.text(1).lowercased())) { return true }
            encoder.beginObject()
            encoder.field("version", Int64(JSONLinesSchema.version))
            encoder.field("event", "subscription")
            encoder.field("account", accounts[row.int(0)] ?? "")
            encoder.field("jid", row.text(1))
            encoder.field("direction", row.text(2))
            encoder.field("kind", row.text(3))
            encoder.field("status", row.optionalText(4))
            encoder.field("message", row.optionalText(5))
            encoder.timeField("timestamp", row.int(6))
            encoder.timeField("updated_at", row.int(7))
            encoder.endObject()
            encoder.newline()
            written += 1
            return true
        }
        context.summary.subscriptions += written
        self.encoder = encoder
    }

    // MARK: Encoding

    /// The fast path: the row's columns straight into the output (same bytes as `encode(_ message:)`).
    /// `copier` copies stored files beside the export, and each attachment names its copy in `file`, relative
    /// to the jsonl file (`up` leads to the export's top folder).
    static func encode(_ view: MessageRowView, accounts: [Int64: String], copier: AttachmentCopier?, up: String = "",
                       into json: inout JSONByteEncoder) throws {
        let row = view.row
        json.beginObject()
        json.field("version", Int64(JSONLinesSchema.version))
        json.field("event", "message")
        json.field("account", accounts[row.int(1)] ?? "")
        json.textColumn("conversation", row, 2)
        json.textColumn("direction", row, 3)
        json.textColumn("type", row, 4)
        json.textColumn("from", row, 5)
        json.textColumn("to", row, 6)
        json.textColumn("sender_name", row, 7)
        json.timeField("timestamp", row.int(11))
        json.timeField("received_at", row.int(12))
        if let claimed = row.optionalInt(33) { json.timeField("claimed_at", claimed) }
        json.textColumn("body", row, 8)
        json.textColumn("subject", row, 9)
        json.textColumn("thread", row, 10)
        json.textColumn("stanza_id", row, 13)
        json.textColumn("stanza_id_by", row, 14)
        json.field("stanza_id_trusted", row.bool(15))
        json.textColumn("origin_id", row, 16)
        json.textColumn("message_id", row, 17)
        json.textColumn("replaces", row, 18)
        json.field("retracted", row.bool(19))
        json.field("carbon", row.bool(20))
        json.textColumn("source", row, 21)
        if row.optionalText(31) != nil || row.optionalText(32) != nil {
            json.textColumn("occupant_id", row, 31)
            json.textColumn("real_jid", row, 32)
        }
        encodeSemantics(try view.reading.semantics(row), replyTo: row.optionalText(35), replyToJid: row.optionalText(36),
                        into: &json)
        let id = row.int(0)
        try encodeAttachments(view.reading.hasAttachments(row) ? try view.reading.attachments(of: id) : [], timestamp: row.int(11),
                              copier: copier, up: up, into: &json)
        encodeRevisions(row.int(23) > 0 ? try view.reading.revisions(of: id, includeRaw: view.includeRevisionRaw) : [], into: &json)
        encodeReactions(view.reading.hasReactions(row) ? try view.reading.reactionHistory(of: id) : [], into: &json)
        json.textColumn("raw", row, 22)
        json.endObject()
        json.newline()
    }

    static func encode(_ message: MessageRow, into json: inout JSONByteEncoder) {
        json.beginObject()
        json.field("version", Int64(JSONLinesSchema.version))
        json.field("event", "message")
        json.field("account", message.account)
        json.field("conversation", message.conversation)
        json.field("direction", message.direction.rawValue)
        json.field("type", message.kind.rawValue)
        json.field("from", message.from)
        json.field("to", message.to)
        json.field("sender_name", message.senderName)
        json.timeField("timestamp", message.timestamp)
        json.timeField("received_at", message.receivedAt)
        if let claimed = message.claimedAt { json.timeField("claimed_at", claimed) }
        json.field("body", message.body)
        if let encryption = message.encryption {
            json.field("encryption", encryption.scheme)
            json.field("encryption_namespace", encryption.protocolNamespace)
            json.field("sender_device", encryption.senderDevice)
            json.field("sender_fingerprint", encryption.fingerprint)
            json.field("sender_trust", encryption.trust)
            json.field("undecryptable", encryption.failure)
        }
        json.field("subject", message.subject)
        json.field("thread", message.thread)
        json.field("stanza_id", message.stanzaId)
        json.field("stanza_id_by", message.stanzaIdBy)
        json.field("stanza_id_trusted", message.stanzaIdTrusted)
        json.field("origin_id", message.originId)
        json.field("message_id", message.messageId)
        json.field("replaces", message.replaces)
        json.field("retracted", message.retracted)
        json.field("carbon", message.isCarbon)
        json.field("source", message.source.rawValue)
        if message.occupantId != nil || message.realJid != nil {
            json.field("occupant_id", message.occupantId)
            json.field("real_jid", message.realJid)
        }
        encodeSemantics(message.semantics, replyTo: message.replyTo, replyToJid: message.replyToJid, into: &json)
        try? encodeAttachments(message.attachments, timestamp: message.timestamp, copier: nil, up: "", into: &json)
        encodeRevisions(message.versions, into: &json)
        encodeReactions(message.reactionHistory, into: &json)
        json.field("raw", message.rawStanza)
        json.endObject()
        json.newline()
    }

    /// A stored file is named by `sha256` (and by `file`, its copy beside the export); `local_path` only
    /// carries a path outside the file store (from an old archive).
    private static func encodeAttachments(_ attachments: [AttachmentRecord], timestamp: Int64, copier: AttachmentCopier?,
                                          up: String, into json: inout JSONByteEncoder) throws(ExportError) {
        json.beginArray("attachments")
        for attachment in attachments {
            let copy = try copier?.copy(attachment, timestamp: timestamp).map { up + $0 }
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
            json.field("file", copy)
            json.endObject()
        }
        json.endArray()
    }

    /// Schema v8 fields, each only when it applies (so exports of archives without them stay as they were).
    private static func encodeSemantics(_ semantics: MessageSemantics, replyTo: String?, replyToJid: String?,
                                        into json: inout JSONByteEncoder) {
        if let replyTo {
            json.field("reply_to", replyTo)
            json.field("reply_to_jid", replyToJid)
        }
        if let retraction = semantics.retraction {
            json.field("retracted_by", retraction.by)
            json.timeField("retracted_at", retraction.at)
            json.field("retraction_reason", retraction.reason)
        }
        if let progress = semantics.peerProgress { json.field("receipt", progress.rawValue) }
        if semantics.unread { json.field("unread", true) }
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

    private static func encodeRevisions(_ revisions: [MessageRevision], into json: inout JSONByteEncoder) {
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
            json.field("raw", revision.rawStanza)
            json.endObject()
        }
        json.endArray()
    }

    static func encode(_ state: ChatStateRow, into json: inout JSONByteEncoder) {
        json.beginObject()
        json.field("version", Int64(JSONLinesSchema.version))
        json.field("event", "chat_state")
        json.field("account", state.account)
        json.field("conversation", state.conversation)
        json.field("from", state.from)
        json.field("state", state.state.rawValue)
        json.field("message_id", state.messageId)
        json.timeField("timestamp", state.timestamp)
        json.endObject()
        json.newline()
    }

    static func encode(_ presence: PresenceRow, into json: inout JSONByteEncoder) {
        json.beginObject()
        json.field("version", Int64(JSONLinesSchema.version))
        json.field("event", "presence")
        json.field("account", presence.account)
        json.field("contact", presence.contact)
        json.field("resource", presence.resource)
        json.field("availability", presence.availability.rawValue)
        json.field("show", presence.show)
        json.field("status", presence.status)
        json.field("priority", presence.priority.map { Int64($0) })
        if let room = presence.room {
            json.field("room_event", room.event.rawValue)
            json.field("occupant_id", room.occupantId)
            json.field("real_jid", room.realJid)
            json.field("role", room.role)
            json.field("affiliation", room.affiliation)
            json.field("new_nick", room.newNick)
            json.field("reason", room.reason)
        }
        json.timeField("timestamp", presence.timestamp)
        json.endObject()
        json.newline()
    }

    static func encode(_ contact: ContactRow, into json: inout JSONByteEncoder) {
        json.beginObject()
        json.field("version", Int64(JSONLinesSchema.version))
        json.field("event", "contact")
        json.field("account", contact.account)
        json.field("jid", contact.jid)
        json.field("in_roster", contact.inRoster)
        json.field("name", contact.name)
        json.stringArray("groups", contact.groups)
        json.field("subscription", contact.subscription)
        json.field("ask", contact.ask)
        json.timeField("roster_updated_at", contact.rosterUpdatedAt)
        json.field("nickname", contact.nickname)
        json.field("fullname", contact.fullName)
        json.field("photo_hash", contact.photoHash)
        json.field("photo_path", contact.photoPath)
        json.field("vcard_raw", contact.vCardRaw)
        json.timeField("vcard_fetched_at", contact.vCardFetchedAt)
        json.endObject()
        json.newline()
    }
}
