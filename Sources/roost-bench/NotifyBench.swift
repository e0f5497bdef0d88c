import RoostCore
import Foundation
import RoostNotify

/// `roost-bench notify [--events N]`: how long `Notifier.post` keeps the caller (the archive's ingest path)
/// when no desktop notification server answers on the session bus, against the same posts whose
/// notifications the rules drop (`when = never`) in the same run; and how long the desktop sink then takes
/// to give up on all of them (flush). Post must stay an enqueue: the ratio should be near 1.
enum NotifyBench {
    static func run(_ arguments: [String]) throws {
        var events = 1000
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--events": index += 1; events = Int(arguments[index]) ?? events
            default: throw BenchUsage(text: "unknown option \(arguments[index]); options: --events N")
            }
            index += 1
        }
        // A bus address where nothing listens, so the desktop sink finds no notification server.
        setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=\(NSTemporaryDirectory())roost-bench-no-bus-\(getpid())", 1)
        let dropped = measure(["when": "never"], events: events)
        let noServer = measure(["when": "always", "coalesce_seconds": "0"], events: events)
        print("roost-bench notify: \(events) message events, desktop sink, no notification server")
        print(String(format: "  post, rules drop them (baseline)   %8.2f µs per event", dropped.post / Double(events) * 1e6))
        print(String(format: "  post, no notification server       %8.2f µs per event", noServer.post / Double(events) * 1e6))
        print(String(format: "  ratio: %.2f", noServer.post / dropped.post))
        print(String(format: "  flush until every notification gave up: %.3f s", noServer.flush))
    }

    private static func measure(_ notify: [String: String], events: Int) -> (post: Double, flush: Double) {
        let (config, _) = NotifyConfig.parse(notify: notify, sinks: [:])
        let notifier = Notifier(config: config, actions: nil, log: { _, _ in })
        let started = ContinuousClock.now
        for n in 0..<events {
            let message = IncomingMessage(account: "alice@example.org", conversation: "c\(n % 50)@example.org", from: "c\(n % 50)@example.org/x",
                                          displayName: "C\(n % 50)", body: "m\(n)", isGroupchat: false, mentionsUser: false,
                                          timestamp: Timestamp.now(), avatarPath: nil)
            notifier.post(.message(message))
        }
        let posted = ContinuousClock.now
        let done = DispatchSemaphore(value: 0)
        Task {
            await notifier.flush()
            await notifier.shutdown()
            done.signal()
        }
        done.wait()
        let flushed = ContinuousClock.now
        return (seconds(posted - started), seconds(flushed - posted))
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
