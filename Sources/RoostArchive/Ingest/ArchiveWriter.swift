import RoostCore
import Foundation
import Synchronization

/// Owns the archive's single writer connection (WAL, `synchronous=FULL` by default so that a committed batch
/// is on disk before the caller acknowledges its stanzas). Calls are serialised by a lock; `commit` is
/// synchronous and blocks for the fsync, so call it from a dedicated thread or executor, not the
/// cooperative pool's hot path.
public final class ArchiveWriter: Sendable {
    /// How hard a commit waits for the disk.
    public enum Durability: Sendable {
        /// `synchronous=FULL`: a returned commit survives power loss. For the live agent.
        case full
        /// `synchronous=NORMAL`: survives a crash of roost, not of the machine.
        case normal
        /// `synchronous=OFF`: bulk imports and benchmarks only.
        case off
    }

    /// Internal so the writer's extensions in other files (attachments) use the same connection and lock.
    let ingestor: Mutex<Ingestor>
    public let path: String

    /// Opens (creating with mode 0600, folders 0700) and migrates the archive at `path`.
    public init(path: String, durability: Durability = .full) throws(ArchiveError) {
        let synchronous: Database.Synchronous = switch durability {
        case .full: .full
        case .normal: .normal
        case .off: .off
        }
        let database: Database
        do throws(SQLiteError) {
            database = try Database(path: path, mode: .readWrite, synchronous: synchronous)
        } catch {
            throw .sqlite(error)
        }
        try Migrator.migrate(database, now: Timestamp.now())
        do throws(SQLiteError) {
            // An import killed during its bulk load left these missing; nothing writes before they are back.
            try DeferredIndexes.restore(database)
        } catch {
            throw .sqlite(error)
        }
        BulkFullTextSettings.restore(database)
        self.path = path
        self.ingestor = Mutex(Ingestor(database: database))
    }

    /// Stores a batch in ONE transaction and returns one outcome per event, in order. Duplicates are reported
    /// as `.duplicate`, never as errors. On error nothing of the batch is stored (the caller must not ack).
    public func commit(_ batch: [ArchiveEvent]) throws(ArchiveError) -> [InsertOutcome] {
        try commitReportingDownloads(batch).outcomes
    }

    /// What one commit stored: an outcome per event, and the attachment rows it added that wait for a download.
    public struct Committed: Sendable {
        public var outcomes: [InsertOutcome]
        /// The new rows waiting for a download, each with the index of the event that added it.
        public var newDownloads: [(event: Int, attachment: Int64)]

        public init(outcomes: [InsertOutcome] = [], newDownloads: [(event: Int, attachment: Int64)] = []) {
            self.outcomes = outcomes
            self.newDownloads = newDownloads
        }
    }

    /// `commit`, also saying which attachment rows the batch added that wait for a download: whoever submitted
    /// the event hands them to the download worker once the commit is known, so files are fetched only once their
    /// message is on disk, and never on the committing thread.
    public func commitReportingDownloads(_ batch: [ArchiveEvent]) throws(ArchiveError) -> Committed {
        if let problem = batch.lazy.compactMap(Self.problem(with:)).first {
            throw .invalidRecord(problem)
        }
        return try ingestor.withLock { ingestor throws(ArchiveError) -> Committed in
            do throws(SQLiteError) {
                let committed = try ingestor.database.write { () throws(SQLiteError) -> Committed in
                    // Text changes go to the index with the batch's new rows at its end (`SchemaV14`).
                    ingestor.database.defersFullTextUpdates = true
                    defer { ingestor.database.defersFullTextUpdates = false }
                    if ingestor.bulkKeys != nil, try Self.dataVersion(ingestor.database) != ingestor.bulkDataVersion {
                        // Another writer (an agent started meanwhile) committed: its rows are not in the bulk keys.
                        try DeferredIndexes.create(ingestor.database)
                        ingestor.bulkKeys = nil
                    }
                    var committed = Committed()
                    committed.outcomes.reserveCapacity(batch.count)
                    for (index, event) in batch.enumerated() {
                        committed.outcomes.append(try ingestor.apply(event))
                        for id in ingestor.newPendingAttachments { committed.newDownloads.append((index, id)) }
                        ingestor.newPendingAttachments.removeAll(keepingCapacity: true)
                    }
                    try ingestor.flushIndex()
                    return committed
                }
                Self.boundWriteAheadLog(ingestor.database, limit: ingestor.bulkLoading ? Self.bulkWALLimit : Self.walLimit)
                return committed
            } catch {
                ingestor.discardCaches()
                // The bulk keys may name rows the rollback removed: back to the indexes.
                Self.leaveBulkLoad(ingestor)
                throw .sqlite(error)
            }
        }
    }

    /// The write-ahead log grows past SQLite's automatic checkpoints while readers keep snapshots open (a busy
    /// `roost serve`, a script polling the archive): past `walLimit` the writer waits briefly for them and
    /// restarts the log, so the disk does not fill with it. A failure here is harmless (the next commit
    /// tries again).
    static let walLimit: Int64 = 32 << 20

    /// During a bulk load a batch's pages fill the log far past `walLimit` (1.1 GB for 20,000 messages into a 10M
    /// archive), and truncating it after every commit made the next batch extend the file again block by block
    /// (ext4 allocation, the page cache of the old log dropped): the log is left at its size between batches —
    /// SQLite's own checkpoint after each commit lets the next batch write it from the start — and truncated by
    /// `endBulkLoad`. The bound still holds against a reader pinning the log.
    static let bulkWALLimit: Int64 = 2 << 30

    static func boundWriteAheadLog(_ database: Database, limit: Int64 = walLimit) {
        var info = stat()
        guard stat(database.path + "-wal", &info) == 0, Int64(info.st_size) > limit else { return }
        try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// For the live agent's small group commits (not for bulk loads):
    /// - statement journals in memory. Each message insert fires triggers (full-text index, counters), so
    ///   SQLite keeps a statement journal of the pages it changes; on disk (the default `temp_store`) one past
    ///   64 KiB spills to a temporary file — with thirteen indexes on `messages` nearly every insert did:
    ///   140,000 `pwrite`s (285 MB) for 6,000 messages, nearly five times what the write-ahead log took.
    ///   In memory a journal holds the pages one statement changes (a few dozen). A bulk load's `optimize`
    ///   rewrites the whole index in one statement, so imports keep the default.
    /// - a 4 MiB page cache instead of 16: a group commit of live traffic touches a few dozen pages, the
    ///   B-trees' upper levels stay cached, and a leaf missed is read from the kernel's page cache. The
    ///   16 MiB filled during a flood and stayed (after 20,000 messages the agent held 67 MB; now 53).
    public func prepareForLiveIngest() {
        ingestor.withLock { ingestor in
            try? ingestor.database.execute("PRAGMA temp_store = MEMORY")
            try? ingestor.database.execute("PRAGMA cache_size = -\(Self.liveCacheKiB)")
        }
    }

    static let liveCacheKiB = 4 * 1024

    /// The busy timeout every connection starts with (`Database`).
    public static let defaultLockTimeout: Duration = .milliseconds(Database.defaultBusyTimeoutMs)

    /// How long each statement waits for another process's write lock before it fails (SQLite's busy timeout,
    /// `defaultLockTimeout` unless set). Bulk writers wait longer: see `BatchCommitter.lockTimeout`.
    public func setLockTimeout(_ timeout: Duration) {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        ingestor.withLock { $0.database.setBusyTimeout(milliseconds: Int32(clamping: milliseconds)) }
    }

    /// Gives back the page cache's pages (`PRAGMA shrink_memory`): the live writer calls it when its queue
    /// drains, so an agent that took a burst returns to its idle size (the next batch re-reads the few pages it
    /// needs from the OS's cache).
    public func releaseMemory() {
        ingestor.withLock { ingestor in
            try? ingestor.database.execute("PRAGMA shrink_memory")
        }
    }

    /// Starts a new pass of an import (see `CrossSourceMatch`).
    func beginImportPass() {
        ingestor.withLock { $0.beginImportPass() }
    }

    /// The stored resume state of an account, or nil if none was saved yet.
    public func syncState(account: String) throws(ArchiveError) -> SyncState? {
        try ingestor.withLock { ingestor throws(ArchiveError) -> SyncState? in
            do throws(SQLiteError) { return try ingestor.syncState(account: account) } catch { throw .sqlite(error) }
        }
    }

    /// Merges the write-ahead log into the database file (e.g. at clean shutdown).
    public func checkpoint() throws(ArchiveError) {
        try ingestor.withLock { ingestor throws(ArchiveError) in
            do throws(SQLiteError) { try ingestor.database.execute("PRAGMA wal_checkpoint(TRUNCATE)") } catch { throw .sqlite(error) }
        }
    }

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
        ingestor.withLock { ingestor in
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
        ingestor.withLock { $0.bulkKeys != nil }
    }

    /// Changes when another connection commits (never for this one's own commits).
    private static func dataVersion(_ database: Database) throws(SQLiteError) -> Int64 {
        try database.cached("PRAGMA data_version").scalarInt() ?? 0
    }

    /// Builds the deferred indexes and forgets the bulk keys. A failure leaves the indexes missing; the next
    /// `ArchiveWriter` to open the archive builds them.
    private static func leaveBulkLoad(_ ingestor: Ingestor) {
        guard ingestor.bulkKeys != nil else { return }
        ingestor.bulkKeys = nil
        try? ingestor.database.execute("PRAGMA temp_store = DEFAULT")
        try? DeferredIndexes.restore(ingestor.database)
    }

    deinit {
        ingestor.withLock { ingestor in
            Self.leaveBulkLoad(ingestor)
            if ingestor.bulkLoading { try? BulkFullTextSettings.set(ingestor.database, BulkFullTextSettings.live) }
        }
    }

    static let bulkCacheKiB = 256 * 1024

    /// Ends a bulk load (or any import): the write-ahead log is merged into the database and truncated, so
    /// later commands do not rebuild its index on every open (a search 44 ms instead of 27 ms after a 58 MB
    /// log was left behind). Harmless when readers hold the log: what they pin is merged later.
    public func endBulkLoad() throws(ArchiveError) {
        try ingestor.withLock { ingestor throws(ArchiveError) in
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

    /// Merges the full-text index segments; worth running after a bulk import.
    public func optimizeSearchIndex() throws(ArchiveError) {
        try ingestor.withLock { ingestor throws(ArchiveError) in
            do throws(SQLiteError) { try ingestor.database.execute("INSERT INTO message_fts(message_fts) VALUES('optimize')") } catch { throw .sqlite(error) }
        }
    }

    private static func problem(with event: ArchiveEvent) -> String? {
        let account: String
        switch event {
        case .message(let record):
            if record.conversation.isEmpty { return "message without a conversation JID" }
            account = record.account
        case .chatState(let record): account = record.account
        case .presence(let record): account = record.account
        case .subscription(let record): account = record.account
        case .rosterItem(let record): account = record.account
        case .rosterRemoval(let jid, _, _): account = jid
        case .vCard(let record): account = record.account
        case .syncState(let record): account = record.account
        case .delivery(let jid, _, _): account = jid
        case .outbox(let jid, _, _, _): account = jid
        case .messageDecrypted: return nil
        case .room(let update): account = update.account
        case .roomPresence(let record): account = record.account
        case .invitation(let record): account = record.account
        case .invitationAnswered(let jid, _, _, _): account = jid
        case .annotation(let annotation):
            if annotation.conversation.isEmpty || annotation.target.isEmpty { return "annotation without a conversation or target" }
            account = annotation.account
        case .conversationRead(let jid, _, _, _): account = jid
        }
        return account.isEmpty ? "event without an account JID" : nil
    }
}
