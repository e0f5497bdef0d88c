import RoostNotify
import Synchronization

/// Messages waiting for the catch-up summary; filled by the session as the archive writer's "committed" messages
/// arrive, taken by the catch-up.
///
/// Bounded by what one catch-up reads (its pages come one at a time, each committed before the next is asked
/// for), and kept small per message: the summary counts messages per conversation and looks at who wrote, when and
/// whether the user was mentioned — never at a body or a picture, which are dropped here (a 50 000-message catch-up
/// once held every body until its end); only a message a watch matched keeps its body, to be notified on its own.
final class MessageBacklog: Sendable {
    private let items = Mutex<[IncomingMessage]>([])

    func add(_ messages: [IncomingMessage]) {
        guard !messages.isEmpty else { return }
        let summarised = messages.map { message in
            var kept = message
            if message.watches.isEmpty { kept.body = "" }
            kept.avatarPath = nil
            kept.imagePath = nil
            return kept
        }
        items.withLock { $0.append(contentsOf: summarised) }
    }

    func take() -> [IncomingMessage] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
