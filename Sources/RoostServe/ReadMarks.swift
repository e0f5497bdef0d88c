import Foundation
import RoostArchive
import RoostNotify

/// "Mark read", the one change the web view makes to the archive. It takes the path `roost read` takes: the
/// archive's writer (`ArchiveWriter`, a read-write connection of its own, opened for the request) commits
/// `conversationRead`, which moves the conversation's read mark to its newest message. SQLite's write lock
/// makes that safe beside a running agent, as it is for `roost read`. The commit waits for the disk (and for
/// the agent's batch, when one is in flight), so it runs on a worker thread; the server's thread answers when
/// it is done. The pages read the new state through their read-only connection like any other commit, so every
/// open list updates live, in this browser and in others.
final class ReadMarks {
    private let archivePath: String
    private let thread: GMainThread
    private let log: ServeLog
    private var running = 0
    /// Marks at once; more are asked to try again (each holds a writer connection).
    static let limit = 4

    init(archivePath: String, thread: GMainThread, log: ServeLog) {
        self.archivePath = archivePath
        self.thread = thread
        self.log = log
    }

    /// Marks `conversation` of `account` read and answers with `done` (on the server's thread): nil, or what failed.
    func mark(_ exchange: HTTPExchange, account: String, conversation: String, done: @escaping (String?) -> Void) {
        guard running < Self.limit else {
            exchange.setHeader("Retry-After", "2")
            return done("Other conversations are being marked read; try again.")
        }
        running += 1
        exchange.pause()
        let archivePath = self.archivePath
        let reply = OnServerThread(value: (self, exchange, done))
        let worker = Thread {
            var failure: String?
            do {
                let writer = try ArchiveWriter(path: archivePath)
                _ = try writer.commit([.conversationRead(account: account, conversation: conversation,
                                                         timestamp: Int64(Date().timeIntervalSince1970 * 1000))])
            } catch {
                failure = "\(error)"
            }
            let outcome = OnServerThread(value: failure)
            reply.value.0.thread.run {
                let (marks, exchange, done) = reply.value
                marks.running -= 1
                if let failure = outcome.value {
                    marks.log.warning("marking \(conversation) read failed: \(failure)")
                } else {
                    marks.log.info("marked \(conversation) read (account \(account))")
                }
                if !exchange.finished { done(outcome.value) }
                exchange.resume()
            }
        }
        worker.name = "roost-serve-read"
        worker.start()
    }
}
