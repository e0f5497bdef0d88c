import RoostNotify
import Synchronization

/// Messages waiting for the catch-up summary; filled by the session as the archive writer's "committed" messages
/// arrive, taken by the catch-up.
///
/// Bounded: at most `limit` wait, the oldest beyond it dropped and counted (the summary then covers the newest, and
/// the log says of how many); and kept small per message: the summary counts messages per conversation and looks at who wrote, when and
/// whether the user was mentioned — never at a body or a picture, which are dropped here (a 50 000-message catch-up
/// once held every body until its end).
final class MessageBacklog: Sendable {
    /// At most this many wait (a few MB): beyond, the oldest are dropped and counted, and the summary covers the newest.
    static let limit = 20_000
    private let items = Mutex<(kept: [IncomingMessage], dropped: Int)>(([], 0))

    func add(_ messages: [IncomingMessage]) {
        guard !messages.isEmpty else { return }
        let summarised = messages.map { message in
            var kept = message
            kept.body = ""
            kept.avatarPath = nil
            kept.imagePath = nil
            return kept
        }
        items.withLock { items in
            items.kept.append(contentsOf: summarised)
            let over = items.kept.count - Self.limit
            if over > 0 {
                items.kept.removeFirst(over)
                items.dropped += over
            }
        }
    }

    /// The messages waiting, and how many older ones were dropped beyond `limit`; empties the backlog.
    func take() -> (messages: [IncomingMessage], dropped: Int) {
        items.withLock { items in
            defer { items = ([], 0) }
            return (items.kept, items.dropped)
        }
    }
}
