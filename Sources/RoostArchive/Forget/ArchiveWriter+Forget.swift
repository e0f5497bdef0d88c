import RoostCore
import Foundation

/// What `ArchiveWriter.forget` removed.
public struct ForgetResult: Sendable, Equatable {
    /// Messages removed (those of the ids given that were still stored).
    public var messages = 0
    /// Their earlier versions (XEP-0308 corrections), removed with them.
    public var versions = 0
    /// Reactions to them, removed with them.
    public var reactions = 0
    /// Their attachments' rows, removed with them.
    public var attachments = 0
    /// Files of the file store no other message refers to, deleted after the commit.
    public var files = 0
    /// Tombstones written (`SchemaV17`): the ids that no longer bring the messages back.
    public var tombstones = 0
    /// Whether the write-ahead log could be emptied afterwards (false while readers hold it: the freed pages in it are
    /// overwritten as the log is reused, and emptied at the next checkpoint that finds no reader).
    public var logTruncated = false

    public init() {}
}

extension ArchiveWriter {
    /// Forgets the messages `ids` for good, in ONE write transaction taken like every other writer's (`BEGIN
    /// IMMEDIATE` behind SQLite's busy timeout, so the running agent's commits wait for it and lose nothing) with
    /// `PRAGMA secure_delete = ON`: each message row with its text, stored stanza, encryption details, earlier versions,
    /// reactions, retraction, attachment rows and full-text entries; what it was waiting to send (`outbox`). The
    /// counters follow (`SchemaV10`'s triggers), and unread counts with them (they count rows). Before the rows go, their
    /// tombstones are written (`SchemaV17`), so the ingest path refuses them when they come again.
    ///
    /// The full-text index is then merged (`optimize`): FTS5 removes a row's terms by writing a delete marker, and the
    /// terms stay in the older segments until a merge rewrites them, so a forgotten word would otherwise remain in the
    /// file. The merge rewrites the whole index (seconds for a million messages); its old pages are freed, and with
    /// `secure_delete` overwritten with zeros, as are the deleted rows' cells. After the commit the write-ahead log is
    /// checkpointed and truncated (its frames hold earlier copies of the pages) and free pages are given back where the
    /// archive uses incremental vacuum. Last, the files of the file store that only these messages referred to are
    /// deleted. Ids no longer stored are skipped.
    public func forget(ids: [Int64], now: Int64? = nil) throws(ArchiveError) -> ForgetResult {
        let now = now ?? Timestamp.now()
        let (unreferenced, forgotten) = try perform { ingestor throws(ArchiveError) -> ([String], ForgetResult) in
            var result = ForgetResult()
            let database = ingestor.database
            let previous = (try? database.cached("PRAGMA secure_delete").scalarInt()) ?? 1
            do throws(SQLiteError) {
                try database.execute("PRAGMA secure_delete = ON")
                defer { try? database.execute("PRAGMA secure_delete = \(previous)") }
                let hashes = try database.write { () throws(SQLiteError) -> [String] in
                    try Self.forget(ids, now: now, in: database, result: &result)
                }
                ingestor.discardCaches()
                // Earlier copies of the changed pages live on in the log until it is emptied.
                try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                var info = stat()
                result.logTruncated = stat(database.path + "-wal", &info) != 0 || info.st_size == 0
                try? database.execute("PRAGMA incremental_vacuum")
                return (hashes, result)
            } catch {
                ingestor.discardCaches()
                throw .sqlite(error)
            }
        }
        var result = forgotten
        let store = FileStore(archivePath: path)
        for hash in unreferenced where FileStore.isSHA256(hash) {
            if unlink(store.path(forSHA256: hash)) == 0 { result.files += 1 }
        }
        return result
    }

    /// The work of `forget` inside its transaction; returns the SHA-256 of the files no row refers to any more.
    private static func forget(_ ids: [Int64], now: Int64, in database: Database, result: inout ForgetResult) throws(SQLiteError) -> [String] {
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS forget_ids (id INTEGER PRIMARY KEY)")
        try database.execute("DELETE FROM temp.forget_ids")
        let add = try database.prepare("INSERT OR IGNORE INTO temp.forget_ids (id) SELECT id FROM messages WHERE id = ?")
        for id in ids { try add.run([.integer(id)]) }
        defer { try? database.execute("DELETE FROM temp.forget_ids") }
        func count(_ sql: String) throws(SQLiteError) -> Int { Int(try database.prepare(sql).scalarInt() ?? 0) }
        result.messages = try count("SELECT count(*) FROM temp.forget_ids")
        guard result.messages > 0 else { return [] }
        result.versions = try count("SELECT count(*) FROM message_revisions WHERE message_row IN temp.forget_ids AND revision > 0")
        result.reactions = try count("SELECT count(*) FROM reactions WHERE message_row IN temp.forget_ids")
        result.attachments = try count("SELECT count(*) FROM attachments WHERE message_row IN temp.forget_ids")
        let before = try count("SELECT count(*) FROM forgotten_messages")
        try database.run(Tombstone.insertSQL, [.integer(now)])
        result.tombstones = try count("SELECT count(*) FROM forgotten_messages") - before
        var hashes: [String] = []
        try database.prepare("SELECT DISTINCT sha256 FROM attachments WHERE message_row IN temp.forget_ids AND sha256 IS NOT NULL")
            .forEachRow { row in
                hashes.append(row.text(0))
                return true
            }
        try database.execute("""
            DELETE FROM outbox WHERE rowid IN (
                SELECT o.rowid FROM outbox o JOIN messages m ON m.account_id = o.account_id AND m.origin_id = o.origin_id
                WHERE m.id IN temp.forget_ids AND m.direction = 'out')
            """)
        // The delete triggers take each row out of the full-text index; the foreign keys take its versions, reactions,
        // retraction and attachment rows. The counters' trigger (`SchemaV10`) looks for its conversation's first and
        // last message again at each row, which for a whole conversation is quadratic (20,000 messages took three
        // minutes): it is left out of this transaction, and the conversations touched are counted again at the end.
        try database.execute("""
            CREATE TEMP TABLE IF NOT EXISTS forget_conversations (
                account_id INTEGER NOT NULL, conversation TEXT NOT NULL COLLATE NOCASE, PRIMARY KEY (account_id, conversation))
            """)
        try database.execute("DELETE FROM temp.forget_conversations")
        defer { try? database.execute("DELETE FROM temp.forget_conversations") }
        try database.execute("""
            INSERT OR IGNORE INTO temp.forget_conversations SELECT account_id, conversation FROM messages WHERE id IN temp.forget_ids
            """)
        var counterTrigger: String?
        try database.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_count_delete'").forEachRow { row in
            counterTrigger = row.optionalText(0)
            return false
        }
        if counterTrigger != nil { try database.execute("DROP TRIGGER messages_count_delete") }
        try database.execute("DELETE FROM messages WHERE id IN temp.forget_ids")
        if let counterTrigger {
            try database.execute(Self.recountSQL)
            try database.execute(counterTrigger)
        }
        try database.execute("INSERT INTO message_fts(message_fts) VALUES('optimize')")
        let referenced = try database.prepare("SELECT 1 FROM attachments WHERE sha256 = ? LIMIT 1")
        var unreferenced: [String] = []
        for hash in hashes {
            if try referenced.scalarInt([.text(hash)]) == nil { unreferenced.append(hash) }
        }
        return unreferenced
    }
}

extension ArchiveWriter {
    /// The counters of the conversations in `temp.forget_conversations` made again from their rows, as `SchemaV10`
    /// first made them.
    static let recountSQL = """
        DELETE FROM conversation_counts WHERE EXISTS (SELECT 1 FROM temp.forget_conversations f
            WHERE f.account_id = conversation_counts.account_id AND f.conversation = conversation_counts.conversation);
        INSERT INTO conversation_counts
        SELECT m.account_id, m.conversation, count(*), sum(m.direction = 'in'), sum(m.direction = 'out'), sum(m.type = 'groupchat'),
               min(m.timestamp), max(m.timestamp)
        FROM temp.forget_conversations f JOIN messages m ON m.account_id = f.account_id AND m.conversation = f.conversation
        GROUP BY m.account_id, m.conversation;
        DELETE FROM room_senders WHERE EXISTS (SELECT 1 FROM temp.forget_conversations f
            WHERE f.account_id = room_senders.account_id AND f.conversation = room_senders.conversation);
        INSERT INTO room_senders
        SELECT m.account_id, m.conversation, coalesce(m.occupant_id, m.from_jid), count(*)
        FROM temp.forget_conversations f JOIN messages m ON m.account_id = f.account_id AND m.conversation = f.conversation
        WHERE m.type = 'groupchat' AND m.body IS NOT NULL GROUP BY 1, 2, 3;
        """
}

/// The keys by which a forgotten message is known when it comes again (`SchemaV17`).
enum Tombstone {
    /// A trusted stanza-id's key; `by` is the archive that assigned it (the account's or a room's).
    static func stanzaIDKey(by: String, id: String) -> String { "s|\(by.lowercased())|\(id)" }

    /// The same key as SQL over a row's columns.
    private static func stanzaIDKeySQL(by: String, id: String) -> String { "'s|' || lower(\(by)) || '|' || \(id)" }

    /// The tombstones of the messages in `temp.forget_ids` and of their earlier versions (`?1`: the time). A version's
    /// stanza-id was assigned by the archive that assigned its message's (a room's for a groupchat message, else the
    /// account's); its origin-id key is its message's with its own origin-id.
    static let insertSQL = """
        INSERT OR IGNORE INTO forgotten_messages (account_id, key, forgotten_at)
        SELECT m.account_id, \(stanzaIDKeySQL(by: "m.stanza_id_by", id: "m.stanza_id")), ?1
        FROM messages m WHERE m.id IN temp.forget_ids AND m.stanza_id_trusted = 1 AND m.stanza_id IS NOT NULL
            AND m.stanza_id_by IS NOT NULL
        UNION ALL
        SELECT m.account_id, roost_dedup_key('o', m.conversation, m.direction, m.type, m.from_jid, m.origin_id), ?1
        FROM messages m WHERE m.id IN temp.forget_ids AND m.origin_id IS NOT NULL AND m.origin_id <> ''
        UNION ALL
        SELECT m.account_id, \(stanzaIDKeySQL(by: "coalesce(m.stanza_id_by, CASE m.type WHEN 'groupchat' THEN m.conversation ELSE a.jid END)", id: "r.stanza_id")), ?1
        FROM message_revisions r JOIN messages m ON m.id = r.message_row JOIN accounts a ON a.id = m.account_id
        WHERE r.message_row IN temp.forget_ids AND r.stanza_id_trusted = 1 AND r.stanza_id IS NOT NULL
        UNION ALL
        SELECT m.account_id, roost_dedup_key('o', m.conversation, m.direction, m.type, r.from_jid, r.origin_id), ?1
        FROM message_revisions r JOIN messages m ON m.id = r.message_row
        WHERE r.message_row IN temp.forget_ids AND r.origin_id IS NOT NULL AND r.origin_id <> ''
        """
}

extension Ingestor {
    /// Whether `record` is a message `roost forget` removed: its trusted stanza-id or its origin-id key (`key`, when it
    /// is one) has a tombstone (`SchemaV17`). Asked only when the archive holds tombstones (once per batch).
    func isForgotten(_ record: MessageRecord, account: Int64, key: String) throws(SQLiteError) -> Bool {
        if forgottenExist == nil {
            forgottenExist = try database.cached("SELECT 1 FROM forgotten_messages LIMIT 1").scalarInt() != nil
        }
        guard forgottenExist == true else { return false }
        let lookup = try database.cached("SELECT 1 FROM forgotten_messages WHERE account_id = ? AND key = ?")
        if record.stanzaIdTrusted, let stanzaId = record.stanzaId,
           try lookup.scalarInt([.integer(account), .text(Tombstone.stanzaIDKey(by: record.stanzaIdBy ?? record.account, id: stanzaId))]) != nil {
            return true
        }
        guard DedupKey.originID(of: record) != nil else { return false }
        return try lookup.scalarInt([.integer(account), .text(key)]) != nil
    }
}
