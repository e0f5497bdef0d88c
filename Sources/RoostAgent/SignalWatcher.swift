import Foundation

/// Turns SIGTERM, SIGINT and SIGHUP into async events, so shutdown runs as ordinary async code
/// (commit, goodbye, close) instead of inside a signal handler.
/// Unchecked Sendable: `sources` is set once in init and only cancelled in deinit.
public final class SignalWatcher: @unchecked Sendable {
    public let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Watches SIGTERM, SIGINT (stop) and SIGHUP (try again).
    public convenience init() { self.init(signals: [SIGTERM, SIGINT, SIGHUP]) }

    /// Returns once every signal is watched. libdispatch installs its own signal handler (which hands the signal
    /// to its signalfd) asynchronously, on its manager thread; until then a signal is ignored (SIG_IGN here), so
    /// a stop request sent the moment the caller says it is up (`roost serve`'s "serving …") could be lost and
    /// the process never stop. So this waits for each source's registration (bounded: a stuck libdispatch must
    /// not hang the start).
    init(signals numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        signals = stream
        var sources: [any DispatchSourceSignal] = []
        let registered = DispatchGroup()
        for number in numbers {
            // Ignored until libdispatch's handler is in place; never over that handler (a second watcher of the
            // same signal: libdispatch installs its handler once per process, and SIG_IGN would stay for good).
            var current = sigaction()
            if sigaction(number, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil {
                signal(number, SIG_IGN)
            }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(source)
        }
        _ = registered.wait(timeout: .now() + .seconds(5))
        self.sources = sources
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
