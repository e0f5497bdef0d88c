import RoostNotify
import Synchronization

/// Messages waiting for the catch-up summary; filled from pipeline completions (their own thread).
final class MessageBacklog: Sendable {
    private let items = Mutex<[IncomingMessage]>([])

    func add(_ messages: [IncomingMessage]) {
        guard !messages.isEmpty else { return }
        items.withLock { $0.append(contentsOf: messages) }
    }

    func take() -> [IncomingMessage] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
