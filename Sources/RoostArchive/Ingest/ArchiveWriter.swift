public import RoostCore
import Foundation
import Synchronization
internal import CSystem

/// The archive's one writer: it owns the read-write SQLite connection and the one thread that uses it
/// (`roost.archive`), and every write to the archive — the agent's, an action's, `roost read`, `import`, `verify
/// --repair`, `forget`, the web view's mark-read, the download threads' attachment rows — is a message to that
/// thread, answered once the thread has done it. Nothing else touches the connection.
///
/// The API, by who calls it:
/// - **Live ingest** (the agent's sessions): `submit(_:progress:to:context:)` queues events and returns; what became
///   of them arrives later as a message in the submitter's `CommitMailbox`, after the commit and in submission order.
///   `submit(_:progress:)` when nobody needs the outcome. `commit(_:progress:)` when the caller waits for it (actions,
///   catch-up pages); `flush()` waits until everything submitted before it is committed. All of these are group
///   committed: everything queued while a commit is in flight goes into the next one (one fsync per batch), with one
///   `sync_state` record per account carrying the stream-management `h` the batch reaches (ack after commit survives
///   a crash). A commit that fails for a reason that can pass (the archive locked by another process, a full disk,
///   an I/O error) is retried with backoff, keeping its events and everything after it queued, so nothing later is
///   committed or answered meanwhile; `health` says why, since when. A submission the database refuses for good (a
///   record breaking a rule) is isolated from the rest of its batch, logged, and answered `.refused`.
/// - **One-off and bulk writers** (`roost read`, mark-read, imports through `BatchCommitter`, repairs, synthetic
///   archives): `commitBlocking(_:)` commits events in a transaction of their own and blocks the calling thread for
///   the answer; a failure is thrown, never retried, for the caller to report. The bulk path's settings and index
///   deferral: `beginBulkLoad`, `endBulkLoad` (BulkLoad.swift).
/// - **Other changes**, each one transaction on the writer thread, blocking the caller: `update(_:)` (a download's
///   outcome, from the download threads), `forget(ids:)`, `requeueFile(sha256:)`, `checkpoint()`.
/// - `drainAndStop()` commits what is queued and ends the thread; releasing the writer does the same (and waits for
///   it), so a writer given up on an error path leaves no thread or bulk-load state behind.
///
/// Back-pressure: the queue is bounded (`capacity` events; any other message costs one). `submit` and `commit`
/// suspend while it is full, the blocking calls block, so a writer that falls behind or cannot write slows the
/// sessions, which stop reading their sockets: memory stays flat and the server keeps what is not acknowledged.
///
/// The thread commits and posts each outcome as a message (a mailbox's, or the answer a caller waits for). It runs
/// no submitter's code: what follows a commit (the SM ack, saving OMEMO ratchet state, notifications, room notes,
/// queuing downloads) is done by the submitter when the message arrives.
public final class ArchiveWriter: Sendable {
    /// How hard a commit waits for the disk.
    public enum Durability: Sendable {
        /// `synchronous=FULL`: a returned commit survives power loss. For the live agent, and every writer beside
        /// it; the connection is tuned for small group commits (`prepareForLiveIngest`).
        case full
        /// `synchronous=NORMAL`: survives a crash of roost, not of the machine. Imports.
        case normal
        /// `synchronous=OFF`: bulk imports and benchmarks only.
        case off
    }

    /// What became of a submission.
    public enum Outcome: Sendable {
        /// Committed: one outcome per event, and the attachment rows the events added that wait for a download.
        case stored([InsertOutcome], newDownloads: [Int64])
        /// Refused for good (never retried): nothing of it was stored, on purpose.
        case refused(ArchiveError)
        /// The writer stopped before it could be committed (shutdown while the archive could not be written).
        case abandoned
    }

    /// The `h` an account's SM session reaches once a submission is committed.
    public struct StreamProgress: Sendable {
        public var account: String
        public var streamID: String
        public var handledCount: UInt32

        public init(account: String, streamID: String, handledCount: UInt32) {
            self.account = account
            self.streamID = streamID
            self.handledCount = handledCount
        }
    }

    /// Whether the archive can be written.
    public enum Health: Sendable, Equatable {
        case ok
        /// Commits fail since `since` (UTC milliseconds); `cause` says why and what to do.
        case failing(since: Int64, cause: String)
    }

    /// New messages archived since the last call, and in how many conversations.
    public struct Activity: Sendable, Equatable {
        public var incoming = 0
        public var outgoing = 0
        public var conversations: Set<String> = []
    }

    /// A message to the writer thread.
    enum Job: Sendable {
        /// Events to group-commit; `reply` posts the outcome (a mailbox's message, a waiter's answer).
        case submission(Submission)
        /// One of the writer's own operations on the connection (this module's code only), answering its caller.
        case work(@Sendable (Ingestor) -> Void)
    }

    struct Submission: Sendable {
        var events: [ArchiveEvent]
        var progress: StreamProgress?
        var reply: (@Sendable (Outcome) -> Void)?
    }

    public let path: String
    let core: Core

    /// Opens (creating with mode 0600, folders 0700) and migrates the archive at `path` on a new writer thread, and
    /// returns once it is open.
    /// - Parameters:
    ///   - capacity: events queued at most before `submit` suspends.
    ///   - stopGrace: how long `drainAndStop` keeps retrying a failing commit before it gives up (what is left is
    ///     not acknowledged).
    ///   - healthChanged: called on the writer thread when commits start or stop failing.
    public init(path: String, durability: Durability = .full, log: Logger = Logger(level: .error),
                maxBatchEvents: Int = 5000, capacity: Int = 5000, stopGrace: Duration = .seconds(10),
                healthChanged: @escaping @Sendable (Health) -> Void = { _ in }) throws(ArchiveError) {
        self.path = path
        let core = Core(path: path, live: durability == .full, log: log, maxBatchEvents: maxBatchEvents, capacity: capacity,
                        stopGrace: stopGrace, healthChanged: healthChanged)
        self.core = core
        let opened = BoundedQueue<Result<Void, ArchiveError>>(capacity: 1)
        let thread = Thread {
            core.threadID.withLock { $0 = pthread_self() }
            defer { core.end.ended() }
            let ingestor: Ingestor
            do throws(ArchiveError) {
                ingestor = try Self.open(path: path, durability: durability)
            } catch {
                opened.put(.failure(error))
                return
            }
            opened.put(.success(()))
            core.run(ingestor)
        }
        thread.name = "roost.archive"
        core.end.started()
        thread.start()
        if case .item(.failure(let error)) = opened.take() { throw error }
    }

    deinit {
        core.queue.close()
        // Released on its own thread (the last reference held by a message it ran): it ends by itself.
        let own = core.threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !own { core.end.wait() }
    }

    // MARK: - Live ingest: group commit

    /// Queues events whose outcome nobody waits for; suspends while the queue is full.
    public func submit(_ events: [ArchiveEvent], progress: StreamProgress? = nil) async {
        await enqueue(Submission(events: events, progress: progress, reply: nil))
    }

    /// Queues events; what became of them arrives in `mailbox` as a message carrying `context`, after the commit
    /// and in submission order. Suspends while the queue is full.
    public func submit<Context>(_ events: [ArchiveEvent], progress: StreamProgress? = nil,
                                to mailbox: CommitMailbox<Context>, context: Context) async {
        await enqueue(Submission(events: events, progress: progress, reply: mailbox.poster(context)))
    }

    /// Commits `events` with the group commit and returns what became of them (for actions and catch-up, which wait).
    public func commit(_ events: [ArchiveEvent], progress: StreamProgress? = nil) async -> Outcome {
        let result = OneShot<Outcome>()
        await enqueue(Submission(events: events, progress: progress) { result.fulfil($0) })
        return await result.value
    }

    /// Waits until everything submitted before this call is committed.
    public func flush() async {
        _ = await commit([])
    }

    /// A submission after `drainAndStop` is abandoned.
    private func enqueue(_ submission: Submission) async {
        if !(await core.queue.put(.submission(submission), cost: max(1, submission.events.count))) {
            submission.reply?(.abandoned)
        }
    }

    /// Commits what is queued (retrying a failing commit for up to the stop grace), then stops the thread. Later
    /// submissions are abandoned, later blocking calls throw `.writerStopped`. Safe to call twice.
    /// - Parameter checkpoint: merge the write-ahead log into the database file before the thread ends (the agent's
    ///   clean shutdown); a failure is logged.
    public func drainAndStop(checkpoint: Bool = false) async {
        if checkpoint { core.counters.withLock { $0.checkpointAtStop = true } }
        core.queue.close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let stopped = core.counters.withLock { c -> Bool in
                if !c.stopped { c.stopWaiters.append(continuation) }
                return c.stopped
            }
            if stopped { continuation.resume() }
        }
    }

    /// What was archived since the last call (which starts counting afresh).
    public func takeActivity() -> Activity {
        core.counters.withLock { c in
            defer { c.activity = Activity() }
            return c.activity
        }
    }

    /// Batches and events committed by the group commit so far (for status and benchmarks).
    public var statistics: (batches: Int, events: Int) { core.counters.withLock { ($0.batches, $0.events) } }
    public var health: Health { core.counters.withLock { $0.health } }
    /// Events waiting to be committed.
    public var backlog: Int { core.queue.load }

    // MARK: - One-off and bulk writers

    /// Stores a batch in ONE transaction of its own and returns one outcome per event, in order, blocking the
    /// calling thread until the writer thread has committed it. Duplicates are reported as `.duplicate`, never as
    /// errors. On error nothing of the batch is stored, and the error is thrown (not retried).
    public func commitBlocking(_ batch: [ArchiveEvent]) throws(ArchiveError) -> [InsertOutcome] {
        try commitReportingDownloads(batch).outcomes
    }

    /// `commitBlocking`, also saying which attachment rows the batch added that wait for a download.
    func commitReportingDownloads(_ batch: [ArchiveEvent]) throws(ArchiveError) -> Committed {
        try perform { ingestor throws(ArchiveError) in try Self.commit(batch, on: ingestor) }
    }

    /// Runs `work` on the writer thread with its connection and returns its result, blocking the calling thread
    /// meanwhile (a dedicated thread, or a command's task that has nothing else to do). `work` is this module's
    /// code and must not capture the writer itself (its last release would then happen on its own thread).
    func perform<T: Sendable>(_ work: @escaping @Sendable (Ingestor) throws(ArchiveError) -> T) throws(ArchiveError) -> T {
        let answer = BoundedQueue<Result<T, ArchiveError>>(capacity: 1)
        let job = Job.work { ingestor in
            do throws(ArchiveError) { answer.put(.success(try work(ingestor))) } catch { answer.put(.failure(error)) }
        }
        guard core.queue.put(job), case .item(let result) = answer.take() else { throw .writerStopped }
        return try result.get()
    }

    // MARK: - On the writer thread

    /// What one commit stored: an outcome per event, and the attachment rows it added that wait for a download.
    struct Committed: Sendable {
        var outcomes: [InsertOutcome] = []
        /// The new rows waiting for a download, each with the index of the event that added it.
        var newDownloads: [(event: Int, attachment: Int64)] = []
    }

    /// Opens and migrates the archive; on the writer thread, whose connection it is from then on.
    private static func open(path: String, durability: Durability) throws(ArchiveError) -> Ingestor {
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

    /// The busy timeout every connection starts with (`Database`).
    public static let defaultLockTimeout: Duration = .milliseconds(Database.defaultBusyTimeoutMs)

    /// How long each statement waits for another process's write lock before it fails (SQLite's busy timeout,
    /// `defaultLockTimeout` unless set). Bulk writers wait longer: see `BatchCommitter.lockTimeout`.
    public func setLockTimeout(_ timeout: Duration) {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        _ = try? perform { $0.database.setBusyTimeout(milliseconds: Int32(clamping: milliseconds)) }
    }

    /// Starts a new pass of an import (see `CrossSourceMatch`).
    func beginImportPass() {
        _ = try? perform { $0.beginImportPass() }
    }

    /// The stored resume state of an account, or nil if none was saved yet.
    public func syncState(account: String) throws(ArchiveError) -> SyncState? {
        try perform { ingestor throws(ArchiveError) -> SyncState? in
            do throws(SQLiteError) { return try ingestor.syncState(account: account) } catch { throw .sqlite(error) }
        }
    }

    /// Merges the write-ahead log into the database file (e.g. at clean shutdown).
    public func checkpoint() throws(ArchiveError) {
        try perform { ingestor throws(ArchiveError) in
            do throws(SQLiteError) { try ingestor.database.execute("PRAGMA wal_checkpoint(TRUNCATE)") } catch { throw .sqlite(error) }
        }
    }

    /// Merges the full-text index segments; worth running after a bulk import.
    public func optimizeSearchIndex() throws(ArchiveError) {
        try perform { ingestor throws(ArchiveError) in
            do throws(SQLiteError) { try ingestor.database.execute("INSERT INTO message_fts(message_fts) VALUES('optimize')") } catch { throw .sqlite(error) }
        }
    }

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
        case .conversationRead(let jid, _, _): account = jid
        }
        return account.isEmpty ? "event without an account JID" : nil
    }

    /// Failures that can pass without anything in the batch changing: locks, a full disk, I/O errors.
    static func isTransient(_ error: ArchiveError) -> Bool {
        guard case .sqlite(let e) = error else { return false }
        // BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR, CORRUPT (may be a transient read error), FULL,
        // CANTOPEN, PROTOCOL: everything but a record the schema refuses (CONSTRAINT, MISMATCH, TOOBIG, RANGE).
        return [5, 6, 7, 8, 9, 10, 11, 13, 14, 15].contains(e.primaryCode)
    }
}

extension ArchiveWriter.Health {
    public var failingSince: Int64? { if case .failing(let since, _) = self { since } else { nil } }
}

extension ArchiveWriter {
    /// What the writer thread uses: its queue, counters and settings. Held by the thread (not the writer), so that
    /// releasing the writer closes the queue and the thread ends.
    final class Core: Sendable {
        struct Counters {
            /// Shutting down and the archive still cannot be written: everything left is abandoned.
            var abandoning = false
            var batches = 0
            var events = 0
            var health = Health.ok
            /// New messages committed since `takeActivity` last looked (for `roost run`'s activity summary).
            var activity = Activity()
            var stopped = false
            /// `drainAndStop(checkpoint: true)`: the log is merged before the thread ends.
            var checkpointAtStop = false
            var stopWaiters: [CheckedContinuation<Void, Never>] = []
        }

        let path: String
        /// Tuned for and trimmed after small group commits (`Durability.full`).
        let live: Bool
        let queue: BoundedQueue<Job>
        let counters = Mutex(Counters())
        let log: Logger
        let maxBatchEvents: Int
        let stopGrace: Duration
        let healthChanged: @Sendable (Health) -> Void
        let end = ThreadEnd()
        let threadID = Mutex<pthread_t?>(nil)

        init(path: String, live: Bool, log: Logger, maxBatchEvents: Int, capacity: Int, stopGrace: Duration,
             healthChanged: @escaping @Sendable (Health) -> Void) {
            self.path = path
            self.live = live
            self.log = log
            self.maxBatchEvents = maxBatchEvents
            self.queue = BoundedQueue(capacity: capacity)
            self.stopGrace = stopGrace
            self.healthChanged = healthChanged
        }

        func run(_ ingestor: Ingestor) {
            var carried: Job?
            var trimmedAt = ContinuousClock.now
            while true {
                let first: Job
                if let job = carried {
                    first = job
                    carried = nil
                } else if case .item(let job) = queue.take() {
                    first = job
                } else {
                    break
                }
                switch first {
                case .work(let work):
                    work(ingestor)
                case .submission(let submission):
                    var batch = [submission]
                    var count = submission.events.count
                    // Group commit: everything that queued up meanwhile goes into the same transaction.
                    while count < maxBatchEvents, case .item(let next) = queue.poll() {
                        guard case .submission(let more) = next, count + more.events.count <= maxBatchEvents else {
                            carried = next
                            break
                        }
                        batch.append(more)
                        count += more.events.count
                    }
                    commitRetrying(batch, ingestor)
                }
                // Drained: give back to the kernel the page cache's pages and what a burst's records and stanzas
                // left free in malloc's arenas (glibc otherwise keeps freed memory in each thread's arena). At most
                // every two seconds, and only when nothing is queued, so a flood pays next to nothing for it.
                if live, carried == nil, queue.count == 0, ContinuousClock.now - trimmedAt >= .seconds(2) {
                    try? ingestor.database.execute("PRAGMA shrink_memory")
                    malloc_trim(0)
                    trimmedAt = .now
                }
            }
            ArchiveWriter.leaveBulkLoad(ingestor)
            if ingestor.bulkLoading { try? BulkFullTextSettings.set(ingestor.database, BulkFullTextSettings.live) }
            if counters.withLock({ $0.checkpointAtStop }) {
                do throws(SQLiteError) { try ingestor.database.execute("PRAGMA wal_checkpoint(TRUNCATE)") } catch {
                    log.error("closing the archive: \(LogText.quote(error))")
                }
            }
            let waiters = counters.withLock { c -> [CheckedContinuation<Void, Never>] in
                c.stopped = true
                defer { c.stopWaiters.removeAll() }
                return c.stopWaiters
            }
            for waiter in waiters { waiter.resume() }
        }

        var health: Health { counters.withLock { $0.health } }

        /// Commits a batch, retrying transient failures until they pass (or, once stopping, until the grace
        /// period is over); isolates submissions the database refuses for good.
        private func commitRetrying(_ batch: [Submission], _ ingestor: Ingestor) {
            if counters.withLock({ $0.abandoning }) {
                for submission in batch { submission.reply?(.abandoned) }
                return
            }
            var delay = Duration.milliseconds(100)
            var stopDeadline: ContinuousClock.Instant?
            while true {
                switch attempt(batch, ingestor) {
                case .success(let committed):
                    deliver(batch, committed)
                    setHealth(.ok)
                    return
                case .failure(let error) where !ArchiveWriter.isTransient(error):
                    // Something in the batch is refused for good: commit each submission alone to find it.
                    if batch.count > 1 {
                        for submission in batch { commitRetrying([submission], ingestor) }
                    } else if let submission = batch.first {
                        log.error("archive: a record was refused and is not stored: \(LogText.quote(error))")
                        submission.reply?(.refused(error))
                    }
                    return
                case .failure(let error):
                    let cause = WriteFailureDiagnosis.describe(error, archivePath: path)
                    if case .ok = health { log.error("archive: writing failed: \(LogText.quote(cause)). Nothing is acknowledged to the server until it works again; retrying.") }
                    setHealth(.failing(since: health.failingSince ?? Timestamp.now(), cause: cause))
                    if queue.isClosed {
                        let deadline = stopDeadline ?? (ContinuousClock.now + stopGrace)
                        stopDeadline = deadline
                        if ContinuousClock.now >= deadline {
                            log.error("archive: giving up at shutdown on \(batch.reduce(0) { $0 + $1.events.count } + queue.load) events; they were not acknowledged, so the server keeps them")
                            counters.withLock { $0.abandoning = true }
                            for submission in batch { submission.reply?(.abandoned) }
                            return
                        }
                    }
                    Thread.sleep(forTimeInterval: Double(delay / .milliseconds(1)) / 1000)
                    delay = min(delay * 2, .seconds(5))
                }
            }
        }

        private func attempt(_ batch: [Submission], _ ingestor: Ingestor) -> Result<Committed, ArchiveError> {
            var events = batch.flatMap(\.events)
            // One SM count per account and batch: the last, since submissions are in stream order.
            var progress: [String: StreamProgress] = [:]
            var order: [String] = []
            for submission in batch {
                guard let p = submission.progress else { continue }
                if progress[p.account] == nil { order.append(p.account) }
                progress[p.account] = p
            }
            for account in order {
                let p = progress[account]!
                events.append(.syncState(SyncStateRecord(account: account, streamManagementId: p.streamID, streamManagementH: p.handledCount)))
            }
            guard !events.isEmpty else { return .success(Committed()) }
            do { return .success(try ArchiveWriter.commit(events, on: ingestor)) } catch { return .failure(error) }
        }

        private func deliver(_ batch: [Submission], _ committed: Committed) {
            let outcomes = committed.outcomes
            counters.withLock {
                $0.batches += 1
                $0.events += batch.reduce(0) { $0 + $1.events.count }
                var previous: (account: String, conversation: String)?
                var index = 0
                for submission in batch {
                    for event in submission.events {
                        defer { index += 1 }
                        guard case .message(let record) = event, index < outcomes.count, case .inserted = outcomes[index] else { continue }
                        if record.direction == .incoming { $0.activity.incoming += 1 } else { $0.activity.outgoing += 1 }
                        // A flood comes in a few conversations: a row in the same one as the row before adds no key.
                        if let previous, previous.account == record.account, previous.conversation == record.conversation { continue }
                        previous = (record.account, record.conversation)
                        $0.activity.conversations.insert(record.account.lowercased() + " " + record.conversation.lowercased())
                    }
                }
            }
            // The messages, in submission order; each carries its own events' outcomes and new downloads.
            var offset = 0
            var downloads = committed.newDownloads[...]
            for submission in batch {
                let end = offset + submission.events.count
                var mine: [Int64] = []
                while let first = downloads.first, first.event < end {
                    mine.append(first.attachment)
                    downloads.removeFirst()
                }
                submission.reply?(.stored(Array(outcomes[offset..<end]), newDownloads: mine))
                offset = end
            }
        }

        private func setHealth(_ new: Health) {
            let changed = counters.withLock { c -> Bool in
                let was = c.health
                c.health = new
                switch (was, new) {
                case (.ok, .ok): return false
                case (.failing, .failing): return false
                default: return true
                }
            }
            guard changed else { return }
            if case .ok = new { log.info("archive: writing works again") }
            healthChanged(new)
        }
    }
}

/// Turns a failed write into one sentence that says what is wrong and what to do: who holds the lock
/// (from /proc/locks), how much disk is free.
enum WriteFailureDiagnosis {
    static func describe(_ error: ArchiveError, archivePath: String) -> String {
        guard case .sqlite(let e) = error else { return error.description }
        switch e.primaryCode {
        case 5, 6:
            let holders = lockHolders(of: archivePath)
            if holders.isEmpty { return "the archive is locked by another process; stop the other writer (roost import, verify --repair, sqlite3)" }
            return "the archive is locked by \(holders.joined(separator: ", ")); let it finish or stop it"
        case 13:
            let free = freeMegabytes(archivePath)
            return "the disk holding the archive is full\(free.map { " (\($0) MB free)" } ?? ""); free some space"
        case 8:
            return "the archive cannot be written (read-only file or file system): \(e.message)"
        default:
            return "\(e.message) (SQLite error \(e.code))"
        }
    }

    /// Processes other than this one holding write locks on the archive, its WAL index or journal. Readers (`roost
    /// serve`, `roost search`, an `sqlite3` reading) hold read locks on the WAL index, and never keep a writer out.
    static func lockHolders(of path: String) -> [String] {
        var inodes: Set<String> = []
        for file in [path, path + "-shm", path + "-wal", path + "-journal"] {
            var info = stat()
            if stat(file, &info) == 0 {
                inodes.insert("\(roost_major(info.st_dev)):\(roost_minor(info.st_dev)):\(info.st_ino)".lowercased())
            }
        }
        guard !inodes.isEmpty, let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        var pids: [Int32] = []
        for line in locks.split(separator: "\n") {
            // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[3] == "WRITE", let pid = Int32(fields[4]), pid != getpid() else { continue }
            let id = fields[5].split(separator: ":")
            guard id.count == 3, let maj = UInt32(id[0], radix: 16), let min = UInt32(id[1], radix: 16) else { continue }
            if inodes.contains("\(maj):\(min):\(id[2])"), !pids.contains(pid) { pids.append(pid) }
        }
        return pids.map { pid in
            let raw = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
            let command = raw.split(separator: 0).prefix(4).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
            return command.isEmpty ? "PID \(pid)" : "PID \(pid) (\(LogText.quote(command, limit: 80)))"
        }
    }

    static func freeMegabytes(_ path: String) -> Int? {
        var info = statvfs()
        guard statvfs((path as NSString).deletingLastPathComponent, &info) == 0 else { return nil }
        return Int(UInt64(info.f_bavail) * UInt64(info.f_frsize) / 1_000_000)
    }
}

