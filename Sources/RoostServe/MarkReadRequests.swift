import RoostCore
import Foundation
import RoostArchive

/// "Mark read", the one change the web view makes to the archive. It takes the path `roost read` takes: the
/// archive's writer (`ArchiveWriter.commitBlocking`) commits `conversationRead`, which moves the conversation's read
/// mark to its newest message. In `roost run` (`[serve]`) that is the agent's writer; `roost serve` opens one for the
/// request, and SQLite's write lock makes that safe beside an agent of another process, as it is for `roost read`.
/// The commit waits for the disk (and for the agent's batch, when one is in flight), so it runs on a worker thread;
/// the server's thread answers when it is done. The pages read the new state through their read-only connection like any other commit, so every
/// open list updates live, in this browser and in others.
final class MarkReadRequests {
    private let archivePath: String
    private let writer: ArchiveWriter?
    private let workers: ServerWorkers
    private let log: ServeLog
    /// Marks at once; more are asked to try again (each holds a writer connection).
    static let limit = 4
    private var inFlight = 0

    init(archivePath: String, writer: ArchiveWriter?, workers: ServerWorkers, log: ServeLog) {
        self.archivePath = archivePath
        self.writer = writer
        self.workers = workers
        self.log = log
    }

    /// Marks `conversation` of `account` read and answers with `done` (on the server's thread): nil, or what failed.
    /// A commit cannot be cancelled: a server that stops waits for it (it takes a moment).
    func mark(_ exchange: HTTPExchange, account: String, conversation: String, done: @escaping (String?) -> Void) {
        guard inFlight < Self.limit, !workers.stopping else {
            exchange.setHeader("Retry-After", "2")
            return done("Other conversations are being marked read; try again.")
        }
        inFlight += 1
        exchange.pause()
        let archivePath = self.archivePath
        let agentWriter = self.writer
        workers.start(name: "roost-serve-read", { _ -> String? in
            do {
                let writer = try agentWriter ?? ArchiveWriter(path: archivePath)
                _ = try writer.commitBlocking([.conversationRead(account: account, conversation: conversation,
                                                         timestamp: Timestamp.now())])
                return nil
            } catch {
                return "\(error)"
            }
        }, done: { [self] failure in
            inFlight -= 1
            if let failure {
                log.warning("marking \(conversation) read failed: \(failure)")
            } else {
                log.info("marked \(conversation) read (account \(account))")
            }
            if !exchange.finished {
                done(failure)
                exchange.resume()
            }
        })
    }
}
