import Foundation

/// Commits a stream of archive events in batches, for bulk writers (`roost import` of exports and of clients' logs),
/// on top of the archive writer: each batch is one `ArchiveWriter.commitBlocking`, a transaction of its own on the
/// writer's thread.
///
/// With a transaction budget (while `roost run` is writing the same archive), each transaction is kept
/// short: the batch size adapts so that a commit takes about the budget (halved when a commit ran long,
/// grown while commits are quick), so the agent's own commits never wait long for the write lock. Without
/// one, batches are as large as `maximumBatch` for speed.
public struct BatchCommitter {
    public let writer: ArchiveWriter
    public let transactionBudget: Duration?
    public let maximumBatch: Int
    private var batch: [ArchiveEvent] = []
    private var limit: Int
    /// Runs after each commit with the committed events and their outcomes, in order.
    private let committed: ([ArchiveEvent], [InsertOutcome]) -> Void

    /// `expectedMessages`: how many messages the caller will add, if it knows (a bulk load into a small archive
    /// then defers the random-key indexes too: `ArchiveWriter.beginBulkLoad`).
    public init(writer: ArchiveWriter, transactionBudget: Duration?, maximumBatch: Int = 5_000, expectedMessages: Int = 0,
                committed: @escaping ([ArchiveEvent], [InsertOutcome]) -> Void) {
        self.writer = writer
        self.transactionBudget = transactionBudget
        self.maximumBatch = maximumBatch
        self.committed = committed
        limit = transactionBudget == nil ? maximumBatch : min(maximumBatch, 200)
        batch.reserveCapacity(limit + 16)
        writer.setLockTimeout(Self.lockTimeout)
        if transactionBudget == nil { writer.beginBulkLoad(expectedMessages: expectedMessages) }
    }

    /// How long a commit waits for the write lock. The agent's group commits follow each other closely during a
    /// flood, and SQLite's busy handler looks for a free lock only every 100 ms: within its default 5 s it could
    /// miss every gap (`roost import` during a live flood failed with "database is locked" on a loaded machine).
    /// The agent holds the lock for milliseconds at a time; a process that holds it for a minute is a long repair
    /// or stuck, and the import then stops with the locked error (re-running it completes it: dedup).
    public static let lockTimeout: Duration = .seconds(60)

    /// Commits what is pending and ends the load (`ArchiveWriter.endBulkLoad`: the log is checkpointed).
    public mutating func finish() throws(ArchiveError) {
        try flush()
        // The closing checkpoint waits (holding off the agent's commits) for readers to leave old snapshots: only
        // for the default time.
        writer.setLockTimeout(ArchiveWriter.defaultLockTimeout)
        try writer.endBulkLoad()
    }

    /// Adds events (kept together in one transaction); commits when the batch is full.
    public mutating func add(_ events: [ArchiveEvent]) throws(ArchiveError) {
        batch += events
        if batch.count >= limit { try flush() }
    }

    public mutating func add(_ event: ArchiveEvent) throws(ArchiveError) {
        try add([event])
    }

    /// Commits what is pending.
    public mutating func flush() throws(ArchiveError) {
        guard !batch.isEmpty else { return }
        let started = ContinuousClock.now
        let outcomes = try writer.commitBlocking(batch)
        let took = ContinuousClock.now - started
        committed(batch, outcomes)
        batch.removeAll(keepingCapacity: true)
        if let budget = transactionBudget {
            if took > budget {
                limit = max(10, limit / 2)
            } else if took < budget / 2 {
                limit = min(maximumBatch, limit + limit / 4 + 1)
            }
        }
    }
}
