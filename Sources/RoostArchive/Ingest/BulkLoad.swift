/// The bulk path of an import into an empty or small archive (issue 15): the five indexes on random keys (stanza-ids,
/// dedup keys, origin-ids, message ids) are dropped for the load and built at its end in one sorted pass each,
/// so a batch no longer dirties a leaf page of each of them per message (at 1M messages that was 12–17× the
/// archive's size written, and the rate fell as the archive grew). The lookups those indexes served — dedup,
/// correction and annotation targets — are answered meanwhile by `BulkKeys`, a map of the keys of every row:
/// those the archive held when the load began (read in the transaction that drops the indexes) and those the
/// load wrote. The conversation and sender indexes go with them (they serve readers only; the load's own lookups by
/// conversation all name the account and use `messages_account_conversation`, which stays): not random keys, but
/// a few hundred insertion points, and each batch rewrote the last leaf of every one of them.
///
/// Safety:
/// - The indexes are dropped in the same transaction that reads the stored rows' keys, and only when no agent
///   writes it (`BatchCommitter` without a transaction budget).
/// - A crash or kill at any point leaves them missing, never half built (`CREATE INDEX` is one transaction):
///   every `ArchiveWriter` — the agent's, the next import's — builds missing ones when it opens the archive,
///   before it writes anything (`DeferredIndexes.restore`). The trusted stanza-id index is unique; `BulkKeys`
///   enforces that uniqueness during the load by the same rule the index did (a row gets a trusted id only
///   after the lookup for it missed), so building it cannot fail on rows the load let in.
/// - Another writer committing during the load (an agent started after the import) is seen through
///   `PRAGMA data_version` at the start of the next batch: the load builds the indexes in that transaction and
///   goes on as an ordinary import.
enum DeferredIndexes {
    /// The random-key indexes of `messages` as of `SchemaV13` (`messages_dedup` is partial since v13), and the two
    /// reader-only indexes on the conversation and the sender. A migration that changes one of them must change it
    /// here too: `DeferredIndexesTests` compares these with what the migrations create.
    static let definitions: [(name: String, sql: String)] = [
        ("messages_trusted_stanza_id",
         "CREATE UNIQUE INDEX IF NOT EXISTS messages_trusted_stanza_id ON messages(account_id, stanza_id_by, stanza_id) WHERE stanza_id_trusted = 1"),
        ("messages_dedup", SchemaV13.dedupIndexSQL),
        ("messages_account_message_id",
         "CREATE INDEX IF NOT EXISTS messages_account_message_id ON messages(account_id, conversation, message_id) WHERE message_id IS NOT NULL"),
        ("messages_origin", "CREATE INDEX IF NOT EXISTS messages_origin ON messages(account_id, origin_id) WHERE origin_id IS NOT NULL"),
        ("messages_stanza_id", "CREATE INDEX IF NOT EXISTS messages_stanza_id ON messages(conversation, stanza_id) WHERE stanza_id IS NOT NULL"),
        // Not random keys, but a few hundred insertion points each (one per conversation, one per sender): every batch
        // split and rewrote the last leaf of each, ~10 times the indexes' final size written at 1M
        // (docs/performance-history.md, "Where the bytes of a 1M import go"). Only readers use them; every lookup of
        // the load names the account too and goes through `messages_account_conversation` (same columns behind
        // `account_id`), which stays.
        ("messages_conversation", "CREATE INDEX IF NOT EXISTS messages_conversation ON messages(conversation)"),
        ("messages_from", "CREATE INDEX IF NOT EXISTS messages_from ON messages(from_bare)"),
    ]

    /// The names of those the archive lacks (none in an archive without a `messages` table yet).
    static func missing(_ database: Database) throws(SQLiteError) -> [String] {
        guard try database.cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages'").scalarInt() != nil else { return [] }
        let statement = try database.cached("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?")
        var names: [String] = []
        for definition in definitions where try statement.scalarInt([.text(definition.name)]) == 0 {
            names.append(definition.name)
        }
        return names
    }

    /// Builds the missing ones (inside the caller's transaction when there is one).
    static func create(_ database: Database) throws(SQLiteError) {
        for definition in definitions { try database.execute(definition.sql) }
    }

    /// At open: builds what an interrupted bulk load left missing, in one transaction.
    static func restore(_ database: Database) throws(SQLiteError) {
        guard try !missing(database).isEmpty else { return }
        try database.write { () throws(SQLiteError) in try create(database) }
    }

    static func drop(_ database: Database) throws(SQLiteError) {
        for definition in definitions { try database.execute("DROP INDEX IF EXISTS \(definition.name)") }
    }
}

/// FTS5's settings for a bulk load. Each segment's terms are rewritten by every merge level above it, and at 10M
/// FTS5's merges were 40 % of the pages each batch wrote (docs/performance-history.md, "Bytes written at 10M"):
/// - `hashsize`, how many bytes of terms FTS5 collects before it writes them as a new segment: 64 MiB instead of
///   1 MiB, so a 50,000-message batch is one segment instead of five or six (it holds ~10 MB in memory meanwhile);
/// - `automerge`, how many segments of a level FTS5 merges into one of the next: 16 instead of 4, so every term is
///   rewritten by half as many levels. A search then reads up to 15 segments per level instead of 3 (measured in
///   the same section).
/// Both are stored in the archive (`message_fts_config`): a bulk load sets them (`bulk`) and puts FTS5's defaults
/// back at its end (`live`); an import killed meanwhile leaves them, and the next writer to open the archive puts
/// the defaults back (`restore`, which never waits for the lock).
enum BulkFullTextSettings {
    static let bulk = [("hashsize", 64 << 20), ("automerge", 16)]
    /// FTS5's own defaults.
    static let live = [("hashsize", 1 << 20), ("automerge", 4)]

    static func set(_ database: Database, _ settings: [(String, Int)]) throws(SQLiteError) {
        for (name, value) in settings {
            try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('\(name)', \(value))")
        }
    }

    /// At open: FTS5's defaults again where a bulk load left its own — killed, or still running in another process
    /// (which then goes on with the defaults: more merging, nothing else). It never waits for the write lock and never
    /// fails the open: while a load holds the lock, its settings stay.
    static func restore(_ database: Database) {
        guard let differs = try? database.cached("SELECT 1 FROM message_fts_config WHERE k = ? AND v <> ?"),
              live.contains(where: { (try? differs.scalarInt([.text($0.0), .integer(Int64($0.1))])) != nil }) else { return }
        database.setBusyTimeout(milliseconds: 0)
        defer { database.setBusyTimeout(milliseconds: Database.defaultBusyTimeoutMs) }
        try? set(database, live)
    }
}

/// The keys of the rows a bulk load wrote, standing in for the dropped indexes (see `DeferredIndexes`).
///
/// Each key maps by its hash to the smallest or largest row id that has it — the row the indexed query would
/// have returned. A hit is checked against the row itself (one primary-key read, with SQLite's own collations),
/// so a hash collision or a row that lost the key only costs a scan (`nil` from `lookup` means "ask SQLite");
/// a miss is exact, because every write of these columns during the load records its key here.
/// Memory: about 100–200 bytes per message (a hash and an id per key, dictionaries grown by doubling).
final class BulkKeys {
    enum Kind: Int, CaseIterable {
        /// (account, stanza_id_by, stanza_id) of trusted rows; the smallest id (the index was unique).
        case trusted
        /// (account, dedup_key), the smallest id.
        case dedup
        /// (account, dedup_key) of rows stored without a trusted id, the smallest id.
        case untrusted
        /// (account, conversation, message_id), the largest id.
        case messageID
        /// (account, conversation, origin_id), the largest id.
        case originID
        /// (account, conversation, stanza_id), the largest id.
        case stanzaID
        /// (account, conversation, stanza_id) where the id was assigned by the conversation (a room's), the largest.
        case roomStanzaID

        var keepsLargest: Bool { self == .messageID || self == .originID || self == .stanzaID || self == .roomStanzaID }

        /// Whether row `?1` has the key (`?2` account, `?3`, `?4` the key's texts), with the column collations.
        var checkSQL: String {
            switch self {
            case .trusted:
                "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND stanza_id_by = ?3 AND stanza_id = ?4 AND stanza_id_trusted = 1"
            case .dedup: "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND \(DedupKey.fullKeySQL()) = ?3"
            case .untrusted:
                "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND \(DedupKey.fullKeySQL()) = ?3 AND stanza_id_trusted = 0"
            case .messageID: "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND conversation = ?3 AND message_id = ?4"
            case .originID: "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND conversation = ?3 AND origin_id = ?4"
            case .stanzaID: "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND conversation = ?3 AND stanza_id = ?4"
            case .roomStanzaID:
                "SELECT 1 FROM messages WHERE id = ?1 AND account_id = ?2 AND conversation = ?3 AND stanza_id = ?4 AND stanza_id_by = ?3 COLLATE NOCASE"
            }
        }
    }

    enum Answer: Equatable {
        /// No row has the key.
        case none
        /// The row the indexed query would return.
        case row(Int64)
        /// Not known here (a collision): ask SQLite.
        case unknown
    }

    private var maps: [[Int: Int64]] = Array(repeating: [:], count: Kind.allCases.count)
    private let database: Database

    init(database: Database) {
        self.database = database
    }

    /// The conversation (and a room's stanza-id assigner) compare without ASCII case in SQLite.
    private static func hash(_ kind: Kind, _ account: Int64, _ first: String, _ second: String?) -> Int {
        var hasher = Hasher()
        hasher.combine(kind.rawValue)
        hasher.combine(account)
        switch kind {
        case .messageID, .originID, .stanzaID, .roomStanzaID: hasher.combine(first.lowercased())
        default: hasher.combine(first)
        }
        hasher.combine(second)
        return hasher.finalize()
    }

    func record(_ kind: Kind, account: Int64, _ first: String, _ second: String? = nil, id: Int64) {
        let key = Self.hash(kind, account, first, second)
        if let stored = maps[kind.rawValue][key], kind.keepsLargest ? stored >= id : stored <= id { return }
        maps[kind.rawValue][key] = id
    }

    func lookup(_ kind: Kind, account: Int64, _ first: String, _ second: String? = nil) throws(SQLiteError) -> Answer {
        guard let id = maps[kind.rawValue][Self.hash(kind, account, first, second)] else { return .none }
        var values: [SQLValue] = [.integer(id), .integer(account), .text(first)]
        if let second { values.append(.text(second)) }
        let found = try database.cached(kind.checkSQL).scalarInt(values)
        return found == nil ? .unknown : .row(id)
    }

    /// Records the keys of every row already stored, for a bulk load into a non-empty archive (one pass over the
    /// table in id order, before the indexes are dropped). The same keys `recordRow` and `recordTrusted` would
    /// have recorded when the rows were written, from the columns they wrote (the full dedup key whichever form
    /// the row stores: `DedupKey.fullKeySQL`).
    func recordStoredRows() throws(SQLiteError) {
        try database.cached("""
            SELECT id, account_id, conversation, \(DedupKey.fullKeySQL()), stanza_id, stanza_id_by, stanza_id_trusted, message_id,
                origin_id
            FROM messages
            """).forEachRow { row in
            let id = row.int(0), account = row.int(1), conversation = row.text(2)
            let stanzaId = row.optionalText(4)
            record(.dedup, account: account, row.text(3), id: id)
            if row.bool(6), let stanzaId, let by = row.optionalText(5) {
                recordTrusted(id: id, account: account, by: by, stanzaId: stanzaId, conversation: conversation)
            } else {
                record(.untrusted, account: account, row.text(3), id: id)
                if let stanzaId { record(.stanzaID, account: account, conversation, stanzaId, id: id) }
            }
            if let messageId = row.optionalText(7) { record(.messageID, account: account, conversation, messageId, id: id) }
            if let originId = row.optionalText(8) { record(.originID, account: account, conversation, originId, id: id) }
            return true
        }
    }

    /// Records every key of a row just inserted.
    func recordRow(id: Int64, account: Int64, message: MessageRecord, dedupKey: String, trusted: Bool) {
        record(.dedup, account: account, dedupKey, id: id)
        if trusted, let stanzaId = message.stanzaId {
            recordTrusted(id: id, account: account, by: message.stanzaIdBy ?? message.account, stanzaId: stanzaId,
                          conversation: message.conversation)
        } else {
            record(.untrusted, account: account, dedupKey, id: id)
            if let stanzaId = message.stanzaId { record(.stanzaID, account: account, message.conversation, stanzaId, id: id) }
        }
        if let messageId = message.messageId { record(.messageID, account: account, message.conversation, messageId, id: id) }
        if let originId = message.originId { record(.originID, account: account, message.conversation, originId, id: id) }
    }

    /// Records a trusted stanza-id given to row `id` (inserted with it, or adopted later).
    func recordTrusted(id: Int64, account: Int64, by: String, stanzaId: String, conversation: String) {
        record(.trusted, account: account, by, stanzaId, id: id)
        record(.stanzaID, account: account, conversation, stanzaId, id: id)
        if by.lowercased() == conversation.lowercased() { record(.roomStanzaID, account: account, conversation, stanzaId, id: id) }
    }
}

extension ArchiveWriter {
    /// Bulk loads (an import while no agent writes): a page cache large enough for the index pages a batch
    /// dirties, so they are written once per commit instead of spilling mid-transaction; `endBulkLoad` goes
    /// back to the normal cache and checkpoints. The random-key indexes are dropped until `endBulkLoad` (see
    /// `DeferredIndexes`) into an empty archive, and into one that holds at most `deferralRatio` times the
    /// `expectedMessages` the load will write: then the stored rows' keys are read into the `BulkKeys` first
    /// (one pass over the table), and the indexes are rebuilt at the end over the whole table.
    ///
    /// Statement journals stay in memory during the load (as for live ingest, `prepareForLiveIngest`): into a 10M
    /// archive each message's insert, with its triggers, changed enough pages to spill its journal to a temporary
    /// file — 5.2 GB written to `/var/tmp` for 100,000 messages, more than the log and the database took together.
    /// So do the sorts of the deferred indexes' build at the end (`endBulkLoad`); a build after a kill, when the next
    /// writer opens the archive, and the full-text `optimize` use the default (temporary files).
    ///
    /// `secure_delete` is `FAST` during the load (Debian builds SQLite with it on): a page freed — the indexes the
    /// load drops, the full-text segments a merge replaces — goes to the free list without being overwritten with
    /// zeros and written (the random-key indexes of a 10M archive are ~3 GB of pages). What such pages held is
    /// mostly ids and index terms of rows still stored; a merged full-text segment may also hold terms of a message
    /// retracted earlier, which then stay in free pages until they are reused (or a VACUUM) — Roost promises no
    /// overwriting of deleted text on disk. `endBulkLoad` restores the setting.
    public func beginBulkLoad(expectedMessages: Int = 0) {
        _ = try? perform { ingestor in
            if !ingestor.bulkLoading {
                ingestor.secureDelete = (try? ingestor.database.cached("PRAGMA secure_delete").scalarInt()) ?? 1
            }
            ingestor.bulkLoading = true
            try? BulkFullTextSettings.set(ingestor.database, BulkFullTextSettings.bulk)
            try? ingestor.database.execute("PRAGMA cache_size = -\(Self.bulkCacheKiB)")
            try? ingestor.database.execute("PRAGMA temp_store = MEMORY")
            try? ingestor.database.execute("PRAGMA secure_delete = FAST")
            let database = ingestor.database
            do throws(SQLiteError) {
                try database.write { () throws(SQLiteError) in
                    // The `roost stats` counters (exact in the same transaction): no scan of a large archive.
                    let stored = try database.cached("SELECT coalesce(sum(messages), 0) FROM conversation_counts").scalarInt() ?? 0
                    guard Self.defersIndexes(stored: stored, expected: expectedMessages) else { return }
                    let keys = BulkKeys(database: database)
                    // By the table itself, not the counters: a miss in the keys must be exact.
                    if try database.cached("SELECT 1 FROM messages LIMIT 1").scalarInt() != nil { try keys.recordStoredRows() }
                    try DeferredIndexes.drop(database)
                    ingestor.bulkKeys = keys
                    ingestor.bulkDataVersion = try Self.dataVersion(database)
                }
            } catch {
                // Nothing was dropped (the transaction rolled back): an ordinary load with the indexes.
                ingestor.bulkKeys = nil
            }
        }
    }

    /// Whether a bulk load of `expected` messages into an archive of `stored` drops the random-key indexes: into an
    /// empty archive always; else while the archive holds at most `deferralRatio(stored:)` stored messages per
    /// message to import, and the keys of all of them fit `maxKeyedRows` and half the memory the system has
    /// available (`availableMemory`, bytes; nil when unknown): on a small machine the indexes stay rather than the
    /// import pushing the desktop into swap.
    static func defersIndexes(stored: Int64, expected: Int, availableMemory: Int64? = availableMemory()) -> Bool {
        if stored <= 0 { return true }
        let expected = Int64(max(expected, 0))
        let rows = stored + expected
        if let availableMemory, rows * bytesPerKeyedRow > availableMemory / 2 { return false }
        return rows <= maxKeyedRows && stored <= deferralRatio(stored: stored) * expected
    }

    /// What `BulkKeys` holds per row, measured with 10M stored rows (docs/performance-history.md, "Import into a
    /// large archive").
    static let bytesPerKeyedRow: Int64 = 130

    /// `MemAvailable` of /proc/meminfo in bytes (the kernel's estimate of what can be allocated without swapping),
    /// nil where there is none.
    static func availableMemory() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
              let kilobytes = Int64(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes * 1024
    }

    /// How many stored messages per message to import a bulk load still drops the random-key indexes for.
    /// Deferring costs ~13 µs of CPU per stored row at 1M, ~9 µs at 10M (reading the stored keys, five sorted
    /// passes; measured before the conversation and sender indexes were deferred too: two more passes, ~1.5 µs a row
    /// each); keeping them costs more per imported message the larger the archive: ~100 µs into a 100k archive,
    /// ~125–280 µs into a 10M one (inserts split full leaves of the five indexes, every page written to the log
    /// and again at the checkpoint: ~48 kB of write calls a message against ~15 kB deferred). The CPU breaks even
    /// at ~6 stored rows per imported one at 100k, ~9 at 10M; 12 there is a little over it (1M into 10M: +4 % CPU)
    /// for a third of the bytes written and −29 % wall time (docs/performance-history.md, "Import into a large
    /// archive").
    static func deferralRatio(stored: Int64) -> Int64 {
        switch stored {
        case ..<1_000_000: 4
        case ..<5_000_000: 8
        default: 12
        }
    }

    /// The most rows whose keys a bulk load into a non-empty archive holds in memory (`bytesPerKeyedRow` each, so
    /// ~2 GB here); past it the indexes stay, whatever the ratio and the memory available.
    static let maxKeyedRows: Int64 = 16_000_000

    /// Whether a bulk load runs without the random-key indexes.
    public var isDeferringIndexes: Bool {
        (try? perform { $0.bulkKeys != nil }) ?? false
    }

    /// Builds the deferred indexes and forgets the bulk keys. A failure leaves the indexes missing; the next
    /// `ArchiveWriter` to open the archive builds them. On the writer thread (also when it ends).
    static func leaveBulkLoad(_ ingestor: Ingestor) {
        guard ingestor.bulkKeys != nil else { return }
        ingestor.bulkKeys = nil
        try? ingestor.database.execute("PRAGMA temp_store = DEFAULT")
        try? DeferredIndexes.restore(ingestor.database)
    }

    static let bulkCacheKiB = 256 * 1024

    /// Ends a bulk load (or any import): the write-ahead log is merged into the database and truncated, so
    /// later commands do not rebuild its index on every open (a search 44 ms instead of 27 ms after a 58 MB
    /// log was left behind). Harmless when readers hold the log: what they pin is merged later.
    public func endBulkLoad() throws(ArchiveError) {
        try perform { ingestor throws(ArchiveError) in
            if ingestor.bulkLoading {
                // Deleted content overwritten again as the library was built to (Debian's: `secure_delete` on).
                try? ingestor.database.execute("PRAGMA secure_delete = \(ingestor.secureDelete)")
                try? BulkFullTextSettings.set(ingestor.database, BulkFullTextSettings.live)
                ingestor.bulkLoading = false
            }
            if ingestor.bulkKeys != nil {
                ingestor.bulkKeys = nil
                // One sorted pass per index, its pages written once and full. Each sort stays in memory (`temp_store`
                // as during the load): the bulk keys just freed took more per row than the largest index's sort needs,
                // and `defersIndexes` checked those against the memory available. With the default, the sorts of a 10M
                // archive went through temporary files.
                do throws(SQLiteError) { try DeferredIndexes.restore(ingestor.database) } catch { throw .sqlite(error) }
            }
            try? ingestor.database.execute("PRAGMA temp_store = DEFAULT")
            try? ingestor.database.execute("PRAGMA cache_size = -16384")
            try? ingestor.database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }
}
