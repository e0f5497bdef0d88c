import Foundation
public import RoostArchive
import Synchronization

/// Group commit: everything submitted while a commit is in flight is committed together in the next one,
/// so a flood costs one fsync per batch, and every completion runs only after its events are on disk.
///
/// Runs on its own thread because SQLite calls block; submitters never wait for the disk.
public final class IngestPipeline: Sendable {
    public struct Submission: Sendable {
        public var events: [ArchiveEvent]
        /// Stream-management progress to persist in the same transaction (ack after commit survives a crash).
        public var progress: StreamProgress?
        /// Runs on the pipeline thread after the commit (or with the error), in submission order.
        public var completion: @Sendable (Result<[InsertOutcome], ArchiveError>) -> Void

        public init(events: [ArchiveEvent], progress: StreamProgress? = nil,
                    completion: @escaping @Sendable (Result<[InsertOutcome], ArchiveError>) -> Void) {
            self.events = events
            self.progress = progress
            self.completion = completion
        }
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

    private struct Queue {
        var items: [Submission] = []
        var stopping = false
        var stopped = false
        var batches = 0
        var committedEvents = 0
    }

    private let writer: ArchiveWriter
    private let queue = Mutex(Queue())
    private let condition = NSCondition()
    private let maxBatchEvents: Int
    private let log: Logger

    public init(writer: ArchiveWriter, log: Logger, maxBatchEvents: Int = 5000) {
        self.writer = writer
        self.log = log
        self.maxBatchEvents = maxBatchEvents
        let thread = Thread { [self] in self.run() }
        thread.name = "roost.ingest"
        thread.start()
    }

    public func submit(_ submission: Submission) {
        condition.lock()
        let accepted = queue.withLock { q -> Bool in
            guard !q.stopping else { return false }
            q.items.append(submission)
            return true
        }
        condition.signal()
        condition.unlock()
        if !accepted { submission.completion(.failure(.invalidRecord("the archive is closing"))) }
    }

    public func submit(_ events: [ArchiveEvent], progress: StreamProgress? = nil,
                       completion: @escaping @Sendable (Result<[InsertOutcome], ArchiveError>) -> Void = { _ in }) {
        submit(Submission(events: events, progress: progress, completion: completion))
    }

    /// Commits what is queued, then stops the thread. Safe to call twice.
    public func drainAndStop() async {
        requestStop()
        while !queue.withLock({ $0.stopped }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    private func requestStop() {
        condition.lock()
        queue.withLock { $0.stopping = true }
        condition.signal()
        condition.unlock()
    }

    /// Batches and events committed so far (for status and benchmarks).
    public var statistics: (batches: Int, events: Int) { queue.withLock { ($0.batches, $0.committedEvents) } }

    private func run() {
        while true {
            condition.lock()
            while queue.withLock({ $0.items.isEmpty && !$0.stopping }) { condition.wait() }
            let (batch, done) = queue.withLock { q -> ([Submission], Bool) in
                var taken: [Submission] = []
                var count = 0
                while !q.items.isEmpty, taken.isEmpty || count + q.items[0].events.count <= maxBatchEvents {
                    let item = q.items.removeFirst()
                    count += item.events.count
                    taken.append(item)
                }
                return (taken, q.stopping && q.items.isEmpty)
            }
            condition.unlock()
            if !batch.isEmpty { commit(batch) }
            if done {
                queue.withLock { $0.stopped = true }
                return
            }
        }
    }

    private func commit(_ batch: [Submission]) {
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
        let result: Result<[InsertOutcome], ArchiveError>
        if events.isEmpty {
            result = .success([])
        } else {
            do { result = .success(try writer.commit(events)) } catch { result = .failure(error) }
        }
        switch result {
        case .success(let outcomes):
            queue.withLock {
                $0.batches += 1
                $0.committedEvents += events.count
            }
            var offset = 0
            for submission in batch {
                let n = submission.events.count
                submission.completion(.success(Array(outcomes[offset..<(offset + n)])))
                offset += n
            }
        case .failure(let error):
            log.error("archive commit of \(events.count) events failed: \(error)")
            for submission in batch { submission.completion(.failure(error)) }
        }
    }
}

extension IngestPipeline {
    /// Waits until everything submitted before this call is committed (and its completions ran).
    public func flush() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            submit([]) { _ in c.resume() }
        }
    }
}
