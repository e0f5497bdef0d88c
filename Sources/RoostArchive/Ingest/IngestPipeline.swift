public import RoostCore
import Foundation
import Synchronization
internal import CSystem

/// The archive writer's thread: the only code that writes the archive while the agent runs.
///
/// Submissions arrive through a bounded queue (`submit` suspends while it is full, so a writer that falls
/// behind or cannot write slows the sessions, which stop reading their sockets: memory stays flat and the
/// server keeps what is not acknowledged). Everything queued while a commit is in flight is committed
/// together in the next one (group commit: one fsync per batch).
///
/// The thread commits and posts what became of each submission, after its events are on disk and in
/// submission order, as a message: into the submitter's `CommitMailbox` ("committed", with the outcome per
/// event and the attachment rows waiting for a download; "refused"; "abandoned"), or to the task waiting in
/// `commit`. It runs no submitter's code: what follows a commit (the SM ack, saving OMEMO ratchet state,
/// notifications, room notes, queuing downloads) is done by the submitter when the message arrives.
///
/// A commit that fails for a reason that can pass (the archive locked by another process, a full disk, an
/// I/O error) is retried with backoff, keeping its events and everything after it queued, so nothing later
/// is committed or answered meanwhile; `health` says why, since when. A submission the database refuses for
/// good (a record breaking a rule) is isolated from the rest of its batch, logged, and answered `.refused`:
/// deliberately not stored.
public final class IngestPipeline: Sendable {
    public struct Submission: Sendable {
        public var events: [ArchiveEvent]
        /// Stream-management progress to persist in the same transaction (ack after commit survives a crash).
        public var progress: StreamProgress?
        /// Posts the outcome (a mailbox's message, a waiter's answer): made by this file only, so the writer
        /// thread never runs a submitter's code.
        fileprivate var reply: (@Sendable (Outcome) -> Void)?
    }

    /// What became of a submission.
    public enum Outcome: Sendable {
        /// Committed: one outcome per event, and the attachment rows the events added that wait for a download.
        case stored([InsertOutcome], newDownloads: [Int64])
        /// Refused for good (never retried): nothing of it was stored, on purpose.
        case refused(ArchiveError)
        /// The pipeline stopped before it could be committed (shutdown while the archive could not be written).
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

    private struct Counters {
        /// Shutting down and the archive still cannot be written: everything left is abandoned.
        var abandoning = false
        var batches = 0
        var events = 0
        var health = Health.ok
        /// New messages committed since `takeActivity` last looked (for `roost run`'s activity summary).
        var activity = Activity()
        var stopped = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let writer: ArchiveWriter
    private let queue: BoundedQueue<Submission>
    private let counters = Mutex(Counters())
    private let log: Logger
    private let maxBatchEvents: Int
    private let healthChanged: @Sendable (Health) -> Void
    /// How long `drainAndStop` keeps retrying a failing commit before it gives up (what is left is not acknowledged).
    private let stopGrace: Duration

    /// - Parameters:
    ///   - capacity: events queued at most before `submit` suspends.
    ///   - healthChanged: called on the writer thread when commits start or stop failing.
    public init(writer: ArchiveWriter, log: Logger, maxBatchEvents: Int = 5000, capacity: Int = 5000,
                stopGrace: Duration = .seconds(10), healthChanged: @escaping @Sendable (Health) -> Void = { _ in }) {
        self.writer = writer
        self.log = log
        self.maxBatchEvents = maxBatchEvents
        self.queue = BoundedQueue(capacity: capacity)
        self.stopGrace = stopGrace
        self.healthChanged = healthChanged
        writer.prepareForLiveIngest()
        let thread = Thread { [self] in self.run() }
        thread.name = "roost.archive"
        thread.start()
    }

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

    /// Commits `events` and returns what became of them (for actions and catch-up, which wait).
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
        if !(await queue.put(submission, cost: max(1, submission.events.count))) {
            submission.reply?(.abandoned)
        }
    }

    /// Commits what is queued (retrying a failing commit for up to the stop grace), then stops the thread.
    /// Safe to call twice.
    public func drainAndStop() async {
        queue.close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let stopped = counters.withLock { c -> Bool in
                if !c.stopped { c.stopWaiters.append(continuation) }
                return c.stopped
            }
            if stopped { continuation.resume() }
        }
    }

    /// New messages archived since the last call, and in how many conversations.
    public struct Activity: Sendable, Equatable {
        public var incoming = 0
        public var outgoing = 0
        public var conversations: Set<String> = []
    }

    /// What was archived since the last call (which starts counting afresh).
    public func takeActivity() -> Activity {
        counters.withLock { c in
            defer { c.activity = Activity() }
            return c.activity
        }
    }

    /// Batches and events committed so far (for status and benchmarks).
    public var statistics: (batches: Int, events: Int) { counters.withLock { ($0.batches, $0.events) } }
    public var health: Health { counters.withLock { $0.health } }
    /// Events waiting to be committed.
    public var backlog: Int { queue.load }

    // MARK: - The writer thread

    private func run() {
        var carried: Submission?
        var trimmedAt = ContinuousClock.now
        while true {
            var batch: [Submission] = []
            var count = 0
            if let first = carried {
                batch.append(first)
                count = first.events.count
                carried = nil
            } else if case .item(let first) = queue.take() {
                batch.append(first)
                count = first.events.count
            } else {
                break
            }
            // Group commit: everything that queued up meanwhile goes into the same transaction.
            while count < maxBatchEvents, case .item(let next) = queue.poll() {
                if count + next.events.count > maxBatchEvents {
                    carried = next
                    break
                }
                batch.append(next)
                count += next.events.count
            }
            commitRetrying(batch)
            // Drained: give back to the kernel the page cache's pages and what a burst's records and stanzas
            // left free in malloc's arenas (glibc otherwise keeps freed memory in each thread's arena). At most
            // every two seconds, and only when nothing is queued, so a flood pays next to nothing for it.
            if carried == nil, queue.count == 0, ContinuousClock.now - trimmedAt >= .seconds(2) {
                writer.releaseMemory()
                malloc_trim(0)
                trimmedAt = .now
            }
        }
        let waiters = counters.withLock { c -> [CheckedContinuation<Void, Never>] in
            c.stopped = true
            defer { c.stopWaiters.removeAll() }
            return c.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Commits a batch, retrying transient failures until they pass (or, once stopping, until the grace
    /// period is over); isolates submissions the database refuses for good.
    private func commitRetrying(_ batch: [Submission]) {
        if counters.withLock({ $0.abandoning }) {
            for submission in batch { submission.reply?(.abandoned) }
            return
        }
        var delay = Duration.milliseconds(100)
        var stopDeadline: ContinuousClock.Instant?
        while true {
            switch attempt(batch) {
            case .success(let committed):
                deliver(batch, committed)
                setHealth(.ok)
                return
            case .failure(let error) where !Self.isTransient(error):
                // Something in the batch is refused for good: commit each submission alone to find it.
                if batch.count > 1 {
                    for submission in batch { commitRetrying([submission]) }
                } else if let submission = batch.first {
                    log.error("archive: a record was refused and is not stored: \(LogText.quote(error))")
                    submission.reply?(.refused(error))
                }
                return
            case .failure(let error):
                let cause = WriteFailureDiagnosis.describe(error, archivePath: writer.path)
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

    private func attempt(_ batch: [Submission]) -> Result<ArchiveWriter.Committed, ArchiveError> {
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
        guard !events.isEmpty else { return .success(ArchiveWriter.Committed()) }
        do { return .success(try writer.commitReportingDownloads(events)) } catch { return .failure(error) }
    }

    private func deliver(_ batch: [Submission], _ committed: ArchiveWriter.Committed) {
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

    /// Failures that can pass without anything in the batch changing: locks, a full disk, I/O errors.
    static func isTransient(_ error: ArchiveError) -> Bool {
        guard case .sqlite(let e) = error else { return false }
        // BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR, CORRUPT (may be a transient read error), FULL,
        // CANTOPEN, PROTOCOL: everything but a record the schema refuses (CONSTRAINT, MISMATCH, TOOBIG, RANGE).
        return [5, 6, 7, 8, 9, 10, 11, 13, 14, 15].contains(e.primaryCode)
    }
}

extension IngestPipeline.Health {
    public var failingSince: Int64? { if case .failing(let since, _) = self { since } else { nil } }
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

/// Where the archive writer's messages about one submitter's submissions arrive, in submission order: "committed"
/// (the outcomes, the downloads to queue), "refused", "abandoned", each with the `Context` the submitter gave
/// (what it has to do once it knows: the stanzas to acknowledge, the notifications to post). The submitter reads
/// `messages` on its own side (a session, on its actor); the writer thread only posts.
///
/// Never dropping, and bounded without a limit of its own: every message answers one submission, so the mailbox
/// holds at most the submitter's submissions in flight — those the pipeline's bounded queue holds (its capacity in
/// events, each submission costing at least one), plus the batches committed since the reader last ran.
public final class CommitMailbox<Context: Sendable>: Sendable {
    public struct Message: Sendable {
        public let context: Context
        public let outcome: IngestPipeline.Outcome
    }

    public let messages: AsyncStream<Message>
    private let continuation: AsyncStream<Message>.Continuation

    public init() {
        (messages, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    fileprivate func poster(_ context: Context) -> @Sendable (IngestPipeline.Outcome) -> Void {
        { [continuation] outcome in continuation.yield(Message(context: context, outcome: outcome)) }
    }

    /// Ends `messages` for its reader once it has read what was posted; a later message is not delivered.
    public func close() {
        continuation.finish()
    }
}
