import Foundation
import Synchronization

/// Resumes a continuation exactly once, whichever of the work and its timeout finishes first.
/// (Package-wide: the agent's file worker waits for downloads the same way.)
package final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Returns false when the other side already resumed.
    @discardableResult
    package func resume(_ value: Value) -> Bool {
        guard let continuation = continuation.withLock({ c -> CheckedContinuation<Value, Never>? in defer { c = nil }; return c }) else {
            return false
        }
        continuation.resume(returning: value)
        return true
    }
}

/// Waits for work started elsewhere (another thread, a GLib main loop) at most `seconds`. The work keeps
/// running after a timeout (a blocking C call cannot be interrupted), but nobody waits for it any more.
package enum Deadline {
    package static func race<Value: Sendable>(seconds: Int, timedOut: Value, start: (ResumeOnce<Value>) -> Void) async -> Value {
        var timer: Task<Void, Never>?
        let value = await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            let once = ResumeOnce(continuation)
            timer = Task {
                try? await Task.sleep(for: .seconds(seconds))
                once.resume(timedOut)
            }
            start(once)
        }
        timer?.cancel()
        return value
    }

    /// Runs blocking work on a thread of its own.
    package static func blocking<Value: Sendable>(seconds: Int, timedOut: Value, _ work: @escaping @Sendable () -> Value) async -> Value {
        await race(seconds: seconds, timedOut: timedOut) { once in
            let thread = Thread { once.resume(work()) }
            thread.name = "roost-notify-call"
            thread.start()
        }
    }
}

/// A value that arrives once, from any thread, for one task to await.
public final class OneShot<Value: Sendable>: Sendable {
    private let state = Mutex<(value: Value?, waiter: CheckedContinuation<Value, Never>?)>((nil, nil))

    public init() {}

    public func fulfil(_ value: Value) {
        let waiter = state.withLock { s -> CheckedContinuation<Value, Never>? in
            guard s.value == nil else { return nil }
            s.value = value
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: value)
    }

    public var value: Value {
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

/// Runs blocking work (a backup's seconds of copying, a child process to completion, a file of 100,000 lines) on a
/// thread of its own and awaits it: work that blocks the cooperative pool (two threads on two cores) stalls every
/// task of the process, and one answering on that pool (the control server) misses its deadlines.
public func offPool<T: Sendable>(name: String? = nil, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        if let name { thread.name = name }
        thread.start()
    }
}
