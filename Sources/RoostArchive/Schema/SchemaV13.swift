/// Schema version 13: origin-id dedup keys not stored twice (issue 15, archive size).
///
/// An origin-id key (`o|conversation|direction|origin-id`, + `|from` in a room; ~60 bytes) repeats columns of its
/// own row that never change after the insert, and `messages_origin` already finds a row by its origin-id. So
/// such a row stores the marker `'o'` in `dedup_key` (`DedupKey.storedOriginMarker`), `roost_dedup_key(...)`
/// rebuilds the key from the row, and `messages_dedup` becomes partial: only the rows whose key is stored in full
/// (message-id and timestamp keys, which hash the body a correction may change). Every lookup by key
/// (`DedupKey.lookupSQL`) asks both indexes, so it returns exactly the rows `dedup_key = ?` returned before.
///
/// The migration:
/// 1. drops `messages_dedup` (one transaction; its full-key entries would otherwise be deleted one by one);
/// 2. in batches of `batchSize` rows, each its own transaction, walking the rowid upwards, replaces a stored
///    origin-id key by the marker where — and only where — `roost_dedup_key` rebuilds exactly that key from the
///    row (a key written by an older rule, or a row whose columns no longer give it, stays in full);
/// 3. with the version record, builds the partial index (one sorted pass).
/// A kill -9 anywhere leaves a consistent archive: some rows marked, the rest in full, both read the same through
/// `roost_dedup_key`; the index missing until the next open finishes the migration (a writer builds it from
/// `DeferredIndexes` otherwise, before it writes). The marked rows' pages keep their size until new rows fill
/// them or `VACUUM`.
enum SchemaV13 {
    static let dedupIndexSQL =
        "CREATE INDEX IF NOT EXISTS messages_dedup ON messages(account_id, dedup_key) WHERE \(DedupKey.indexedCondition)"
    static let sql = "DROP INDEX IF EXISTS messages_dedup; \(dedupIndexSQL);"
    static let batchSize = 2_000
    static let version: Int64 = 13

    static func markOriginKeys(_ database: Database) throws(SQLiteError) {
        let started = try database.write { () throws(SQLiteError) -> Bool in
            // Checked inside the write lock: another process may have finished the migration meanwhile.
            guard try database.cached("SELECT 1 FROM schema_migrations WHERE version = ?").scalarInt([.integer(version)]) == nil else {
                return false
            }
            try database.execute("DROP INDEX IF EXISTS messages_dedup")
            return true
        }
        guard started else { return }
        var cursor: Int64 = 0
        while true {
            let done = try database.write { () throws(SQLiteError) -> Bool in
                guard let upper = try database.cached("""
                    SELECT max(id) FROM (SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT \(batchSize))
                    """).scalarInt([.integer(cursor)]) else { return true }
                try database.cached("""
                    UPDATE messages SET dedup_key = 'o'
                    WHERE id > ?1 AND id <= ?2 AND substr(dedup_key, 1, 2) = 'o|' AND origin_id IS NOT NULL
                        AND roost_dedup_key('o', conversation, direction, type, from_jid, origin_id) = dedup_key
                    """).run([.integer(cursor), .integer(upper)])
                cursor = upper
                return false
            }
            if done { break }
        }
    }
}
