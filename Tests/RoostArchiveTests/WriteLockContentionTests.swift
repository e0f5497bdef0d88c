import Foundation
import RoostTestSupport
@testable import RoostArchive
import Synchronization
import Testing

/// Writers that share the archive with the agent (an import, `files fetch`, a repair): while its group commits
/// follow each other during a flood, they get the write lock in the gaps, however long it takes, instead of
/// failing with "database is locked" after SQLite's default busy timeout.
@Suite("Writers beside the agent's write lock")
struct WriteLockContentionTests {
    /// Another connection holding the write lock, as the agent does while it commits.
    private static func holdWriteLock(_ path: String) throws -> Database {
        let holder = try Database(path: path, mode: .readWrite, busyTimeoutMs: 0)
        try holder.execute("BEGIN IMMEDIATE")
        return holder
    }

    @Test func openingAnUpToDateArchiveTakesNoWriteLock() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer()
        let holder = try Self.holdWriteLock(archive.path)
        defer { try? holder.execute("ROLLBACK") }
        // Before, each of the migrations took the lock to see it was applied: with the lock held throughout, the
        // open failed after the busy timeout.
        let writer = try archive.writer()
        #expect(try writer.syncState(account: Fixture.account) == nil)
    }

    /// What the committing thread ended with.
    private final class Outcome: Sendable {
        let value = Mutex<Result<Int, ArchiveError>?>(nil)
        var current: Result<Int, ArchiveError>? { value.withLock { $0 } }
    }

    @Test func aBulkCommitWaitsForTheLockPastTheDefaultBusyTimeout() async throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let holder = try Self.holdWriteLock(archive.path)
        let outcome = Outcome()
        let committing = Thread {
            var committed = 0
            var committer = BatchCommitter(writer: writer, transactionBudget: .milliseconds(50)) { _, outcomes in committed += outcomes.count }
            do throws(ArchiveError) {
                try committer.add(.message(Fixture.message("imported while the lock was held", stanzaId: "lock-1")))
                try committer.finish()
                outcome.value.withLock { [committed] in $0 = .success(committed) }
            } catch {
                outcome.value.withLock { $0 = .failure(error) }
            }
        }
        committing.start()
        // The fault's length, not a wait for a result: the lock is held past the default timeout.
        try await Task.sleep(for: ArchiveWriter.defaultLockTimeout + .seconds(2))
        let early = outcome.current
        try holder.execute("ROLLBACK")
        #expect(early == nil, "the commit ended while another writer held the lock: \(String(describing: early))")
        try? await waitUntil("the commit to end", timeout: BatchCommitter.lockTimeout, every: .milliseconds(50)) { outcome.current != nil }
        let result = try #require(outcome.current, "the commit did not end after the lock was released")
        #expect(try result.get() == 1)
        #expect(try Database(path: archive.path, mode: .readOnly).cached("SELECT count(*) FROM messages").scalarInt() == 1)
    }
}
