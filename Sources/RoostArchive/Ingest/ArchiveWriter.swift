public import RoostCore
import Foundation
import Synchronization

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
        let opened = OneShot<Result<Void, ArchiveError>>()
        startThread(named: "roost.archive") {
            core.threadID.withLock { $0 = pthread_self() }
            defer { core.ended.fulfil(()) }
            let ingestor: Ingestor
            do throws(ArchiveError) {
                ingestor = try Self.open(path: path, durability: durability)
            } catch {
                opened.fulfil(.failure(error))
                return
            }
            opened.fulfil(.success(()))
            core.run(ingestor)
        }
        if case .failure(let error)? = opened.wait() { throw error }
    }

    deinit {
        core.queue.close()
        // Released on its own thread (the last reference held by a message it ran): it ends by itself.
        let own = core.threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if !own { core.ended.wait() }
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
        await core.ended.value
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
        let answer = OneShot<Result<T, ArchiveError>>()
        let job = Job.work { ingestor in
            do throws(ArchiveError) { answer.fulfil(.success(try work(ingestor))) } catch { answer.fulfil(.failure(error)) }
        }
        // Every job the queue took is run before the thread ends: once put, the answer comes.
        guard core.queue.put(job), let result = answer.wait() else { throw .writerStopped }
        return try result.get()
    }

    // MARK: - Settings and other writes

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
}

extension ArchiveWriter.Health {
    public var failingSince: Int64? { if case .failing(let since, _) = self { since } else { nil } }
}
