public import RoostCore
import Foundation
import RoostArchive

/// `roost files fetch`: download the named attachments now, whoever sent them. Runs in the agent
/// (control command `files.fetch`, so its worker and policy do the work) or, when no agent runs, with a
/// worker of the command's own.
public struct FileFetchRequest: Codable, Sendable {
    public var ids: [Int64]

    public init(ids: [Int64]) { self.ids = ids }

    public static let command = "files.fetch"

    public struct Result: Codable, Sendable, Equatable {
        public var id: Int64
        /// The attachment's state afterwards (`stored`, `failed:http-404`, …); nil when it no longer exists.
        public var state: String?
    }

    func run(on worker: FileDownloadWorker) async -> [Result] {
        let states = await worker.fetch(ids)
        return ids.map { Result(id: $0, state: states[$0].flatMap { $0?.rawValue }) }
    }

    /// Without an agent: a worker of its own on the archive, stopped when done.
    public func runWithoutAgent(config: RoostConfig, log: Logger) async throws(ActionFailure) -> [Result] {
        let writer: ArchiveWriter
        let worker: FileDownloadWorker
        do {
            writer = try ArchiveWriter(path: config.archivePath, durability: .full, log: log)
            worker = try FileDownloadWorker(writer: writer, settings: config.files, accounts: config.accounts, log: log)
        } catch {
            throw ActionFailure(.internalError, "could not open the archive \(config.archivePath): \(error)")
        }
        worker.start()
        let results = await run(on: worker)
        await worker.stop()
        await writer.drainAndStop()
        return results
    }
}
