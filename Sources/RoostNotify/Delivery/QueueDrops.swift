import RoostCore
import Synchronization

/// What a queue that keeps the newest items (the notifier's, each sink's) dropped: counted, and said in the log at the
/// first drop and at every tenfold (1, 10, 100, …), so a flood writes a handful of lines, never one per item.
final class QueueDrops: Sendable {
    private let count = Mutex(0)
    private let queue: String
    private let bound: Int
    private let log: @Sendable (LogLevel, String) -> Void

    /// `queue` names it in the log ("notifications", "sink desktop"); `bound` is how many it keeps.
    init(_ queue: String, bound: Int, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.queue = queue
        self.bound = bound
        self.log = log
    }

    /// The oldest waiting item was dropped for a new one.
    func dropped() {
        let total = count.withLock { value -> Int in
            value += 1
            return value
        }
        var mark = 1
        while mark < total { mark *= 10 }
        if mark == total {
            log(.warning, "\(queue): \(bound) notifications wait, the most kept; dropped the oldest (\(total) dropped since the start)")
        }
    }

    /// Dropped since the start.
    var total: Int { count.withLock { $0 } }
}
