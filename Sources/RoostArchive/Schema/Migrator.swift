/// Applies pending migrations, each in its own `BEGIN IMMEDIATE` transaction, and records them in
/// `schema_migrations` so that opening an archive twice (or by two processes) applies nothing twice.
enum Migrator {
    static let migrations: [Migration] = [
        Migration(version: 1, name: "initial schema", sql: SchemaV1.sql),
        Migration(version: 2, name: "delivery state of outgoing messages", sql: SchemaV2.sql),
        Migration(version: 3, name: "end-to-end encryption of messages", sql: SchemaV3.sql),
        Migration(version: 4, name: "index of imported messages", sql: SchemaV4.sql),
        Migration(version: 5, name: "attachment files", sql: SchemaV5.sql),
        Migration(version: 6, name: "group chats", sql: SchemaV6.sql),
        Migration(version: 7, name: "claimed times of messages", sql: SchemaV7.sql),
        Migration(version: 8, name: "reactions, replies, retractions, receipts and read state", sql: SchemaV8.sql),
        Migration(version: 9, name: "index of messages by account and conversation", sql: SchemaV9.sql),
        Migration(version: 10, name: "correction lookup index and stats counters", sql: SchemaV10.sql),
        Migration(version: 11, name: "redundant message id indexes dropped", sql: SchemaV11.sql),
        Migration(version: 12, name: "stored stanzas compressed", sql: SchemaV12.sql, batches: SchemaV12.compressRows),
        Migration(version: 13, name: "origin-id dedup keys not stored twice", sql: SchemaV13.sql, batches: SchemaV13.markOriginKeys),
        Migration(version: 14, name: "full-text updates indexed at the end of each batch", sql: SchemaV14.sql),
        Migration(version: 15, name: "the name a room gives itself", sql: SchemaV15.sql),
        Migration(version: 16, name: "outbox of messages sent while offline", sql: SchemaV16.sql),
        Migration(version: 17, name: "tombstones of forgotten messages", sql: SchemaV17.sql),
        Migration(version: 18, name: "change feed and export cursors", sql: SchemaV18.sql),
    ]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    static func migrate(_ database: Database, now: Int64) throws(ArchiveError) {
        do {
            try database.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    applied_at INTEGER NOT NULL
                )
                """)
        } catch {
            throw .sqlite(error)
        }
        for migration in migrations {
            do {
                // Checked first without the lock: opening an up-to-date archive takes no write lock at all, so a
                // writer opened while the agent floods the archive (an import, `files fetch`) does not queue for
                // the lock once per migration, each time at the risk of SQLite's busy timeout.
                if try isApplied(migration, database) { continue }
                if let batches = migration.batches {
                    try batches(database)
                }
                try database.write { () throws(SQLiteError) in
                    // Checked inside the write lock: another process may have applied it meanwhile.
                    guard try !isApplied(migration, database) else { return }
                    try database.execute(migration.sql)
                    try database.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                                     [.integer(Int64(migration.version)), .text(migration.name), .integer(now)])
                }
            } catch {
                throw .migrationFailed(version: migration.version, error)
            }
        }
        let version = (try? currentVersion(database)) ?? 0
        if version > latestVersion {
            throw .unsupportedSchemaVersion(found: version, supported: latestVersion)
        }
    }

    private static func isApplied(_ migration: Migration, _ database: Database) throws(SQLiteError) -> Bool {
        try database.cached("SELECT 1 FROM schema_migrations WHERE version = ?").scalarInt([.integer(Int64(migration.version))]) != nil
    }

    static func currentVersion(_ database: Database) throws(SQLiteError) -> Int {
        let exists = try database.cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").scalarInt()
        guard exists != nil else { return 0 }
        return Int(try database.cached("SELECT max(version) FROM schema_migrations").scalarInt() ?? 0)
    }
}
