import Foundation
import Testing
import RoostCore
import RoostArchive
import RoostTestSupport
import Synchronization
@testable import RoostAgent

/// Issue 31, 1 and 6: the archive writer's group commit on its own, in milliseconds and without a server. The writer "fails
/// on command": a second connection takes the archive's write lock (what `sqlite3` or `roost import` would do), so
/// commits fail with SQLITE_BUSY until it lets go; a record the archive refuses for good is one without a
/// conversation. What is checked is what the ack after commit rests on: a submitter hears "committed" only once its
/// events and its `h` are on disk, in submission order, and nothing after a failing commit is answered before it.
@Suite("ArchiveWriter")
struct ArchiveWriterTests {
    static let account = "me@example.org"

    /// An archive, its writer (short lock timeout: a locked archive fails at once and is retried), and a second
    /// connection that can hold the write lock.
    struct Rig {
        let folder: TestDirectory
        let path: String
        let writer: ArchiveWriter
        let blocker: Database

        init() throws {
            folder = try TestDirectory("roost-writer")
            path = folder.path + "/archive.sqlite"
            writer = try ArchiveWriter(path: path, durability: .normal, log: Logger(level: .error, sink: { _ in }))
            writer.setLockTimeout(.milliseconds(5))
            blocker = try Database(path: path, mode: .readWrite, synchronous: .normal, busyTimeoutMs: 5000)
        }

        func lock() throws { try blocker.execute("BEGIN IMMEDIATE") }
        func unlock() throws { try blocker.execute("COMMIT") }

        /// Rows stored with `body`, read through a connection of its own (what is on disk, not what the writer holds).
        func stored(_ body: String) throws -> Int64 {
            let reader = try Database(path: path, mode: .readOnly)
            return try reader.cached("SELECT count(*) FROM messages WHERE body = ?").scalarInt([.text(body)]) ?? 0
        }

        /// The SM `h` stored for the account.
        func storedH() throws -> Int64? {
            let reader = try Database(path: path, mode: .readOnly)
            return try reader.cached("SELECT s.sm_h FROM sync_state s JOIN accounts a ON a.id = s.account_id WHERE a.jid = ?")
                .scalarInt([.text(ArchiveWriterTests.account)])
        }
    }

    static func message(_ body: String, conversation: String = "bob@example.org") -> ArchiveEvent {
        .message(MessageRecord(account: account, conversation: conversation, direction: .incoming, from: conversation + "/phone",
                               to: account, body: body, timestamp: 1_768_478_400_000, messageId: body))
    }

    static func progress(_ h: UInt32) -> ArchiveWriter.StreamProgress {
        ArchiveWriter.StreamProgress(account: account, streamID: "sm-1", handledCount: h)
    }

    /// Every "committed" message arrives after its events and its `h` are on disk, and the messages come in
    /// submission order, across batches.
    @Test func aCommitMessageArrivesAfterItsCommitInSubmissionOrder() async throws {
        let rig = try Rig()
        let mailbox = CommitMailbox<Int>()
        let count = 40
        // Held back first, so that most submissions queue up and are committed together (group commit).
        try rig.lock()
        for index in 1...count {
            await rig.writer.submit([Self.message("m\(index)")], progress: Self.progress(UInt32(index)), to: mailbox, context: index)
        }
        try rig.unlock()
        var heard: [Int] = []
        for await message in mailbox.messages {
            guard case .stored(let outcomes, _) = message.outcome else {
                Issue.record("submission \(message.context): \(message.outcome)")
                break
            }
            #expect(outcomes.count == 1)
            #expect(try rig.stored("m\(message.context)") == 1, "committed before the message says so")
            #expect(try rig.storedH() ?? 0 >= Int64(message.context), "the h that covers it is in the same commit")
            heard.append(message.context)
            if heard.count == count { break }
        }
        #expect(heard == Array(1...count), "in submission order")
        #expect(rig.writer.statistics.batches < count, "grouped into fewer commits than submissions")
        await rig.writer.drainAndStop()
    }

    /// While commits fail for a reason that passes, nothing is answered, and nothing behind the failing batch is
    /// committed; once the lock is gone, everything is, in order, and health comes back.
    @Test func aFailingCommitIsRetriedAndNothingIsAnsweredMeanwhile() async throws {
        let rig = try Rig()
        let mailbox = CommitMailbox<String>()
        let heard = Collected<ArchiveWriter.Outcome>()
        let reading = Task {
            for await message in mailbox.messages { heard.append(message.context, message.outcome) }
        }
        try rig.lock()
        await rig.writer.submit([Self.message("first")], progress: Self.progress(1), to: mailbox, context: "first")
        try await waitUntil("the writer to report failing commits", timeout: .seconds(60)) {
            if case .failing = rig.writer.health { true } else { false }
        }
        await rig.writer.submit([Self.message("second")], progress: Self.progress(2), to: mailbox, context: "second")
        #expect(heard.contexts.isEmpty, "nothing is answered while the commit fails")
        #expect(try rig.stored("first") == 0 && rig.stored("second") == 0)
        #expect(try rig.storedH() == nil, "no h is stored ahead of its commit")
        try rig.unlock()
        try await waitUntil("both submissions to be answered", timeout: .seconds(60)) { heard.contexts.count == 2 }
        #expect(heard.contexts == ["first", "second"])
        for outcome in heard.outcomes {
            guard case .stored = outcome else { Issue.record("\(outcome)"); continue }
        }
        #expect(try rig.stored("first") == 1 && rig.stored("second") == 1)
        #expect(try rig.storedH() == 2)
        #expect(rig.writer.health == .ok)
        mailbox.close()
        await reading.value
        await rig.writer.drainAndStop()
    }

    /// A submission the archive refuses for good is isolated from the rest of its batch: the others are stored,
    /// it alone is answered `.refused`, and the answers keep the submission order.
    @Test func aRefusedSubmissionIsIsolatedFromItsBatch() async throws {
        let rig = try Rig()
        let mailbox = CommitMailbox<String>()
        // The first submission holds the thread (retrying) while the next three queue up behind it: they are
        // one batch once the lock is gone.
        try rig.lock()
        await rig.writer.submit([Self.message("before")], to: mailbox, context: "before")
        try await waitUntil("the first commit to fail", timeout: .seconds(10)) {
            if case .failing = rig.writer.health { true } else { false }
        }
        await rig.writer.submit([Self.message("good1")], to: mailbox, context: "good1")
        await rig.writer.submit([Self.message("bad", conversation: "")], to: mailbox, context: "bad")
        await rig.writer.submit([Self.message("good2")], to: mailbox, context: "good2")
        try rig.unlock()
        var heard: [(String, ArchiveWriter.Outcome)] = []
        for await message in mailbox.messages {
            heard.append((message.context, message.outcome))
            if heard.count == 4 { break }
        }
        #expect(heard.map(\.0) == ["before", "good1", "bad", "good2"])
        for (context, outcome) in heard {
            switch (context, outcome) {
            case ("bad", .refused(.invalidRecord)): break
            case ("bad", _): Issue.record("the bad record: \(outcome)")
            case (_, .stored): #expect(try rig.stored(context) == 1)
            default: Issue.record("\(context): \(outcome)")
            }
        }
        #expect(try rig.stored("bad") == 0)
        await rig.writer.drainAndStop()
    }

    /// Each submitter hears about its own submissions only, with the download rows its own events added, even
    /// when another's share the batch.
    @Test func eachMailboxHearsItsOwnSubmissions() async throws {
        let rig = try Rig()
        let alice = CommitMailbox<Int>()
        let bob = CommitMailbox<Int>()
        try rig.lock()
        var picture = MessageRecord(account: Self.account, conversation: "carol@example.org", direction: .incoming,
                                    from: "carol@example.org/phone", to: Self.account, body: "https://up.example/cat.png",
                                    timestamp: 1_768_478_400_000, messageId: "pic")
        picture.attachments = [AttachmentRecord(url: "https://up.example/cat.png")]
        await rig.writer.submit([Self.message("a1")], to: alice, context: 1)
        await rig.writer.submit([.message(picture)], to: bob, context: 1)
        await rig.writer.submit([Self.message("a2")], to: alice, context: 2)
        try rig.unlock()
        var aliceHeard: [Int] = []
        for await message in alice.messages {
            guard case .stored(_, let downloads) = message.outcome else { Issue.record("\(message.outcome)"); break }
            #expect(downloads.isEmpty)
            aliceHeard.append(message.context)
            if aliceHeard.count == 2 { break }
        }
        #expect(aliceHeard == [1, 2])
        for await message in bob.messages {
            guard case .stored(_, let downloads) = message.outcome else { Issue.record("\(message.outcome)"); break }
            #expect(downloads.count == 1, "the attachment row waiting for its download")
            break
        }
        await rig.writer.drainAndStop()
    }

    /// A download thread's write is a message to the writer thread, not a turn on the connection from its own
    /// thread: sent while a commit fails (the archive locked), it waits behind that commit instead of failing with
    /// the lock, and is done after it, in queue order.
    @Test func aDownloadsUpdateWaitsItsTurnOnTheWriterThread() async throws {
        let rig = try Rig()
        var picture = MessageRecord(account: Self.account, conversation: "carol@example.org", direction: .incoming,
                                    from: "carol@example.org/phone", to: Self.account, body: "https://up.example/cat.png",
                                    timestamp: 1_768_478_400_000, messageId: "pic")
        picture.attachments = [AttachmentRecord(url: "https://up.example/cat.png")]
        guard case .stored(_, let downloads) = await rig.writer.commit([.message(picture)]), let id = downloads.first else {
            Issue.record("the picture's attachment row was not reported")
            return
        }
        let mailbox = CommitMailbox<String>()
        try rig.lock()
        await rig.writer.submit([Self.message("first")], to: mailbox, context: "first")
        try await waitUntil("the commit to fail", timeout: .seconds(10)) {
            if case .failing = rig.writer.health { true } else { false }
        }
        let queuedBefore = rig.writer.backlog
        let writer = rig.writer
        let path = rig.path
        // A thread of its own, as the download threads are; it blocks until the writer thread answers.
        let update = Task {
            try await offPool(name: "roost.files.test") { () throws -> Int64 in
                try writer.update(AttachmentUpdate(id: id, state: .stored, sha256: String(repeating: "ab", count: 32), size: 9, attempts: 1))
                // What is on disk when the answer came: the commit queued before the update must be there.
                return try Database(path: path, mode: .readOnly).cached("SELECT count(*) FROM messages WHERE body = 'first'").scalarInt() ?? 0
            }
        }
        try await waitUntil("the update to be queued behind the failing commit", timeout: .seconds(10)) {
            rig.writer.backlog > queuedBefore
        }
        try rig.unlock()
        #expect(try await update.value == 1, "done after the commit queued before it")
        let stored = try Database(path: path, mode: .readOnly).cached("SELECT count(*) FROM attachments WHERE id = ? AND state = 'stored'")
            .scalarInt([.integer(id)])
        #expect(stored == 1)
        for await message in mailbox.messages {
            guard case .stored = message.outcome else { Issue.record("\(message.outcome)"); break }
            break
        }
        await rig.writer.drainAndStop()
    }

    /// After `drainAndStop`, a submission is answered `.abandoned` at once: never lost without an answer.
    @Test func aSubmissionAfterStopIsAbandoned() async throws {
        let rig = try Rig()
        let mailbox = CommitMailbox<Int>()
        await rig.writer.drainAndStop()
        await rig.writer.submit([Self.message("late")], to: mailbox, context: 7)
        for await message in mailbox.messages {
            #expect(message.context == 7)
            guard case .abandoned = message.outcome else { Issue.record("\(message.outcome)"); break }
            break
        }
        #expect(try rig.stored("late") == 0)
    }
}

/// Messages a reading task collected, for a test to look at from outside it.
final class Collected<Outcome: Sendable>: Sendable {
    private let items = Mutex<[(context: String, outcome: Outcome)]>([])

    func append(_ context: String, _ outcome: Outcome) { items.withLock { $0.append((context, outcome)) } }
    var contexts: [String] { items.withLock { $0.map(\.context) } }
    var outcomes: [Outcome] { items.withLock { $0.map(\.outcome) } }
}
