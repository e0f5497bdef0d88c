/// Reads complete messages (`MessageRow`): the one column list export selects, plus the revisions and
/// attachments looked up only for the rows that have any.
struct ArchivedMessageReading {
    let database: Database
    let accounts: [Int64: String]
    let marks: ReadMarks
    /// The rows with attachments and reactions, read once (an export of many rows); nil: the columns' subqueries
    /// say it for each row (`columns(includeRaw:)`).
    let decorated: DecoratedRows?

    /// `rows`: how many messages will be read; when the attachment and reaction tables hold no more, they are read
    /// once instead of probed for every row (see `DecoratedRows`, `columns`).
    init(database: Database, accounts: [Int64: String], rows: Int = 0) throws(SQLiteError) {
        self.database = database
        self.accounts = accounts
        marks = try ReadMarks(database)
        decorated = rows > 0 ? try DecoratedRows.read(database, costingAtMost: rows) : nil
    }

    /// The columns this reader reads: without the per-row subqueries when it knows the decorated rows.
    func columns(includeRaw: Bool) -> String {
        Self.columns(includeRaw: includeRaw, probing: decorated == nil)
    }

    /// `raw` is skipped (NULL) when the format has no use for it, which keeps large stanzas off the heap.
    /// `probing`: whether a message's attachments and reactions are looked up by subqueries (else 0 and NULL: see
    /// `hasAttachments`, `hasReactions`, `semantics`).
    static func columns(includeRaw: Bool, probing: Bool = true) -> String {
        """
        m.id, m.account_id, m.conversation, m.direction, m.type, m.from_jid, m.to_jid, m.sender_name, m.body, m.subject,
        m.thread, m.timestamp, m.received_at, m.stanza_id, m.stanza_id_by, m.stanza_id_trusted, m.origin_id, m.message_id,
        m.replaces, m.retracted, m.is_carbon, m.source, \(includeRaw ? "roost_stanza(m.raw)" : "NULL"), m.edited,
        \(probing ? "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id)" : "0"), \(MessageRowReading.encryptionColumns),
        \(MessageRowReading.roomColumns), m.claimed_at,
        \(probing ? MessageSemanticsReading.columns : MessageSemanticsReading.columns(reactions: "NULL")),
        \(probing ? "EXISTS (SELECT 1 FROM reactions r WHERE r.message_row = m.id)" : "0")
        """
    }

    func hasAttachments(_ row: Statement.Row) -> Bool {
        decorated.map { $0.attachments.contains(row.int(0)) } ?? row.bool(24)
    }

    func hasReactions(_ row: Statement.Row) -> Bool {
        decorated.map { $0.reactions.contains(row.int(0)) } ?? row.bool(42)
    }

    func message(_ row: Statement.Row, includeRevisionRaw: Bool) throws(SQLiteError) -> MessageRow {
        let id = row.int(0)
        var message = MessageRow(
            id: id, account: accounts[row.int(1)] ?? "", conversation: row.text(2),
            direction: MessageDirection(rawValue: row.text(3)) ?? .incoming, kind: MessageKind(rawValue: row.text(4)) ?? .normal,
            from: row.text(5), to: row.text(6), senderName: row.optionalText(7), body: row.optionalText(8),
            subject: row.optionalText(9), thread: row.optionalText(10), timestamp: row.int(11), receivedAt: row.int(12),
            stanzaId: row.optionalText(13), stanzaIdBy: row.optionalText(14), stanzaIdTrusted: row.bool(15),
            originId: row.optionalText(16), messageId: row.optionalText(17), replaces: row.optionalText(18),
            retracted: row.bool(19), isCarbon: row.bool(20), source: MessageSource(rawValue: row.text(21)) ?? .live,
            rawStanza: row.optionalText(22))
        message.encryption = MessageRowReading.encryption(row, at: 25)
        message.occupantId = row.optionalText(31)
        message.realJid = row.optionalText(32)
        message.claimedAt = row.optionalInt(33)
        message.semantics = try semantics(row)
        message.replyTo = row.optionalText(35)
        message.replyToJid = row.optionalText(36)
        if hasReactions(row) { message.reactionHistory = try reactionHistory(of: id) }
        if row.int(23) > 0 { message.versions = try revisions(of: id, includeRaw: includeRevisionRaw) }
        // Edited when versions are stored (what every format shows).
        message.revisions = message.versions.isEmpty ? 0 : max(1, Int(row.int(23)))
        if hasAttachments(row) { message.attachments = try attachments(of: id) }
        return message
    }

    /// The message's `MessageSemantics` (replies, reactions, retraction, receipts, unread).
    func semantics(_ row: Statement.Row) throws(SQLiteError) -> MessageSemantics {
        let id = row.int(0)
        var reactions: String?
        if let decorated, decorated.reactions.contains(id) {
            // The column the subquery fills when probing, for this row alone.
            try database.cached("SELECT \(MessageSemanticsReading.reactionsColumn) FROM messages m WHERE m.id = ?")
                .forEachRow([.integer(id)]) { row in
                    reactions = row.optionalText(0)
                    return false
                }
        }
        return MessageSemanticsReading.semantics(row, at: 34, marks: marks.of(account: row.int(1), conversation: row.text(2)), id: id,
                                                 incoming: row.text(3) == MessageDirection.incoming.rawValue, reactions: reactions)
    }

    func revisions(of id: Int64, includeRaw: Bool) throws(SQLiteError) -> [MessageRevision] {
        var revisions: [MessageRevision] = []
        try database.cached("""
            SELECT revision, body, from_jid, timestamp, received_at, stanza_id, stanza_id_trusted, origin_id, message_id,
                   source, \(includeRaw ? "roost_stanza(raw)" : "NULL")
            FROM message_revisions WHERE message_row = ? ORDER BY revision
            """).forEachRow([.integer(id)]) { row in
            revisions.append(MessageRevision(
                revision: Int(row.int(0)), body: row.optionalText(1), from: row.text(2), timestamp: row.int(3),
                receivedAt: row.int(4), stanzaId: row.optionalText(5), stanzaIdTrusted: row.bool(6),
                originId: row.optionalText(7), messageId: row.optionalText(8),
                source: MessageSource(rawValue: row.text(9)) ?? .live, rawStanza: row.optionalText(10)))
            return true
        }
        return revisions
    }

    /// Every reaction update to the message, oldest first (see `SchemaV8`).
    func reactionHistory(of id: Int64) throws(SQLiteError) -> [ReactionUpdate] {
        var updates: [ReactionUpdate] = []
        try database.cached("""
            SELECT target, reactor, reactor_name, direction, emojis, timestamp, source, dedup_key FROM reactions
            WHERE message_row = ? ORDER BY timestamp, id
            """).forEachRow([.integer(id)]) { row in
            var emojis: [String] = []
            if case .array(let items)? = try? JSONParser.parse(Array(row.text(4).utf8)) {
                for case .string(let emoji) in items { emojis.append(emoji) }
            }
            updates.append(ReactionUpdate(target: row.text(0), reactor: row.text(1), name: row.optionalText(2),
                                          direction: MessageDirection(rawValue: row.text(3)) ?? .incoming, emojis: emojis,
                                          timestamp: row.int(5), source: MessageSource(rawValue: row.text(6)) ?? .live, key: row.text(7)))
            return true
        }
        return updates
    }

    func attachments(of id: Int64) throws(SQLiteError) -> [AttachmentRecord] {
        var attachments: [AttachmentRecord] = []
        let store = FileStore(archivePath: database.path)
        try database.cached("SELECT \(AttachmentReading.columns) FROM attachments a WHERE a.message_row = ? ORDER BY a.id")
            .forEachRow([.integer(id)]) { row in
                attachments.append(AttachmentReading.record(row, at: 0, store: store))
                return true
            }
        return attachments
    }
}
