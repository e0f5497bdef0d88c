/// What `roost verify` compares with the server's archive: an account's trusted stanza-ids, and rows that
/// break the deduplication rules of `SchemaV1`.
extension ArchiveReader {
    /// Every trusted stanza-id the account's own archive assigned (not rooms'), from messages and from corrections
    /// kept as revisions (a correction the server archived as a message of its own lives in `message_revisions`).
    public func trustedStanzaIDs(account: String) throws(ArchiveError) -> [LocalStanzaID] {
        let sql = """
            SELECT m.stanza_id, m.timestamp, m.received_at FROM messages m JOIN accounts a ON a.id = m.account_id
            WHERE a.jid = ?1 AND m.stanza_id_trusted = 1 AND m.stanza_id IS NOT NULL AND m.stanza_id_by = a.jid
            UNION
            SELECT r.stanza_id, r.timestamp, r.received_at FROM message_revisions r
            JOIN messages m ON m.id = r.message_row JOIN accounts a ON a.id = m.account_id
            WHERE a.jid = ?1 AND r.stanza_id_trusted = 1 AND r.stanza_id IS NOT NULL AND m.type != 'groupchat'
            """
        var ids: [LocalStanzaID] = []
        try withDatabase { database throws(SQLiteError) in
            try database.prepare(sql).forEachRow([.text(account)]) { row in
                ids.append(LocalStanzaID(stanzaId: row.text(0), timestamp: row.int(1), receivedAt: row.int(2)))
                return true
            }
        }
        return ids
    }

    /// Rows sharing one trusted stanza-id. The unique index makes this impossible; verify checks anyway,
    /// since an archive may have been copied, imported or edited by hand.
    public func duplicateTrustedStanzaIDs(account: String) throws(ArchiveError) -> [DuplicateGroup] {
        try duplicateGroups(account: account, keyColumn: "m.stanza_id",
                            condition: "m.stanza_id_trusted = 1 AND m.stanza_id IS NOT NULL AND m.stanza_id_by = a.jid")
    }

    /// Rows sharing one fallback dedup key where at least one of them has no trusted stanza-id: the ingest
    /// rules would have merged those. (Rows whose trusted ids differ are different messages even when their
    /// fallback keys agree, so such groups are not reported.)
    public func duplicateFallbackKeys(account: String) throws(ArchiveError) -> [DuplicateGroup] {
        try duplicateGroups(account: account, keyColumn: DedupKey.fullKeySQL("m."), condition: "1", having: "min(m.stanza_id_trusted) = 0")
    }

    /// Whether a row with the record's fallback key but without a trusted stanza-id exists: the message is
    /// here, only not yet linked to its server id (ingesting the record would link it, not add a row).
    public func hasUnlinkedCopy(of record: MessageRecord) throws(ArchiveError) -> Bool {
        return try withDatabase { database throws(SQLiteError) in
            guard let account = try database.cached("SELECT id FROM accounts WHERE jid = ?").scalarInt([.text(record.account)]) else {
                return false
            }
            return try database.prepare(DedupKey.lookupSQL(extra: "stanza_id_trusted = 0"))
                .scalarInt([.integer(account), .text(DedupKey.make(for: record)), SQLValue(DedupKey.originID(of: record))]) != nil
        }
    }

    private func duplicateGroups(account: String, keyColumn: String, condition: String,
                                 having: String = "1") throws(ArchiveError) -> [DuplicateGroup] {
        let sql = """
            SELECT \(keyColumn), group_concat(m.id) FROM messages m JOIN accounts a ON a.id = m.account_id
            WHERE a.jid = ? AND \(condition)
            GROUP BY \(keyColumn) HAVING count(*) > 1 AND \(having) ORDER BY min(m.id)
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
