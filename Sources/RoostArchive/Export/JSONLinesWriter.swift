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
            try MessageJSON.encode(view, .export(copier: context.attachments, up: up), into: &encoder)
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

    // MARK: Encoding (a message: `MessageJSON`)

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
