/// What `roost verify` compares with the server's archive: an account's trusted stanza-ids, and rows that
/// break the deduplication rules of `SchemaV1`.
extension ArchiveReader {
    /// Of `ids` (the server archive ids of one page), those the archive holds as the account's trusted stanza-ids,
    /// or holds a tombstone of (`SchemaV17`: forgotten on purpose, so neither missing nor to repair).
    /// Messages are looked up through the unique `messages_trusted_stanza_id` index, so a page costs one indexed
    /// query whatever the archive's size; `revisions` also searches corrections kept as revisions, which have no
    /// index on the id (a scan of `message_revisions`): for the final check of the few ids still missing.
    /// (Here and in `trustedStanzaIDSummary`, `CROSS JOIN` makes SQLite read the small `message_revisions` first
    /// and find each row's message by its key, instead of probing the revisions of every message of the account.)
    public func storedTrustedStanzaIDs(account: String, among ids: [String], revisions: Bool) throws(ArchiveError) -> Set<String> {
        var found = Set<String>()
        for start in stride(from: 0, to: ids.count, by: Self.verifyBatch) {
            let batch = ids[start..<min(start + Self.verifyBatch, ids.count)]
            let list = (2..<(batch.count + 2)).map { "?\($0)" }.joined(separator: ",")
            var sql = """
                SELECT m.stanza_id FROM messages m JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ?1 AND m.stanza_id_trusted = 1 AND m.stanza_id_by = a.jid AND m.stanza_id IN (\(list))
                UNION
                SELECT substr(f.key, length(lower(?1)) + 4) FROM forgotten_messages f JOIN accounts a ON a.id = f.account_id
                WHERE a.jid = ?1 AND f.key IN (\(list.split(separator: ",").map { "'s|' || lower(?1) || '|' || \($0)" }.joined(separator: ",")))
                """
            if revisions {
                sql += """

                    UNION
                    SELECT r.stanza_id FROM message_revisions r
                    CROSS JOIN messages m ON m.id = r.message_row JOIN accounts a ON a.id = m.account_id
                    WHERE a.jid = ?1 AND r.stanza_id_trusted = 1 AND m.type != 'groupchat' AND r.stanza_id IN (\(list))
                    """
            }
            try withDatabase { database throws(SQLiteError) in
                try database.prepare(sql).forEachRow([.text(account)] + batch.map { .text($0) }) { row in
                    found.insert(row.text(0))
                    return true
                }
            }
        }
        return found
    }

    /// Bound parameters per lookup: a server page (250 by default) in one statement.
    static let verifyBatch = 500

    /// Remembers archive ids the server listed, in a temporary table of this connection (SQLite's temp store, a
    /// file), for `trustedStanzaIDSummary`'s orphan check: a server history of any length costs no memory here.
    public func rememberServerIDs(_ ids: [String]) throws(ArchiveError) {
        try withDatabase { database throws(SQLiteError) in
            try Self.createServerIDTable(database)
            // The transaction only covers the temp table; the archive itself is never written.
            try database.execute("BEGIN")
            do throws(SQLiteError) {
                let insert = try database.cached("INSERT OR IGNORE INTO temp.verify_server_ids(id) VALUES (?)")
                for id in ids { try insert.run([.text(id)]) }
                try database.execute("COMMIT")
            } catch {
                try? database.execute("ROLLBACK")
                throw error
            }
        }
    }

    private static func createServerIDTable(_ database: Database) throws(SQLiteError) {
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS verify_server_ids(id TEXT PRIMARY KEY) WITHOUT ROWID")
    }

    /// What the archive holds of the account's trusted stanza-ids (from messages and from corrections kept as
    /// revisions; a correction the server archived as a message of its own lives in `message_revisions`),
    /// read in one pass: how many, and those the server did not list (`rememberServerIDs`) that were stored
    /// before `receivedBefore` — counted, with the `sampleSize` oldest kept.
    public func trustedStanzaIDSummary(account: String, receivedBefore: Int64, sampleSize: Int) throws(ArchiveError) -> TrustedStanzaIDSummary {
        // One row per id (an id on a message and on a revision counts once); the bare columns come from the
        // row with the smallest timestamp.
        let sql = """
            SELECT u.stanza_id, min(u.timestamp), u.received_at,
                   EXISTS (SELECT 1 FROM temp.verify_server_ids s WHERE s.id = u.stanza_id)
            FROM (
                SELECT m.stanza_id, m.timestamp, m.received_at FROM messages m JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ?1 AND m.stanza_id_trusted = 1 AND m.stanza_id IS NOT NULL AND m.stanza_id_by = a.jid
                UNION ALL
                SELECT r.stanza_id, r.timestamp, r.received_at FROM message_revisions r
                CROSS JOIN messages m ON m.id = r.message_row JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ?1 AND r.stanza_id_trusted = 1 AND r.stanza_id IS NOT NULL AND m.type != 'groupchat'
            ) u GROUP BY u.stanza_id
            """
        var summary = TrustedStanzaIDSummary()
        var sample: [(timestamp: Int64, id: String)] = []
        try withDatabase { database throws(SQLiteError) in
            try Self.createServerIDTable(database)
            try database.prepare(sql).forEachRow([.text(account)]) { row in
                summary.count += 1
                guard !row.bool(3), row.int(2) < receivedBefore else { return true }
                summary.orphans += 1
                let entry = (timestamp: row.int(1), id: row.text(0))
                if sample.count < sampleSize || sample.last.map({ (entry.timestamp, entry.id) < ($0.timestamp, $0.id) }) == true {
                    let at = sample.firstIndex { (entry.timestamp, entry.id) < ($0.timestamp, $0.id) } ?? sample.endIndex
                    sample.insert(entry, at: at)
                    if sample.count > sampleSize { sample.removeLast() }
                }
                return true
            }
        }
        summary.orphanSample = sample.map(\.id)
        return summary
    }

    /// Rows sharing one trusted stanza-id. The unique index makes this impossible; verify checks anyway,
    /// since an archive may have been copied, imported or edited by hand.
    public func duplicateTrustedStanzaIDs(account: String) throws(ArchiveError) -> [DuplicateGroup] {
        try duplicateGroups(account: account, keyColumn: "m.stanza_id",
                            condition: "m.stanza_id_trusted = 1 AND m.stanza_id IS NOT NULL AND m.stanza_id_by = a.jid")
    }

    /// Rows sharing one fallback dedup key where at least one of them has no trusted stanza-id, or that are private
    /// messages with a room's occupant: the ingest rules would have merged those. (Elsewhere rows whose trusted ids
    /// differ are different messages even when their fallback keys agree, so such groups are not reported; a room's
    /// private message delivered to two of the user's sessions has two ids for one message: `SchemaV1`, rule 5.)
    public func duplicateFallbackKeys(account: String) throws(ArchiveError) -> [DuplicateGroup] {
        try duplicateGroups(account: account, keyColumn: DedupKey.fullKeySQL("m."), condition: "1",
                            having: "min(m.stanza_id_trusted) = 0 OR max(\(DedupKey.roomPrivateSQL("m.conversation")))")
    }

    /// Whether a row with the record's fallback key but without a trusted stanza-id exists: the message is
    /// here, only not yet linked to its server id (ingesting the record would link it, not add a row).
    public func hasUnlinkedCopy(of record: MessageRecord) throws(ArchiveError) -> Bool {
        try hasCopy(of: record, extra: "stanza_id_trusted = 0")
    }

    /// Whether the record is a private message with a room's occupant that is stored under another of its trusted
    /// ids: another copy of the same message, which the ingest rules store once (`SchemaV1`, rule 5).
    public func hasOtherCopy(ofRoomPrivate record: MessageRecord) throws(ArchiveError) -> Bool {
        guard DedupKey.isRoomPrivate(record.conversation) else { return false }
        return try hasCopy(of: record, extra: "stanza_id_trusted = 1")
    }

    /// Whether the archive holds the room invitation the server archived as a message, by the rules that store it
    /// (`Ingestor.insert(_: InvitationRecord)`): a row for the same room and inviter that carries the same message id,
    /// or into which it was merged — a repeat while the first was pending refreshes that row (and takes over its
    /// message id), so the invitation's time then lies within the row's life (`created_at` … `updated_at`, with
    /// `invitationSlack` either side for the gap between the server's stamp and the agent's clock).
    public func hasInvitation(_ record: InvitationRecord) throws(ArchiveError) -> Bool {
        let sql = """
            SELECT 1 FROM room_invitations i JOIN accounts a ON a.id = i.account_id
            WHERE a.jid = ?1 AND i.room = ?2 AND coalesce(i.inviter_bare, '') = coalesce(?3, '')
              AND ((?4 IS NOT NULL AND i.message_id = ?4) OR ?5 BETWEEN i.created_at - ?6 AND i.updated_at + ?6)
            LIMIT 1
            """
        return try withDatabase { database throws(SQLiteError) in
            try database.cached(sql).scalarInt([.text(record.account), .text(record.room), SQLValue(record.inviter.map(JIDText.bare)),
                                                SQLValue(record.messageId), .integer(record.timestamp),
                                                .integer(Self.invitationSlack)]) != nil
        }
    }

    /// How far an invitation's time (the server's stamp) may lie outside the life of the row that holds it (the agent
    /// stored a live one at its own clock's time): five minutes.
    static let invitationSlack: Int64 = 5 * 60_000

    private func hasCopy(of record: MessageRecord, extra: String) throws(ArchiveError) -> Bool {
        try withDatabase { database throws(SQLiteError) in
            guard let account = try database.cached("SELECT id FROM accounts WHERE jid = ?").scalarInt([.text(record.account)]) else {
                return false
            }
            return try database.prepare(DedupKey.lookupSQL(extra: extra))
                .scalarInt([.integer(account), .text(DedupKey.make(for: record)), SQLValue(DedupKey.originID(of: record))]) != nil
        }
    }

    private func duplicateGroups(account: String, keyColumn: String, condition: String,
                                 having: String = "1") throws(ArchiveError) -> [DuplicateGroup] {
        let sql = """
            SELECT \(keyColumn), group_concat(m.id) FROM messages m JOIN accounts a ON a.id = m.account_id
            WHERE a.jid = ? AND \(condition)
            GROUP BY \(keyColumn) HAVING count(*) > 1 AND (\(having)) ORDER BY min(m.id)
            """
        var groups: [DuplicateGroup] = []
        try withDatabase { database throws(SQLiteError) in
            try database.prepare(sql).forEachRow([.text(account)]) { row in
                let ids = row.text(1).split(separator: ",").compactMap { Int64($0) }.sorted()
                groups.append(DuplicateGroup(key: row.text(0), rowIds: ids))
                return true
            }
        }
        return groups
    }
}

/// The account's trusted stanza-ids as `roost verify` reports them (`ArchiveReader.trustedStanzaIDSummary`).
public struct TrustedStanzaIDSummary: Sendable, Equatable {
    /// Distinct trusted stanza-ids the archive holds for the account.
    public var count = 0
    /// Of those, ids the server did not list, stored before verify started.
    public var orphans = 0
    /// The oldest orphans (by message time, then id).
    public var orphanSample: [String] = []
}
