package import Foundation
import Synchronization

/// The end of a thread, awaited by whoever stops it (the design's "join its threads, then free"): the thread
/// calls `ended()` as its last act, `wait` returns once it has. `started()` arms it for a thread about to start.
/// Used by the control server's acceptor and the archive-change watcher.
package final class ThreadEnd: Sendable {
    private let condition = NSCondition()
    private let running: Mutex<Bool>

    package init(running: Bool = false) {
        self.running = Mutex(running)
    }

    package func started() {
        running.withLock { $0 = true }
    }

    package func ended() {
        condition.lock()
        running.withLock { $0 = false }
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the thread has ended by `deadline` (nil: waits for it; at once when it never started).
    @discardableResult
    package func wait(until deadline: Date? = nil) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while running.withLock({ $0 }) {
            // (`wait(until: .distantFuture)` traps in Foundation on Linux: no deadline is a plain wait.)
            guard let deadline else { condition.wait(); continue }
            if !condition.wait(until: deadline) { return !running.withLock { $0 } }
        }
        return true
    }
}
