import Foundation
import RoostNotify
import Synchronization

/// Where account sessions post notification events. Holds the `Notifier` once the agent made it (it needs
/// the agent itself to answer friend requests from notification buttons); posts before that are dropped.
final class NotificationHub: Sendable {
    private let notifier = Mutex<Notifier?>(nil)
    private let files = Mutex<FileDownloadWorker?>(nil)
    /// Which watches (`[watch NAME]`, `highlight_words`) the sessions' new messages match.
    let watches = WatchEvaluator()
    /// How long a message sharing a picture waits for the file before it is notified without it.
    static let pictureWait = Duration.seconds(8)

    func attach(_ notifier: Notifier) { self.notifier.withLock { $0 = notifier } }

    func attach(_ files: FileDownloadWorker) { self.files.withLock { $0 = files } }

    func post(_ event: NotificationEvent) {
        guard let notifier = notifier.withLock({ $0 }) else { return }
        if case .message(var message) = event, let id = message.pictureMessageID, let files = files.withLock({ $0 }) {
            // Show the picture itself, and its size where the message gave none, when it arrives soon enough; the
            // notification never waits longer.
            Task {
                let stored = await files.storedPicture(ofMessage: id, timeout: Self.pictureWait)
                message.imagePath = stored?.localPath
                if message.pictureSizeAwaited, let size = stored?.size { message.body += NotificationTranslator.sizeSuffix(size) }
                notifier.post(.message(message))
            }
            return
        }
        notifier.post(event)
    }

    var current: Notifier? { notifier.withLock { $0 } }
}
