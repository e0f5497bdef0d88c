public import Foundation
import Synchronization

/// The one rendezvous of the code base: a value that arrives once, from any thread, for whoever waits for it —
/// tasks (`await value`) and threads (`wait(until:)`, the end of a thread its `stop` joins). The first `fulfil`
/// wins; later ones are ignored (and say so), which is what races of work against a timeout need.
public final class OneShot<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiters: [CheckedContinuation<Value, Never>])>((nil, []))
    /// Wakes threads blocked in `wait`; taken around the change from empty to fulfilled so none misses it.
    private let condition = NSCondition()

    public init() {}

    /// Returns false when a value had already arrived (this one is dropped).
    @discardableResult
    public func fulfil(_ value: Value) -> Bool {
        condition.lock()
        let waiters = state.withLock { s -> [CheckedContinuation<Value, Never>]? in
            guard s.value == nil else { return nil }
            s.value = value
            defer { s.waiters = [] }
            return s.waiters
        }
        if waiters != nil { condition.broadcast() }
        condition.unlock()
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, once it has arrived (any number of tasks may wait).
    public var value: Value {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
                let ready = state.withLock { s -> Value? in
                    if s.value == nil { s.waiters.append(continuation) }
                    return s.value
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// Blocks the calling thread until the value arrives or `deadline` passes (nil: no deadline). For threads
    /// of their own (an acceptor, a watcher, a connection), never a task of the cooperative pool.
    @discardableResult
    public func wait(until deadline: Date? = nil) -> Value? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value = state.withLock({ $0.value }) { return value }
            // (`wait(until: .distantFuture)` traps in Foundation on Linux: no deadline is a plain wait.)
            guard let deadline else { condition.wait(); continue }
            if !condition.wait(until: deadline) { return state.withLock { $0.value } }
        }
    }
}

/// Waits for work started elsewhere (another thread, a GLib main loop) at most `seconds`. The work keeps
/// running after a timeout (a blocking C call cannot be interrupted), but nobody waits for it any more.
package enum Deadline {
    /// `start` hands the work the `OneShot` to fulfil; the timer fulfils it with `timedOut` unless the work came first.
    package static func race<Value: Sendable>(seconds: Int, timedOut: Value, start: (OneShot<Value>) -> Void) async -> Value {
        let outcome = OneShot<Value>()
        let timer = Task {
            try? await Task.sleep(for: .seconds(seconds))
            outcome.fulfil(timedOut)
        }
        start(outcome)
        let value = await outcome.value
        timer.cancel()
        return value
    }

    /// Runs blocking work on a thread of its own.
    package static func blocking<Value: Sendable>(seconds: Int, timedOut: Value, _ work: @escaping @Sendable () -> Value) async -> Value {
        await race(seconds: seconds, timedOut: timedOut) { outcome in
            startThread(named: "roost-notify-call") { outcome.fulfil(work()) }
        }
    }
}

/// Runs blocking work (a backup's seconds of copying, a child process to completion, a file of 100,000 lines) on a
/// thread of its own and awaits it: work that blocks the cooperative pool (two threads on two cores) stalls every
/// task of the process, and one answering on that pool (the control server) misses its deadlines.
public func offPool<T: Sendable>(name: String? = nil, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    let outcome = OneShot<Result<T, any Error>>()
    startThread(named: name ?? "roost.offpool") { outcome.fulfil(Result { try body() }) }
    return try await outcome.value.get()
}
