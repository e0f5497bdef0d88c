import RoostCore
import Foundation
public import RoostArchive
import RoostXMPP
import Synchronization
internal import CSystem

/// The archive writer's thread: the only code that writes the archive while the agent runs.
///
/// Submissions arrive through a bounded queue (`submit` suspends while it is full, so a writer that falls
/// behind or cannot write slows the sessions, which stop reading their sockets: memory stays flat and the
/// server keeps what is not acknowledged). Everything queued while a commit is in flight is committed
/// together in the next one (group commit: one fsync per batch). Each submission's completion runs after
/// its events are on disk, in submission order — that is when its stanzas may be acknowledged.
///
/// A commit that fails for a reason that can pass (the archive locked by another process, a full disk, an
/// I/O error) is retried with backoff, keeping its events and everything after it queued, so nothing later
/// is acknowledged meanwhile; `health` says why, since when. A submission the database refuses for good (a
/// record breaking a rule) is isolated from the rest of its batch, logged, and completed as `.refused`:
/// deliberately not stored.
public final class IngestPipeline: Sendable {
    public struct Submission: Sendable {
        public var events: [ArchiveEvent]
        /// Stream-management progress to persist in the same transaction (ack after commit survives a crash).
        public var progress: StreamProgress?
        /// Runs on the writer thread after the commit, in submission order.
        public var completion: @Sendable (Outcome) -> Void

        public init(events: [ArchiveEvent], progress: StreamProgress? = nil,
                    completion: @escaping @Sendable (Outcome) -> Void = { _ in }) {
            self.events = events
            self.progress = progress
            self.completion = completion
        }
    }

    /// What became of a submission.
    public enum Outcome: Sendable {
        /// Committed: one outcome per event.
        case stored([InsertOutcome])
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

    /// Queues a submission; suspends while the queue is full. A submission after `drainAndStop` is abandoned.
    public func submit(_ submission: Submission) async {
        if !(await queue.put(submission, cost: max(1, submission.events.count))) {
            submission.completion(.abandoned)
        }
    }

    public func submit(_ events: [ArchiveEvent], progress: StreamProgress? = nil,
                       completion: @escaping @Sendable (Outcome) -> Void = { _ in }) async {
        await submit(Submission(events: events, progress: progress, completion: completion))
    }

    /// Commits `events` and returns what became of them (for actions and catch-up, which wait).
    public func commit(_ events: [ArchiveEvent], progress: StreamProgress? = nil) async -> Outcome {
        let result = OneShot<Outcome>()
        await submit(Submission(events: events, progress: progress) { result.fulfil($0) })
        return await result.value
    }

    /// Waits until everything submitted before this call is committed (and its completions ran).
    public func flush() async {
        _ = await commit([])
    }

    /// Like `flush`, but gives up after `limit` (the archive cannot be written): true when everything was
    /// committed.
    public func flush(within limit: Duration) async -> Bool {
        let result = OneShot<Outcome>()
        let timer = Task {
            try? await Task.sleep(for: limit)
            result.fulfil(.abandoned)
        }
        defer { timer.cancel() }
        await submit(Submission(events: []) { result.fulfil($0) })
        if case .stored = await result.value { return true }
        return false
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
            for submission in batch { submission.completion(.abandoned) }
            return
        }
        var delay = Duration.milliseconds(100)
        var stopDeadline: ContinuousClock.Instant?
        while true {
            switch attempt(batch) {
            case .success(let outcomes):
                deliver(batch, outcomes)
                setHealth(.ok)
                return
            case .failure(let error) where !Self.isTransient(error):
                // Something in the batch is refused for good: commit each submission alone to find it.
                if batch.count > 1 {
                    for submission in batch { commitRetrying([submission]) }
                } else if let submission = batch.first {
                    log.error("archive: a record was refused and is not stored: \(LogText.quote(error))")
                    submission.completion(.refused(error))
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
                        for submission in batch { submission.completion(.abandoned) }
                        return
                    }
                }
                Thread.sleep(forTimeInterval: Double(delay / .milliseconds(1)) / 1000)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    private func attempt(_ batch: [Submission]) -> Result<[InsertOutcome], ArchiveError> {
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
        guard !events.isEmpty else { return .success([]) }
        do { return .success(try writer.commit(events)) } catch { return .failure(error) }
    }

    private func deliver(_ batch: [Submission], _ outcomes: [InsertOutcome]) {
        let committed = batch.reduce(0) { $0 + $1.events.count }
        counters.withLock {
            $0.batches += 1
            $0.events += committed
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
        var offset = 0
        for submission in batch {
            let n = submission.events.count
            submission.completion(.stored(Array(outcomes[offset..<(offset + n)])))
            offset += n
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

/// A value that arrives once, from any thread, for one task to await.
final class OneShot<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    func fulfil(_ value: Value) {
        let waiter = state.withLock { s -> CheckedContinuation<Value, Never>? in
            guard s.value == nil else { return nil }
            s.value = value
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: value)
    }

    var value: Value {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let ready = state.withLock { s -> Value? in
                    if s.value == nil { s.waiter = continuation }
                    return s.value
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
