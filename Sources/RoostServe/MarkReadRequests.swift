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
final class MarkReadRequests {
    private let archivePath: String
    private let thread: GMainThread
    private let log: ServeLog
    /// Marks at once; more are asked to try again (each holds a writer connection).
    static let limit = 4

    init(archivePath: String, thread: GMainThread, log: ServeLog) {
        self.archivePath = archivePath
        self.thread = thread
        self.log = log
    }

    /// Requests waiting for their commit, by number, held by the server's thread only: the worker holds nothing
    /// of the server's but a weak reference, so whatever it drops last is never the server's to free.
    private var waiting: [Int: (exchange: HTTPExchange, conversation: String, account: String, done: (String?) -> Void)] = [:]
    private var nextRequest = 0

    private final class Weak {
        weak var marks: MarkReadRequests?
        init(_ marks: MarkReadRequests) { self.marks = marks }
    }

    /// Marks `conversation` of `account` read and answers with `done` (on the server's thread): nil, or what failed.
    func mark(_ exchange: HTTPExchange, account: String, conversation: String, done: @escaping (String?) -> Void) {
        guard waiting.count < Self.limit else {
            exchange.setHeader("Retry-After", "2")
            return done("Other conversations are being marked read; try again.")
        }
        let request = nextRequest
        nextRequest += 1
        waiting[request] = (exchange, conversation, account, done)
        exchange.pause()
        let archivePath = self.archivePath
        let thread = self.thread
        let me = OnServerThread(value: Weak(self))
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
            thread.run { me.value.marks?.finish(request, failure: outcome.value) }
        }
        worker.name = "roost-serve-read"
        worker.start()
    }

    private func finish(_ request: Int, failure: String?) {
        guard let (exchange, conversation, account, done) = waiting.removeValue(forKey: request) else { return }
        if let failure {
            log.warning("marking \(conversation) read failed: \(failure)")
        } else {
            log.info("marked \(conversation) read (account \(account))")
        }
        if !exchange.finished { done(failure) }
        exchange.resume()
    }
}
