import Foundation
import RoostNotify
import Synchronization

/// Where account sessions post notification events. Holds the `Notifier` once the agent made it (it needs
/// the agent itself to answer friend requests from notification buttons); posts before that are dropped.
final class NotificationHub: Sendable {
    private let notifier = Mutex<Notifier?>(nil)

    func attach(_ notifier: Notifier) { self.notifier.withLock { $0 = notifier } }

    func post(_ event: NotificationEvent) {
        notifier.withLock { $0 }?.post(event)
    }

    var current: Notifier? { notifier.withLock { $0 } }
}
