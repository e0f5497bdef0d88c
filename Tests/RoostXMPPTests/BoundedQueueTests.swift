import Foundation
import Synchronization
import Testing
import RoostTestSupport
@testable import RoostCore

/// The one queue work is handed through (connections' readers and writers, the archive writer): order, capacity
/// by cost, back-pressure on threads and tasks, close and cancellation — in memory, in milliseconds.
@Suite("BoundedQueue")
struct BoundedQueueTests {
    /// The tasks suspended in `put` and in `take`: a wait is seen to have begun, not guessed after a sleep.
    private static func waiting<Element>(_ queue: BoundedQueue<Element>) -> (putters: Int, takers: Int) {
        queue.locked { (queue.putters.count, queue.takers.count) }
    }

    @Test func itemsComeOutInOrderAcrossTheRingsGrowth() {
        let queue = BoundedQueue<Int>(capacity: 10_000)
        // Wrap the ring around before it grows: take some, then put past its first size.
        for n in 0..<3 { queue.put(n) }
        for _ in 0..<2 { _ = queue.poll() }
        for n in 3..<3000 { queue.put(n) }
        var out: [Int] = []
        while case .item(let n) = queue.poll() { out.append(n) }
        #expect(out == Array(2..<3000))
        #expect(queue.count == 0 && queue.load == 0)
    }

    @Test func costFillsTheCapacityAndAnOversizedItemPassesAlone() {
        let queue = BoundedQueue<String>(capacity: 10)
        #expect(queue.offer("a", cost: 6) == .accepted)
        #expect(queue.offer("b", cost: 5) == .full, "6 + 5 is past 10")
        #expect(queue.offer("c", cost: 4) == .accepted)
        #expect(queue.load == 10 && queue.count == 2)
        _ = queue.poll()
        _ = queue.poll()
        // Nothing queued: an item costing more than the whole capacity still gets through, on its own.
        #expect(queue.offer("huge", cost: 50) == .accepted)
        #expect(queue.offer("d", cost: 1) == .full)
    }

    @Test func aThreadPutWaitsForATake() async throws {
        let queue = BoundedQueue<Int>(capacity: 2)
        #expect(queue.offer(1) == .accepted && queue.offer(2) == .accepted)
        let progress = Mutex((started: false, done: false))
        let producer = Thread {
            progress.withLock { $0.started = true }
            queue.put(3)
            progress.withLock { $0.done = true }
        }
        producer.start()
        try await waitUntil("the producer to start") { progress.withLock { $0.started } }
        // Something that must not happen can only be watched for a while: 100 ms is ample for an unblocked put.
        try await Task.sleep(for: .milliseconds(100))
        #expect(!progress.withLock { $0.done }, "a put into a full queue returned")
        #expect(queue.count == 2)
        guard case .item(1) = queue.poll() else { Issue.record("expected 1 first"); return }
        try await waitUntil("the blocked put to finish") { progress.withLock { $0.done } }
        var rest: [Int] = []
        while case .item(let n) = queue.poll() { rest.append(n) }
        #expect(rest == [2, 3])
    }

    @Test func aTaskPutSuspendsUntilThereIsRoom() async throws {
        let queue = BoundedQueue<Int>(capacity: 1)
        await queue.put(1)
        let put = Task { await queue.put(2) }
        try await waitUntil("the second put to wait") { Self.waiting(queue).putters == 1 }
        #expect(await queue.take() == 1)
        #expect(await put.value == true)
        #expect(await queue.take() == 2)
    }

    @Test func aWaitingTakerGetsTheNextItemDirectly() async throws {
        let queue = BoundedQueue<String>(capacity: 4)
        let taker = Task { await queue.take() }
        try await waitUntil("the taker to wait") { Self.waiting(queue).takers == 1 }
        await queue.put("x")
        #expect(await taker.value == "x")
        #expect(queue.count == 0 && queue.load == 0, "handed over, never counted as queued")
    }

    @Test func takeUntilADeadlineTimesOut() {
        let queue = BoundedQueue<Int>(capacity: 1)
        guard case .timedOut = queue.take(until: .now + .milliseconds(30)) else {
            Issue.record("an empty queue must time out")
            return
        }
    }

    @Test func closeRefusesPutsDrainsThenEnds() async throws {
        let queue = BoundedQueue<Int>(capacity: 1)
        await queue.put(1)
        let blockedPut = Task { await queue.put(2) }
        try await waitUntil("the put to wait") { Self.waiting(queue).putters == 1 }
        queue.close()
        #expect(await blockedPut.value == false, "a put waiting at close fails")
        #expect(!(await queue.put(3)))
        #expect(queue.offer(4) == .closed)
        #expect(await queue.take() == 1, "what was queued can still be taken")
        #expect(await queue.take() == nil)
        guard case .closed = queue.take(until: .now + .seconds(5)) else { Issue.record("closed and drained"); return }
    }

    @Test func closeWakesAWaitingTaker() async throws {
        let queue = BoundedQueue<Int>(capacity: 1)
        let taker = Task { await queue.take() }
        try await waitUntil("the taker to wait") { Self.waiting(queue).takers == 1 }
        queue.close()
        #expect(await taker.value == nil)
    }

    @Test func cancellationEndsAWaitingPutOrTake() async throws {
        let queue = BoundedQueue<Int>(capacity: 1)
        await queue.put(1)
        let put = Task { await queue.put(2) }
        try await waitUntil("the put to wait") { Self.waiting(queue).putters == 1 }
        put.cancel()
        #expect(await put.value == false)
        #expect(queue.count == 1, "the cancelled item was not queued")
        _ = queue.poll()
        let take = Task { await queue.take() }
        try await waitUntil("the taker to wait") { Self.waiting(queue).takers == 1 }
        take.cancel()
        #expect(await take.value == nil)
    }
}
