/// Schema version 12: stored stanzas compressed (issue 15, archive size).
///
/// `messages.raw` and `message_revisions.raw` hold each stanza as a zstd frame made with a built-in dictionary
/// (`StoredStanza`): ~0.40 of its bytes, and the raw stanza was over half of every row. The columns keep their
/// declared type (SQLite stores a BLOB in a TEXT column as it is); `roost_stanza(raw)` reads either form, so an
/// archive part-way through this migration is consistent and every reader sees the same text.
///
/// The migration compresses the rows in batches of `batchSize`, each its own transaction, walking the rowid
/// upwards (no batch rescans what an earlier one did; memory stays at one batch however large the archive). A
/// kill -9 in the middle leaves some rows compressed and the rest as text; the version is recorded only after
/// the last batch, so the next open starts the walk again and `typeof(raw) = 'text'` skips what is done.
/// The file does not shrink by itself (the rows shrink inside their pages, which new rows fill); `VACUUM` does it.
enum SchemaV12 {
    static let sql = ""
    static let batchSize = 2_000

    static func compressRows(_ database: Database) throws(SQLiteError) {
        for table in ["messages", "message_revisions"] {
            var cursor: Int64 = 0
            while true {
                let done = try database.write { () throws(SQLiteError) -> Bool in
                    guard let upper = try database.cached("""
                        SELECT max(id) FROM (SELECT id FROM \(table) WHERE id > ? ORDER BY id LIMIT \(batchSize))
                        """).scalarInt([.integer(cursor)]) else { return true }
                    try database.cached("""
                        UPDATE \(table) SET raw = roost_stanza_pack(raw) WHERE id > ?1 AND id <= ?2 AND typeof(raw) = 'text'
                        """).run([.integer(cursor), .integer(upper)])
                    cursor = upper
                    return false
                }
                if done { break }
            }
        }
    }
}
