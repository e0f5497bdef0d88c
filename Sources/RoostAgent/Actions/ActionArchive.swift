import Foundation
public import RoostArchive

/// Where an action records what it did (an outgoing message, an answered request, a fetched vCard): the same
/// group-commit writer the agent archives incoming stanzas with. In the agent, through the account's session
/// (`AccountSession.actionArchive`), which queues the downloads the records add; elsewhere (a one-shot login,
/// `verify`), straight to a writer.
public struct ActionArchive: Sendable {
    typealias Commit = @Sendable ([ArchiveEvent]) async throws(ActionFailure) -> Void
    private let commit: Commit?

    public init(writer: ArchiveWriter?, downloads: FileDownloadWorker? = nil) {
        guard let writer else {
            commit = nil
            return
        }
        commit = { @Sendable events throws(ActionFailure) in try await Self.commit(events, to: writer, downloads: downloads) }
    }

    /// Records through `commit` (an account session's).
    init(through commit: @escaping Commit) {
        self.commit = commit
    }

    /// Nothing is recorded (registration of an account the archive does not serve).
    public static let none = ActionArchive(writer: nil)

    /// Commits `events` and returns once they are on disk.
    public func record(_ events: [ArchiveEvent]) async throws(ActionFailure) {
        guard let commit, !events.isEmpty else { return }
        try await commit(events)
    }

    /// Commits `events` through `writer`, waiting for the outcome; the attachment rows they added that wait for a
    /// download go to `downloads`.
    static func commit(_ events: [ArchiveEvent], to writer: ArchiveWriter, downloads: FileDownloadWorker?) async throws(ActionFailure) {
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
