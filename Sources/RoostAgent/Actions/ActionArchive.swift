import Foundation
public import RoostArchive

/// Where an action records what it did (an outgoing message, an answered request, a fetched vCard):
/// the same group-commit pipeline the agent archives incoming stanzas with.
public struct ActionArchive: Sendable {
    private let pipeline: IngestPipeline?

    public init(pipeline: IngestPipeline?) {
        self.pipeline = pipeline
    }

    /// Nothing is recorded (registration of an account the archive does not serve).
    public static let none = ActionArchive(pipeline: nil)

    /// Commits `events` and returns once they are on disk.
    public func record(_ events: [ArchiveEvent]) async throws(ActionFailure) {
        guard let pipeline, !events.isEmpty else { return }
        let result: Result<[InsertOutcome], ArchiveError> = await withCheckedContinuation { continuation in
            pipeline.submit(events) { continuation.resume(returning: $0) }
        }
        if case .failure(let error) = result {
            throw ActionFailure(.internalError, "the action was done but could not be archived: \(error)")
        }
    }

    static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
