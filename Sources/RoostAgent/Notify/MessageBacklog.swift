import RoostNotify
import Synchronization

/// Messages waiting for the catch-up summary; filled by the session as the archive writer's "committed" messages
/// arrive, taken by the catch-up.
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
