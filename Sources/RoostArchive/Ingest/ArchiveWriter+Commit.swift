import RoostCore
import Foundation

/// What the writer thread does with its connection: open and migrate it, commit a batch in one transaction,
/// keep the write-ahead log bounded, tune it for live ingest. Called on `roost.archive` only.
extension ArchiveWriter {
    /// What one commit stored: an outcome per event, and the attachment rows it added that wait for a download.
    struct Committed: Sendable {
        var outcomes: [InsertOutcome] = []
        /// The new rows waiting for a download, each with the index of the event that added it.
        var newDownloads: [(event: Int, attachment: Int64)] = []
    }

    /// Opens and migrates the archive; on the writer thread, whose connection it is from then on.
    static func open(path: String, durability: Durability) throws(ArchiveError) -> Ingestor {
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
        let ingestor = Ingestor(database: database)
        if durability == .full { prepareForLiveIngest(ingestor) }
        return ingestor
    }

    /// Stores a batch in one transaction (`BEGIN IMMEDIATE` … `COMMIT`), returning an outcome per event and the
    /// attachment rows it added that wait for a download: whoever submitted the event hands them to the download
    /// worker once the commit is known, so files are fetched only once their message is on disk, and never on the
    /// writer thread.
    static func commit(_ batch: [ArchiveEvent], on ingestor: Ingestor) throws(ArchiveError) -> Committed {
        if let problem = batch.lazy.compactMap(Self.problem(with:)).first {
            throw .invalidRecord(problem)
        }
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

    /// For the live agent's small group commits (`Durability.full`; not for bulk loads):
    /// - statement journals in memory. Each message insert fires triggers (full-text index, counters), so
    ///   SQLite keeps a statement journal of the pages it changes; on disk (the default `temp_store`) one past
    ///   64 KiB spills to a temporary file — with thirteen indexes on `messages` nearly every insert did:
    ///   140,000 `pwrite`s (285 MB) for 6,000 messages, nearly five times what the write-ahead log took.
    ///   In memory a journal holds the pages one statement changes (a few dozen). A bulk load's `optimize`
    ///   rewrites the whole index in one statement, so imports keep the default.
    /// - a 4 MiB page cache instead of 16: a group commit of live traffic touches a few dozen pages, the
    ///   B-trees' upper levels stay cached, and a leaf missed is read from the kernel's page cache. The
    ///   16 MiB filled during a flood and stayed (after 20,000 messages the agent held 67 MB; now 53).
    static func prepareForLiveIngest(_ ingestor: Ingestor) {
        try? ingestor.database.execute("PRAGMA temp_store = MEMORY")
        try? ingestor.database.execute("PRAGMA cache_size = -\(Self.liveCacheKiB)")
    }

    static let liveCacheKiB = 4 * 1024

    /// Changes when another connection commits (never for this one's own commits).
    static func dataVersion(_ database: Database) throws(SQLiteError) -> Int64 {
        try database.cached("PRAGMA data_version").scalarInt() ?? 0
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
