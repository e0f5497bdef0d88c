import Foundation

/// Turns SIGTERM, SIGINT and SIGHUP into async events, so shutdown runs as ordinary async code
/// (commit, goodbye, close) instead of inside a signal handler.
/// Unchecked Sendable: `sources` is set once in init and only cancelled in deinit.
public final class SignalWatcher: @unchecked Sendable {
    public let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    /// Watches SIGTERM, SIGINT (stop) and SIGHUP (try again).
    public convenience init() { self.init(signals: [SIGTERM, SIGINT, SIGHUP]) }

    init(signals numbers: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        signals = stream
        var sources: [any DispatchSourceSignal] = []
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
