public import RoostCore

/// The notification layer's public face. `post` never blocks: events go into a queue that one task
/// works through (rules, coalescing), and each sink has its own queue after that, so neither a slow
/// webhook nor a missing desktop notification server can hold up the caller (the archive ingest path).
public final class Notifier: Sendable {
    private let core: NotifierCore
    private let runners: [SinkRunner]
    private let input: AsyncStream<Input>.Continuation
    private let pump: Task<Void, Never>
    private let clock: NotifyClock
    /// What the queue dropped to keep the newest `queueBound` events (each sink's queue counts its own).
    let drops: QueueDrops
    static let queueBound = 10_000

    private enum Input: Sendable {
        case event(NotificationEvent)
        case flush(CheckedContinuation<Void, Never>)
    }

    /// - Parameters:
    ///   - actions: answers subscription requests from notification buttons; nil disables the buttons.
    ///   - statePath: a small JSON file (e.g. under the data dir) remembering the newest notified message per
    ///     account, so a catch-up after a restart does not report old messages; nil keeps it in memory.
    ///   - log: receives every log line; nothing logged contains a token or password.
    public convenience init(config: NotifyConfig, actions: (any NotificationActions)?, statePath: String? = nil,
                            log: @escaping @Sendable (LogLevel, String) -> Void, clock: NotifyClock = .system) {
        self.init(config: config, actions: actions, statePath: statePath, log: log, clock: clock, idle: .sessionBus, factory: SinkFactory())
    }

    init(config: NotifyConfig, actions: (any NotificationActions)?, statePath: String?, log: @escaping @Sendable (LogLevel, String) -> Void,
         clock: NotifyClock, idle: IdleProbe, factory: SinkFactory) {
        runners = config.sinks.map { SinkRunner(sink: factory.make($0, actions: actions, replyCommand: config.replyCommand, log: log), events: $0.events, log: log) }
        let core = NotifierCore(config: config, runners: runners, log: log, clock: clock, idle: idle, store: NotifyStateStore(path: statePath))
        self.core = core
        self.clock = clock
        drops = QueueDrops("notifications", bound: Self.queueBound, log: log)
        let (stream, input) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(Self.queueBound))
        self.input = input
        pump = Task {
            for await item in stream {
                switch item {
                case let .event(event):
                    await core.handle(event)
                case let .flush(continuation):
                    await core.flushSinks()
                    continuation.resume()
                }
            }
        }
    }

    /// Queues an event and returns at once.
    public func post(_ event: NotificationEvent) {
        enqueue(.event(event))
    }

    /// Returns once every event posted before has gone through the rules and every resulting notification
    /// has been delivered (or has failed). Coalescing windows still open are not waited for.
    public func flush() async {
        await withCheckedContinuation { enqueue(.flush($0)) }
    }

    /// Sends a test notification through every sink (or only `sink`), ignoring the rules, and reports each
    /// result. For `roost notify test`.
    public func testAllSinks(only sink: String? = nil) async -> [NotifySinkResult] {
        let chosen = runners.filter { sink == nil || $0.sink.name == sink }
        if let sink, chosen.isEmpty {
            return [NotifySinkResult(sink: sink, type: "", result: .failure(.unknownSink(sink)))]
        }
        let notification = NotificationText.test(at: clock.milliseconds)
        var results: [NotifySinkResult] = []
        for runner in chosen {
            let result: Result<Void, NotifyError>
            do throws(NotifyError) {
                try await runner.sink.deliver(notification)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            results.append(NotifySinkResult(sink: runner.sink.name, type: runner.sink.typeName, result: result))
        }
        return results
    }

    /// Delivers what is queued, sends pending e-mail digests, and stops.
    public func shutdown() async {
        await flush()
        input.finish()
        await pump.value
        await core.shutdownSinks()
    }

    private func enqueue(_ item: Input) {
        // A flush pushed out of the queue by a flood, or posted after shutdown, must still return.
        switch input.yield(item) {
        case let .dropped(.flush(continuation)): continuation.resume()
        case .dropped(.event): drops.dropped()
        case .terminated: if case let .flush(continuation) = item { continuation.resume() }
        default: break
        }
    }
}
