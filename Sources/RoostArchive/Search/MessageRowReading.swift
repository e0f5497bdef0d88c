/// The one column list every message query selects, and how a row becomes a `MessageRow`. The account's JID
/// and the conversation's read marks are looked up here, once per query, not by a subquery for every row.
package struct MessageRowReading {
    let accounts: [Int64: String]
    let marks: ReadMarks
    let store: FileStore

    /// Reads the accounts and read marks (small tables): call inside the read transaction of the query.
    init(_ database: Database) throws(SQLiteError) {
        accounts = try ArchiveReader.accountNames(database)
        marks = try ReadMarks(database)
        store = FileStore(archivePath: database.path)
    }

    package static let columns = columnList(forLines: false)

    /// For text lines (`roost log`, `roost search` without `--json`): the recipient and the thread, stanza, origin
    /// and message ids — text a line never shows — are read as empty, which saves making five strings per row.
    static let lineColumns = columnList(forLines: true)

    private static func columnList(forLines: Bool) -> String {
        """
        m.id, m.account_id, m.conversation, m.direction, m.type, m.from_jid, \(forLines ? "NULL" : "m.to_jid"),
        m.sender_name, m.timestamp, m.received_at, m.body, m.subject,
        \(forLines ? "NULL, NULL, NULL, NULL" : "m.thread, m.stanza_id, m.origin_id, m.message_id"),
        m.edited, m.is_carbon, m.source, \(encryptionColumns),
        (SELECT json_group_array(json_array(a.url, a.name, a.mime, a.size, a.state, a.sha256, a.local_path))
         FROM attachments a WHERE a.message_row = m.id),
        \(roomColumns), m.claimed_at, \(MessageSemanticsReading.columns)
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

    func row(_ row: Statement.Row, highlighter: Highlighter) -> MessageRow {
        let id = row.int(0), accountID = row.int(1), conversation = row.text(2)
        let direction = MessageDirection(rawValue: row.text(3)) ?? .incoming
        return MessageRow(
            id: id, account: accounts[accountID] ?? "", conversation: conversation, direction: direction,
            kind: MessageKind(rawValue: row.text(4)) ?? .normal,
            from: row.text(5), to: row.text(6), senderName: row.optionalText(7), timestamp: row.int(8),
            receivedAt: row.int(9), claimedAt: row.optionalInt(28), body: row.optionalText(10), subject: row.optionalText(11), thread: row.optionalText(12),
            stanzaId: row.optionalText(13), originId: row.optionalText(14), messageId: row.optionalText(15),
            revisions: Int(row.int(16)), isCarbon: row.bool(17), source: MessageSource(rawValue: row.text(18)) ?? .live,
            attachments: Self.attachments(row.text(25), store: store), highlighter: highlighter, encryption: Self.encryption(row, at: 19),
            occupantId: row.optionalText(26), realJid: row.optionalText(27),
            semantics: MessageSemanticsReading.semantics(row, at: 29, marks: marks.of(account: accountID, conversation: conversation),
                                                         id: id, incoming: direction == .incoming))
    }

    /// The attachment summary column: a JSON array of `[url, name, mime, size, state, sha256, local_path]`.
    private static func attachments(_ json: String, store: FileStore) -> [AttachmentRecord] {
        guard json != "[]", case .array(let items)? = try? JSONParser.parse(Array(json.utf8)) else { return [] }
        return items.compactMap { item in
            guard case .array(let fields) = item, fields.count == 7, case .string(let url) = fields[0] else { return nil }
            func text(_ index: Int) -> String? { if case .string(let value) = fields[index] { return value } else { return nil } }
            let size: Int64? = if case .integer(let value) = fields[3] { value } else { nil }
            let state = text(4).flatMap(AttachmentState.init(rawValue:)) ?? .pending
            let sha256 = text(5)
            let path = state == .stored ? sha256.map(store.path(forSHA256:)) ?? text(6) : nil
            return AttachmentRecord(url: url, localPath: path, mime: text(2), size: size, name: text(1), sha256: sha256, state: state)
        }
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
    /// bound that: two index seeks); nil when they may hold more, and the reader should probe per row.
    static func read(_ database: Database, costingAtMost limit: Int) throws(SQLiteError) -> DecoratedRows? {
        let bound = try database.prepare("""
            SELECT coalesce((SELECT max(id) FROM attachments), 0) + coalesce((SELECT max(id) FROM reactions), 0)
            """).scalarInt() ?? 0
        guard bound <= min(limit, mostPreloaded) else { return nil }
        var rows = DecoratedRows()
        try database.prepare("SELECT message_row FROM attachments").forEachRow { row in
            rows.attachments.insert(row.int(0))
            return true
        }
        try database.prepare("SELECT message_row FROM reactions WHERE message_row IS NOT NULL").forEachRow { row in
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
