import Foundation
public import RoostArchive

/// Where an action records what it did (an outgoing message, an answered request, a fetched vCard):
/// the same group-commit writer the agent archives incoming stanzas with.
public struct ActionArchive: Sendable {
    private let writer: ArchiveWriter?
    /// Told the attachment rows a record added that wait for a download, once they are committed.
    private let downloads: FileDownloadWorker?

    public init(writer: ArchiveWriter?, downloads: FileDownloadWorker? = nil) {
        self.writer = writer
        self.downloads = downloads
    }

    /// Nothing is recorded (registration of an account the archive does not serve).
    public static let none = ActionArchive(writer: nil)

    /// Commits `events` and returns once they are on disk.
    public func record(_ events: [ArchiveEvent]) async throws(ActionFailure) {
        guard let writer, !events.isEmpty else { return }
        switch await writer.commit(events) {
        case .stored(_, let newDownloads):
            if !newDownloads.isEmpty { downloads?.enqueue(newDownloads) }
        case .refused(let error):
            throw ActionFailure(.internalError, "the archive refused the record: \(error)")
        case .abandoned:
            throw ActionFailure(.internalError, "the archive is closing and could not record it")
        }
    }
}
