import Foundation
import RoostCore
import Synchronization

/// The threads the web view starts beside its own (copies of pictures, exports, mark-read commits), counted so that
/// stopping waits for every one of them: a worker's result is handed back to the server's thread, and nothing it
/// reaches there is freed before the last one has come back. Stopping is: stop accepting work (`start` refuses),
/// raise the flag the workers look at (`cancelled`: they give up what they can), wait until each has handed back
/// its result, then free (`WebServer.stop`). Nothing here is referenced `unowned` from another thread.
final class ServerWorkers {
    private let thread: GMainThread
    private var running = 0
    private(set) var stopping = false
    private var whenIdle: (() -> Void)?
    /// Raised once the server stops; workers read it from their own threads.
    let cancellation = Cancellation()

    /// A flag for other threads: true once the work is no longer wanted.
    final class Cancellation: Sendable {
        private let flag = Atomic(false)
        var isCancelled: Bool { flag.load(ordering: .acquiring) }
        func cancel() { flag.store(true, ordering: .releasing) }
    }

    init(thread: GMainThread) {
        self.thread = thread
    }

    /// Workers running now.
    var count: Int { running }

    /// Runs `work` on a thread of its own and hands its result to `done` on the server's thread (also while the
    /// server stops: `done` answers or cleans up). False, and nothing started, once the server stops.
    @discardableResult
    func start<Output>(name: String, _ work: @escaping @Sendable (Cancellation) -> Output, done: @escaping (Output) -> Void) -> Bool {
        guard !stopping else { return false }
        running += 1
        let job = Job(workers: self, done: done)
        let thread = self.thread
        let cancellation = self.cancellation
        startThread(named: name) {
            job.output = work(cancellation)
            thread.run { job.finish() }
        }
        return true
    }

    /// One worker's result on its way back: written by the worker's thread before it hands the job to the server's
    /// thread (GMainThread.run), read there.
    private final class Job<Output>: @unchecked Sendable {
        let workers: ServerWorkers
        let done: (Output) -> Void
        var output: Output?

        init(workers: ServerWorkers, done: @escaping (Output) -> Void) {
            self.workers = workers
            self.done = done
        }

        func finish() {
            if let output { done(output) }
            workers.finished()
        }
    }

    private func finished() {
        running -= 1
        if running == 0, let whenIdle {
            self.whenIdle = nil
            whenIdle()
        }
    }

    /// Refuses new work, cancels what runs, and calls `then` (on the server's thread) once every worker is back.
    func stop(then: @escaping () -> Void) {
        stopping = true
        cancellation.cancel()
        if running == 0 { return then() }
        whenIdle = then
    }
}
