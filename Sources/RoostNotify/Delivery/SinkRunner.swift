import RoostCore

/// Feeds one sink from its own queue, so a slow webhook never delays the desktop or the rules.
final class SinkRunner: Sendable {
    let sink: any NotificationSink
    let events: Set<SinkEventKind>
    private let queue: AsyncStream<Job>.Continuation
    private let worker: Task<Void, Never>
    /// What the queue dropped to keep the newest `queueBound` jobs.
    let drops: QueueDrops
    static let queueBound = 500

    enum Job: Sendable {
        case deliver(OutgoingNotification)
        case flush(CheckedContinuation<Void, Never>)
    }

    init(sink: any NotificationSink, events: Set<SinkEventKind>, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.sink = sink
        self.events = events
        drops = QueueDrops("sink \(sink.name)", bound: Self.queueBound, log: log)
        let (stream, queue) = AsyncStream<Job>.makeStream(bufferingPolicy: .bufferingNewest(Self.queueBound))
        self.queue = queue
        worker = Task {
            for await job in stream {
                switch job {
                case let .deliver(notification):
                    do throws(NotifyError) {
                        try await sink.deliver(notification)
                        log(.debug, "sink \(sink.name): delivered \(notification.kind.rawValue) notification for \(LogText.quote(notification.conversation ?? notification.account))")
                    } catch {
                        switch error {
                        case .noNotificationServer, .noSessionBus, .library:
                            // The desktop sink logs these itself, once per outage.
                            log(.debug, "sink \(sink.name): \(LogText.quote(error))")
                        default:
                            log(.warning, "sink \(sink.name): \(LogText.quote(error))")
                        }
                    }
                case let .flush(continuation):
                    continuation.resume()
                }
            }
        }
    }

    /// Queues a notification if this sink takes its kind (`events =`); closes go to desktop sinks only.
    func submit(_ notification: OutgoingNotification) {
        if notification.kind == .close {
            guard sink is DesktopSink else { return }
        } else if let kind = notification.eventKind, !events.contains(kind) {
            return
        }
        if let only = notification.onlySinks, !only.contains(sink.name) { return }
        enqueue(.deliver(notification))
    }

    /// Returns once everything queued before has been delivered (or has failed).
    func flush() async {
        await withCheckedContinuation { enqueue(.flush($0)) }
    }

    func shutdown() async {
        await flush()
        queue.finish()
        await worker.value
        await sink.shutdown()
    }

    private func enqueue(_ job: Job) {
        // The queue keeps the newest 500 jobs (a dropped notification is counted and logged); a flush pushed out by a
        // flood, or queued after shutdown, must still return.
        switch queue.yield(job) {
        case let .dropped(.flush(continuation)): continuation.resume()
        case .dropped(.deliver): drops.dropped()
        case .terminated: if case let .flush(continuation) = job { continuation.resume() }
        default: break
        }
    }
}
