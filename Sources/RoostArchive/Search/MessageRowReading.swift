/// The one reader of stored messages: the one column list every message query selects (`columns`), and how a row
/// becomes a `MessageRow` — for search, transcripts, `roost show`, the JSON of `--json`, export, the web view and
/// the mail mirror alike. The account's JID and the conversation's read marks are looked up here, once per query,
/// not by a subquery for every row; a message's attachments, stored versions and reaction history are looked up
/// only for the rows that have any.
package struct MessageRowReading {
    let database: Database
    let accounts: [Int64: String]
    let marks: ReadMarks
    let store: FileStore
    /// The rows with attachments and reactions, read once (an export of many rows); nil: the columns' subqueries
    /// say it for each row (`columns(raw:lines:)`).
    let decorated: DecoratedRows?
    /// Whether a message's stored versions and reaction history are read (`versions`, `reactionHistory`): what
    /// JSON, exports and the web view show; a text line shows neither (it counts the corrections: `revisions`).
    let history: Bool
    /// The last row's conversation and addresses: the next row's, when the same, are not made again (an export
    /// or a transcript reads one conversation at a time; a flood comes from a few senders).
    private let recent = RecentTexts()

    private final class RecentTexts {
        var conversation = ""
        var from = ""
        var to = ""
    }

    /// Reads the accounts (unless given) and the read marks (small tables): call inside the read transaction of the
    /// query. `rows`: how many messages will be read; when the attachment and reaction tables hold no more, they are
    /// read once instead of probed for every row (see `DecoratedRows`).
    init(_ database: Database, accounts: [Int64: String]? = nil, rows: Int = 0, history: Bool = true) throws(SQLiteError) {
        self.database = database
        if let accounts { self.accounts = accounts } else { self.accounts = try ArchiveReader.accountNames(database) }
        marks = try ReadMarks(database)
        store = FileStore(archivePath: database.path)
        decorated = rows > 0 ? try DecoratedRows.read(database, costingAtMost: rows) : nil
        self.history = history
    }

    /// The columns this reader reads: without the per-row subqueries when it knows the decorated rows.
    func columns(raw: Bool = false, lines: Bool = false) -> String {
        Self.columns(raw: raw, lines: lines, probing: decorated == nil)
    }

    package static let columns = columns()

    /// For text lines (`roost log`, `roost search` without `--json`): the recipient and the thread, stanza, origin
    /// and message ids — text a line never shows — are read as empty, which saves making six strings per row.
    static let lineColumns = columns(lines: true)

    /// The one column list. `raw`: the stanza, else NULL (keeps large stanzas off the heap when nothing shows it).
    /// `probing`: whether a message's attachments and reactions are looked up by subqueries (else 0 and NULL: see
    /// `hasAttachments`, `hasReactions`, `semantics`).
    static func columns(raw: Bool = false, lines: Bool = false, probing: Bool = true) -> String {
        func unlessLines(_ column: String) -> String { lines ? "NULL" : column }
        return """
            m.id, m.account_id, m.conversation, m.direction, m.type, m.from_jid, \(unlessLines("m.to_jid")), m.sender_name, m.body,
            m.subject, \(unlessLines("m.thread")), m.timestamp, m.received_at, \(unlessLines("m.stanza_id")),
            \(unlessLines("m.stanza_id_by")), m.stanza_id_trusted, \(unlessLines("m.origin_id")), \(unlessLines("m.message_id")),
            m.replaces, m.retracted, m.is_carbon, m.source, \(raw ? "roost_stanza(m.raw)" : "NULL"), m.edited,
            \(probing ? "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id)" : "0"), \(encryptionColumns),
            \(roomColumns), m.claimed_at,
            \(probing ? MessageSemanticsReading.columns : MessageSemanticsReading.columns(reactions: "NULL")),
            \(probing ? "EXISTS (SELECT 1 FROM reactions r WHERE r.message_row = m.id)" : "0")
            """
    }

    /// Group chat columns (schema v6): the sender's occupant id and real JID, read after the OMEMO columns.
    static let roomColumns = "m.occupant_id, m.real_jid"

    /// The OMEMO columns (schema v3), read by `encryption(_:at:)`.
    static let encryptionColumns = "m.encryption, m.e2e_namespace, m.e2e_device, m.e2e_fingerprint, m.e2e_trust, m.e2e_failure"

    static func encryption(_ row: Statement.Row, at column: Int32) -> MessageEncryption? {
        guard let scheme = row.optionalText(column) else { return nil }
        return MessageEncryption(scheme: scheme, protocolNamespace: row.optionalText(column + 1), senderDevice: row.optionalInt(column + 2),
                                 fingerprint: row.optionalText(column + 3), trust: row.optionalText(column + 4),
                                 failure: row.optionalText(column + 5))
    }

    func hasAttachments(_ row: Statement.Row) -> Bool {
        decorated.map { $0.attachments.contains(row.int(0)) } ?? row.bool(24)
    }

    func hasReactions(_ row: Statement.Row) -> Bool {
        decorated.map { $0.reactions.contains(row.int(0)) } ?? row.bool(42)
    }

    /// The message of a row of `columns`. `includeRevisionRaw`: the stored versions carry their stanzas (jsonl).
    func row(_ row: Statement.Row, highlighter: Highlighter = .none,
             includeRevisionRaw: Bool = false) throws(SQLiteError) -> MessageRow {
        let id = row.int(0)
        var message = MessageRow(
            id: id, account: accounts[row.int(1)] ?? "", conversation: row.text(2, reusing: &recent.conversation),
            direction: MessageDirection(rawValue: row.text(3)) ?? .incoming, kind: MessageKind(rawValue: row.text(4)) ?? .normal,
            from: row.text(5, reusing: &recent.from), to: row.text(6, reusing: &recent.to), senderName: row.optionalText(7), body: row.optionalText(8),
            subject: row.optionalText(9), thread: row.optionalText(10), timestamp: row.int(11), receivedAt: row.int(12),
            stanzaId: row.optionalText(13), stanzaIdBy: row.optionalText(14), stanzaIdTrusted: row.bool(15),
            originId: row.optionalText(16), messageId: row.optionalText(17), replaces: row.optionalText(18),
            retracted: row.bool(19), isCarbon: row.bool(20), source: MessageSource(rawValue: row.text(21)) ?? .live,
            rawStanza: row.optionalText(22))
        message.highlighter = highlighter
        message.encryption = Self.encryption(row, at: 25)
        message.occupantId = row.optionalText(31)
        message.realJid = row.optionalText(32)
        message.claimedAt = row.optionalInt(33)
        message.semantics = try semantics(row, conversation: message.conversation)
        message.replyTo = row.optionalText(35)
        message.replyToJid = row.optionalText(36)
        let edited = Int(row.int(23))
        if history {
            if hasReactions(row) { message.reactionHistory = try reactionHistory(of: id) }
            if edited > 0 { message.versions = try revisions(of: id, includeRaw: includeRevisionRaw) }
            // Edited when versions are stored (what every format shows).
            message.revisions = message.versions.isEmpty ? 0 : max(1, edited)
        } else {
            message.revisions = edited
        }
        if hasAttachments(row) { message.attachments = try attachments(of: id) }
        return message
    }

    /// The message's `MessageSemantics` (replies, reactions, retraction, receipts, unread).
    func semantics(_ row: Statement.Row, conversation: String? = nil) throws(SQLiteError) -> MessageSemantics {
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
        return MessageSemanticsReading.semantics(row, at: 34, marks: marks.of(account: row.int(1), conversation: conversation ?? row.text(2)), id: id,
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

    /// The message's files; a stored file's `localPath` is its place in the file store.
    func attachments(of id: Int64) throws(SQLiteError) -> [AttachmentRecord] {
        var attachments: [AttachmentRecord] = []
        try database.cached("SELECT \(AttachmentReading.columns) FROM attachments a WHERE a.message_row = ? ORDER BY a.id")
            .forEachRow([.integer(id)]) { row in
                attachments.append(AttachmentReading.record(row, at: 0, store: store))
                return true
            }
        return attachments
    }
}

/// The messages with attachments and those with reactions, read once from those tables: for a reader of many rows
/// (all matches of a search, an export), where a probe of both tables for every row costs more.
struct DecoratedRows {
    var attachments = Set<Int64>()
    var reactions = Set<Int64>()

    func contains(_ id: Int64) -> Bool { attachments.contains(id) || reactions.contains(id) }

    /// At most this many ids are read ahead (a few MB), whatever the caller would read: `search --limit 0` or an
    /// export of a large archive with many files then probes per row, memory flat.
    static let mostPreloaded = 100_000

    /// The rows, when the two tables hold at most `limit` (and `mostPreloaded`) rows together (their highest ids
    /// bound that: two index seeks); nil when they may hold more, and the reader should probe per row. Its
    /// statements are the connection's cached ones: the mirror asks at every pass (compiling them was a third of
    /// its pass's fixed work).
    static func read(_ database: Database, costingAtMost limit: Int) throws(SQLiteError) -> DecoratedRows? {
        let bound = try database.cached("""
            SELECT coalesce((SELECT max(id) FROM attachments), 0) + coalesce((SELECT max(id) FROM reactions), 0)
            """).scalarInt() ?? 0
        guard bound <= min(limit, mostPreloaded) else { return nil }
        var rows = DecoratedRows()
        try database.cached("SELECT message_row FROM attachments").forEachRow { row in
            rows.attachments.insert(row.int(0))
            return true
        }
        try database.cached("SELECT message_row FROM reactions WHERE message_row IS NOT NULL").forEachRow { row in
            rows.reactions.insert(row.int(0))
            return true
        }
        return rows
    }

    /// One conversation's rows with attachments or reactions, found from those tables' side (no probe per message).
    static func read(_ database: Database, conversation: String) throws(SQLiteError) -> DecoratedRows {
        var rows = DecoratedRows()
        for table in ["attachments", "reactions"] {
            try database.prepare("""
                SELECT t.message_row FROM \(table) t CROSS JOIN messages m ON m.id = t.message_row WHERE m.conversation = ?1
                """).forEachRow([.text(conversation)]) { row in
                if table == "attachments" { rows.attachments.insert(row.int(0)) } else { rows.reactions.insert(row.int(0)) }
                return true
            }
        }
        return rows
    }
}
