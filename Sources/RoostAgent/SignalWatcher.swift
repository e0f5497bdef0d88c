import Foundation

/// Turns SIGTERM and SIGINT into an async event, so shutdown runs as ordinary async code
/// (commit, goodbye, close) instead of inside a signal handler.
public final class SignalWatcher: Sendable {
    public let signals: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    public init(_ numbers: [Int32] = [SIGTERM, SIGINT]) {
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
