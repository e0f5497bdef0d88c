import RoostCore
import Foundation
import Synchronization
internal import CSystem

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
            /// `drainAndStop(checkpoint: true)`: the log is merged before the thread ends.
            var checkpointAtStop = false
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
        /// Fulfilled as the thread's last act (after what was queued, the bulk load's end, the final checkpoint):
        /// `drainAndStop` awaits it, the writer's release waits for it.
        let ended = OneShot<Void>()
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

    /// Failures that can pass without anything in the batch changing: locks, a full disk, I/O errors.
    static func isTransient(_ error: ArchiveError) -> Bool {
        guard case .sqlite(let e) = error else { return false }
        // BUSY, LOCKED, NOMEM, READONLY, INTERRUPT, IOERR, CORRUPT (may be a transient read error), FULL,
        // CANTOPEN, PROTOCOL: everything but a record the schema refuses (CONSTRAINT, MISMATCH, TOOBIG, RANGE).
        return [5, 6, 7, 8, 9, 10, 11, 13, 14, 15].contains(e.primaryCode)
    }
}
