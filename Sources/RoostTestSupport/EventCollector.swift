public import RoostXMPP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Collects a client's events in the background so tests can wait for a particular one.
public final class EventCollector: Sendable {
    private final class Store: Sendable {
        let items = Mutex<[ClientEvent]>([])
    }
    private let store = Store()
    private let task: Task<Void, Never>

    public init(_ client: XMPPClient, autoAcknowledge: Bool = true) {
        let store = self.store
        task = Task {
            for await event in client.events {
                if autoAcknowledge, case .stanza(let s) = event { client.acknowledge(through: s.sequence) }
                store.items.withLock { $0.append(event) }
            }
        }
    }

    deinit { task.cancel() }

    public var events: [ClientEvent] { store.items.withLock { $0 } }

    public var stanzas: [Element] {
        events.compactMap { if case .stanza(let s) = $0 { s.element } else { nil } }
    }

    /// Waits until `predicate` holds for some stanza seen so far, up to `timeout`.
    public func waitForStanza(timeout: Duration = .seconds(30), _ predicate: (Element) -> Bool) async throws -> Element {
        var match: Element?
        try await waitUntil("a matching stanza", timeout: timeout, every: .milliseconds(20), detail: {
            "the last ones seen:\n  " + stanzas.suffix(8).map { String(XMLSerializer.serialize($0).prefix(300)) }.joined(separator: "\n  ")
        }) {
            match = stanzas.first(where: predicate)
            return match != nil
        }
        return match!
    }

    public func waitForEvent(timeout: Duration = .seconds(30), _ predicate: (ClientEvent) -> Bool) async throws -> ClientEvent {
        var match: ClientEvent?
        try await waitUntil("a matching event", timeout: timeout, every: .milliseconds(20)) {
            match = events.first(where: predicate)
            return match != nil
        }
        return match!
    }
}

public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }

    /// What `waitUntil` throws: what was awaited, and `detail` (a log's tail) when there is one.
    static func after(_ timeout: Duration, _ what: String, _ detail: String) -> WaitTimedOut {
        WaitTimedOut(what: detail.isEmpty ? what : "\(what) within \(timeout)\n\(detail)")
    }
}

/// Checks `condition` every `interval` (100 ms; more for a condition that starts a process) until it holds, or
/// throws after `timeout`, saying what was awaited and `detail` (a log's tail): waiting for a state (a row count, a
/// line in a log, a command's answer) instead of sleeping and hoping. The suite's one way to wait for a condition;
/// `waitUntilBlocking` is the same for code that cannot suspend.
public func waitUntil(_ what: String, timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(100),
                      detail: () -> String = { "" }, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw WaitTimedOut.after(timeout, what, detail()) }
        try await Task.sleep(for: interval)
    }
}

/// `waitUntil` for synchronous callers: blocks the calling thread between checks (never call it on the cooperative
/// pool; `offPool` runs it on a thread of its own).
public func waitUntilBlocking(_ what: String, timeout: Duration = .seconds(60), every interval: Duration = .milliseconds(100),
                              detail: () -> String = { "" }, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try condition() { return }
        guard ContinuousClock.now < deadline else { throw WaitTimedOut.after(timeout, what, detail()) }
        usleep(UInt32(clamping: Int(interval / .microseconds(1))))
    }
}
