public import Foundation

/// A first-in first-out queue with a capacity, between threads and tasks: the one kind of queue the
/// engine and the agent hand work through, so that every producer feels back-pressure.
///
/// Producers on a dedicated thread block in `put(_:)`; producers in a task suspend in `put(_:) async`.
/// Consumers likewise block in `take(until:)` or suspend in `take()`. Each item has a cost (an archive
/// submission costs its event count); a put waits while the queue is non-empty and the item would push it
/// past its capacity, so one oversized item still gets through on its own and nothing ever deadlocks.
/// `close()` wakes everybody: puts then fail, takes drain what is left and then return nil.
public final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    public let capacity: Int
    // Everything below is guarded by `condition` (its lock); blocked threads wait on it. Usable from the inlinable
    // methods, which the modules using a queue specialise for its element type (see `Ring`).
    @usableFromInline let condition = NSCondition()
    @usableFromInline var ring: Ring<(item: Element, cost: Int)>
    @usableFromInline var used = 0
    @usableFromInline var closed = false
    @usableFromInline var takers: [(id: UInt64, continuation: CheckedContinuation<Element?, Never>)] = []
    @usableFromInline var putters: [(id: UInt64, cost: Int, continuation: CheckedContinuation<Void, Never>)] = []
    @usableFromInline var nextWaiterID: UInt64 = 0

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        ring = Ring(minimumCapacity: Swift.min(capacity, 1024))
    }

    /// Items queued now.
    @inlinable public var count: Int { locked { ring.count } }
    /// The summed cost of what is queued.
    @inlinable public var load: Int { locked { used } }
    @inlinable public var isClosed: Bool { locked { closed } }

    // MARK: Producing

    /// Blocks the calling thread while the queue is full. False when the queue is closed.
    @discardableResult @inlinable
    public func put(_ item: Element, cost: Int = 1) -> Bool {
        condition.lock()
        while !closed && !fits(cost) { condition.wait() }
        guard !closed else {
            condition.unlock()
            return false
        }
        let wake = append(item, cost: cost)
        condition.unlock()
        wake?.resume(returning: item)
        return true
    }

    /// Suspends while the queue is full. False when the queue is closed (or the task is cancelled while waiting).
    @discardableResult @inlinable
    public func put(_ item: Element, cost: Int = 1) async -> Bool {
        while true {
            switch offer(item, cost: cost) {
            case .accepted: return true
            case .closed: return false
            case .full: break
            }
            let id = newWaiterID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    condition.lock()
                    if closed || fits(cost) || Task.isCancelled {
                        condition.unlock()
                        continuation.resume()
                    } else {
                        putters.append((id, cost, continuation))
                        condition.unlock()
                    }
                }
            } onCancel: {
                self.resumePutter(id: id)
            }
            if Task.isCancelled { return false }
        }
    }

    /// Never waits: `.full` when the item does not fit now.
    @discardableResult @inlinable
    public func offer(_ item: Element, cost: Int = 1) -> OfferResult {
        condition.lock()
        guard !closed else {
            condition.unlock()
            return .closed
        }
        guard fits(cost) else {
            condition.unlock()
            return .full
        }
        let wake = append(item, cost: cost)
        condition.unlock()
        wake?.resume(returning: item)
        return .accepted
    }

    public enum OfferResult: Sendable, Equatable { case accepted, full, closed }

    // MARK: Consuming

    /// Blocks the calling thread until an item arrives, the deadline passes (`.timedOut`) or the queue is
    /// closed and empty (`.closed`).
    @inlinable public func take(until deadline: ContinuousClock.Instant? = nil) -> TakeResult {
        condition.lock()
        while ring.isEmpty && !closed {
            if let deadline {
                let seconds = Double((deadline - .now) / .microseconds(1)) / 1_000_000
                if !condition.wait(until: Date(timeIntervalSinceNow: Swift.max(0, seconds))) && ring.isEmpty {
                    condition.unlock()
                    return closed ? .closed : .timedOut
                }
            } else {
                condition.wait()
            }
        }
        guard let entry = ring.popFirst() else {
            condition.unlock()
            return .closed
        }
        let wake = release(entry.cost)
        condition.unlock()
        for putter in wake { putter.resume() }
        return .item(entry.item)
    }

    public enum TakeResult {
        case item(Element)
        case timedOut
        case closed
    }

    /// Suspends until an item arrives; nil once the queue is closed and drained, or the task is cancelled.
    @inlinable public func take() async -> Element? {
        switch poll() {
        case .item(let item): return item
        case .closed: return nil
        case .timedOut: break
        }
        let id = newWaiterID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                condition.lock()
                if let entry = ring.popFirst() {
                    let wake = release(entry.cost)
                    condition.unlock()
                    for putter in wake { putter.resume() }
                    continuation.resume(returning: entry.item)
                } else if closed || Task.isCancelled {
                    condition.unlock()
                    continuation.resume(returning: nil)
                } else {
                    takers.append((id, continuation))
                    condition.unlock()
                }
            }
        } onCancel: {
            self.resumeTaker(id: id)
        }
    }

    /// Never waits: the first item, `.closed` when closed and drained, `.timedOut` when empty for now.
    @inlinable public func poll() -> TakeResult {
        condition.lock()
        if let entry = ring.popFirst() {
            let wake = release(entry.cost)
            condition.unlock()
            for putter in wake { putter.resume() }
            return .item(entry.item)
        }
        let result: TakeResult = closed ? .closed : .timedOut
        condition.unlock()
        return result
    }

    /// Refuses further puts and wakes every waiter; what is queued can still be taken.
    @inlinable public func close() {
        condition.lock()
        closed = true
        let waitingTakers = ring.isEmpty ? takers.map(\.continuation) : []
        if ring.isEmpty { takers.removeAll() }
        let waitingPutters = putters.map(\.continuation)
        putters.removeAll()
        condition.broadcast()
        condition.unlock()
        for taker in waitingTakers { taker.resume(returning: nil) }
        for putter in waitingPutters { putter.resume() }
    }

    // MARK: Internals (called with the lock held)

    @inlinable func newWaiterID() -> UInt64 {
        locked {
            nextWaiterID += 1
            return nextWaiterID
        }
    }

    @inlinable func fits(_ cost: Int) -> Bool { used == 0 || used + cost <= capacity }

    /// Appends, or hands the item straight to a waiting task (returned, to be resumed after unlocking).
    @inlinable func append(_ item: Element, cost: Int) -> CheckedContinuation<Element?, Never>? {
        if !takers.isEmpty {
            return takers.removeFirst().continuation
        }
        ring.append((item, cost))
        used += cost
        condition.broadcast()
        return nil
    }

    /// Frees capacity and returns the waiting tasks, which check again whether their item fits now.
    @inlinable func release(_ cost: Int) -> [CheckedContinuation<Void, Never>] {
        used -= cost
        condition.broadcast()
        let wake = putters.map(\.continuation)
        putters.removeAll()
        return wake
    }

    @inlinable func resumeTaker(id: UInt64) {
        condition.lock()
        let index = takers.firstIndex { $0.id == id }
        let taker = index.map { takers.remove(at: $0).continuation }
        condition.unlock()
        taker?.resume(returning: nil)
    }

    @inlinable func resumePutter(id: UInt64) {
        condition.lock()
        let index = putters.firstIndex { $0.id == id }
        let putter = index.map { putters.remove(at: $0).continuation }
        condition.unlock()
        putter?.resume()
    }

    @inlinable func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }
}

extension BoundedQueue: AsyncSequence {
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let queue: BoundedQueue
        @usableFromInline init(queue: BoundedQueue) { self.queue = queue }
        @inlinable public mutating func next() async -> Element? { await queue.take() }
    }

    @inlinable public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: self) }
}

/// A growable ring buffer: O(1) append and pop at the front (`Array.removeFirst` is O(n)).
///
/// Inlinable, like `BoundedQueue`, so that both are specialised for the element type in the module that uses
/// them: unspecialised, every call looked up the generic and tuple type metadata at run time (1.5 % of a live
/// agent's CPU during a flood).
public struct Ring<Element> {
    @usableFromInline var storage: [Element?]
    @usableFromInline var head = 0
    @usableFromInline var stored = 0

    @inlinable public var count: Int { stored }

    @inlinable public init(minimumCapacity: Int) {
        storage = Array(repeating: nil, count: max(4, minimumCapacity))
    }

    @inlinable public var isEmpty: Bool { count == 0 }
    @inlinable public var first: Element? { isEmpty ? nil : storage[head] }

    @inlinable public mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        stored += 1
    }

    @inlinable public mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        stored -= 1
        return element
    }

    /// Every element, oldest first, removing them.
    @inlinable public mutating func removeAll() -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(count)
        while let element = popFirst() { out.append(element) }
        return out
    }

    @inlinable public mutating func grow() {
        var bigger: [Element?] = Array(repeating: nil, count: storage.count * 2)
        for i in 0..<count { bigger[i] = storage[(head + i) % storage.count] }
        storage = bigger
        head = 0
    }
}

extension Ring: Sendable where Element: Sendable {}
