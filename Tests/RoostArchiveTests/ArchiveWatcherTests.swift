import Foundation
import Synchronization
import Testing
@testable import RoostArchive
import RoostTestSupport

/// The one archive-change watcher (`ArchiveWatcher`, behind `roost serve`'s live pages and `roost log --follow`):
/// each commit of another connection is a change, however soon after its file event SQLite publishes it, and
/// `stop` ends its thread, after which nothing is called.
@Suite("Archive: the change watcher")
struct ArchiveWatcherTests {
    final class Calls: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
    }

    func message(_ body: String, _ n: Int64) -> ArchiveEvent {
        .message(MessageRecord(account: ExportFixture.account, conversation: ExportFixture.alice, direction: .incoming, kind: .chat,
                               from: ExportFixture.alice + "/phone", to: ExportFixture.account, body: body,
                               timestamp: ExportFixture.t0 + n * 1000, stanzaId: "w\(n)", stanzaIdBy: ExportFixture.account,
                               stanzaIdTrusted: true, messageId: "w\(n)"))
    }

    /// Each commit of another connection is a change, and `stop` ends the thread. `sameProcessWriter`: the writer is
    /// given to the watcher, whose commits wake it with no file event and no timed look (here there are none).
    @Test(arguments: [false, true])
    func eachCommitOfAnotherConnectionIsAChangeAndStopEndsIt(sameProcessWriter: Bool) async throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .normal)
        _ = try writer.commitBlocking([message("first", 0)])
        let reader = try ArchiveReader(path: scratch.archive)
        let calls = Calls()
        let watcher = try #require(sameProcessWriter
            ? ArchiveWatcher(reader: reader, writer: writer, looks: []) { calls.count.withLock { $0 += 1 } }
            : ArchiveWatcher(reader: reader) { calls.count.withLock { $0 += 1 } })
        // Its own thread, named for the kernel (other tests' watchers may run beside it in this process).
        let thread = try #require(watcher.kernelThread.wait(until: Date().addingTimeInterval(20)))
        #expect((try? String(contentsOfFile: "/proc/self/task/\(thread)/comm", encoding: .utf8)) == "roost.archive.w\n")
        for n in Int64(1)...3 {
            let seen = calls.value
            _ = try writer.commitBlocking([message("commit \(n)", n)])
            try await waitUntil("commit \(n) is seen", timeout: .seconds(20), every: .milliseconds(10), detail: { "\(calls.value) calls" }) {
                calls.value > seen
            }
        }
        watcher.stop()
        let stopped = calls.value
        _ = try writer.commitBlocking([message("after the stop", 4)])
        // The watcher's thread has ended (`stop` waited for its last act): nothing can call it any more, whatever the
        // files do, and the kernel lets the thread go (the moment after its last act).
        #expect(calls.value == stopped)
        try await waitUntil("the watcher's thread \(thread) is gone", timeout: .seconds(20), every: .milliseconds(10)) {
            !FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)")
        }
    }
}
