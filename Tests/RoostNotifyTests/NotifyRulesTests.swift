import Foundation
import Synchronization
import Testing
@testable import RoostNotify

@Suite("Notify rules")
struct NotifyRulesTests {
    private func notifier(_ notify: [String: String], idle: Int? = nil, clock: NotifyClock = .system, log: LogCollector = LogCollector())
    -> (Notifier, RecordingSink) {
        let sink = RecordingSink(name: "rec")
        var factory = SinkFactory()
        factory.substitute = { _ in sink }
        let config = NotifyFixtures.config(notify, sinks: ["rec": ["type": "command", "command": "/bin/true"]])
        let notifier = Notifier(config: config, actions: nil, statePath: nil, log: log.log, clock: clock,
                                idle: IdleProbe { idle }, factory: factory)
        return (notifier, sink)
    }

    @Test func awayWhenNoOtherResourceIsAvailable() async {
        let log = LogCollector()
        let (notifier, sink) = notifier(["coalesce_seconds": "0"], log: log)
        notifier.post(.message(NotifyFixtures.message("one")))
        notifier.post(.ownPresence(account: "alice@example.org", resource: "laptop", available: true, show: nil))
        notifier.post(.message(NotifyFixtures.message("two")))
        notifier.post(.ownPresence(account: "alice@example.org", resource: "laptop", available: true, show: "xa"))
        notifier.post(.message(NotifyFixtures.message("three")))
        await notifier.flush()
        #expect(sink.notifications.map(\.body) == ["one", "three"])
        #expect(sink.notifications.last?.count == 2)
        #expect(log.count(.debug, containing: "you are present at another client (laptop available") == 1)
        await notifier.shutdown()
    }

    @Test func idleDesktopCountsAsAway() async {
        let (notifier, sink) = notifier(["coalesce_seconds": "0", "idle_seconds": "60"], idle: 120)
        notifier.post(.ownPresence(account: "alice@example.org", resource: "laptop", available: true, show: "chat"))
        notifier.post(.message(NotifyFixtures.message("while idle")))
        await notifier.flush()
        #expect(sink.notifications.count == 1)
        await notifier.shutdown()
    }

    @Test func recentActivityElsewhereDecidesPerConversation() async {
        let (notifier, sink) = notifier(["coalesce_seconds": "0", "recent_activity_minutes": "5"], idle: 0)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        notifier.post(.ownPresence(account: "alice@example.org", resource: "laptop", available: true, show: nil))
        notifier.post(.userActivity(account: "alice@example.org", conversation: "bob@example.org", at: now - 60_000))
        notifier.post(.message(NotifyFixtures.message("bob talks while alice chats with him")))
        notifier.post(.message(NotifyFixtures.message("carol", from: "carol@example.org", name: "Carol")))
        await notifier.flush()
        #expect(sink.notifications.map(\.name) == ["Carol"])
        await notifier.shutdown()
    }

    @Test func muteAllowContactOverridesAndGroupchat() async {
        let (notifier, sink) = notifier(["coalesce_seconds": "0", "when": "always", "mute": "spam@example.org",
                                         "contact.quiet@example.org": "never", "groupchat": "mentions"])
        notifier.post(.message(NotifyFixtures.message("x", from: "spam@example.org")))
        notifier.post(.message(NotifyFixtures.message("y", from: "quiet@example.org")))
        notifier.post(.message(NotifyFixtures.message("room chatter", from: "room@muc.example.org", groupchat: true)))
        notifier.post(.message(NotifyFixtures.message("hey alice", from: "room@muc.example.org", name: "zed", groupchat: true, mentions: true)))
        notifier.post(.message(NotifyFixtures.message("z", from: "friend@example.org", name: "Friend")))
        await notifier.flush()
        #expect(sink.notifications.map(\.title) == ["zed in room", "Friend"])
        await notifier.shutdown()

        let (allowOnly, allowed) = self.notifier(["coalesce_seconds": "0", "when": "always", "allow": "friend@example.org"])
        allowOnly.post(.message(NotifyFixtures.message("a", from: "other@example.org")))
        allowOnly.post(.message(NotifyFixtures.message("b", from: "Friend@Example.org")))
        await allowOnly.flush()
        #expect(allowed.notifications.map(\.body) == ["b"])
        await allowOnly.shutdown()
    }

    @Test func quietHoursSuppressAcrossMidnight() async {
        let clock = TestClock(ISO8601DateFormatter().date(from: "2026-01-10T23:30:00Z")!)
        let (notifier, sink) = notifier(["coalesce_seconds": "0", "when": "always", "quiet_hours": "22:00-07:00"], clock: clock.clock)
        notifier.post(.message(NotifyFixtures.message("at night")))
        await notifier.flush()
        clock.set(ISO8601DateFormatter().date(from: "2026-01-11T07:00:00Z")!)
        notifier.post(.message(NotifyFixtures.message("in the morning")))
        await notifier.flush()
        #expect(sink.notifications.map(\.body) == ["in the morning"])
        await notifier.shutdown()
    }

    @Test func coalescingKeepsOneUpdatePerWindowWithTheCount() async throws {
        // The window ends when the test says so, so the checks below are inside it however slow the machine.
        let gate = WindowGate()
        let (notifier, sink) = notifier(["coalesce_seconds": "4", "when": "always"], clock: gate.clock)
        for n in 1...5 { notifier.post(.message(NotifyFixtures.message("m\(n)"))) }
        await notifier.flush()
        // The first message at once, the others held back while the window is open.
        #expect(sink.notifications.map(\.count) == [1])
        // The window's end shows the four held back as one update.
        gate.endWindows()
        #expect(await NotifyFixtures.eventually(30) { sink.notifications.count >= 2 })
        #expect(sink.notifications.map(\.count) == [1, 5])
        #expect(sink.notifications.last?.text == "5 new messages\nm5")
        // Reading the conversation elsewhere starts the count again, at once (events are handled in order).
        notifier.post(.conversationRead(account: "alice@example.org", conversation: "bob@example.org"))
        notifier.post(.message(NotifyFixtures.message("after reading")))
        await notifier.flush()
        #expect(sink.notifications.last?.count == 1)
        await notifier.shutdown()
    }

    @Test func rateCapHoldsBackAndKeepsTheCount() async {
        // A clock that stands still: on a loaded machine a real minute could pass between the posts.
        let clock = TestClock(Date())
        let (notifier, sink) = notifier(["coalesce_seconds": "0", "when": "always", "max_per_minute": "2"], clock: clock.clock)
        for n in 1...4 { notifier.post(.message(NotifyFixtures.message("m\(n)", from: "c\(n)@example.org", name: "C\(n)"))) }
        await notifier.flush()
        #expect(sink.notifications.map(\.name) == ["C1", "C2"])
        await notifier.shutdown()
    }

    @Test func catchUpYieldsOneSummaryAndNothingOlderThanTheLastNotification() async {
        let clock = TestClock(Date())
        let (notifier, sink) = notifier(["when": "always"], clock: clock.clock)
        let start = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        let messages = (0..<500).map { n in
            NotifyFixtures.message("m\(n)", from: "c\(n % 3)@example.org", name: "Contact \(n % 3)", at: start + Int64(n))
        }
        // The catch-up comes after its messages.
        clock.advance(10)
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: messages))
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: messages))
        await notifier.flush()
        #expect(sink.notifications.count == 1)
        #expect(sink.notifications.first?.kind == .summary)
        #expect(sink.notifications.first?.text.hasPrefix("500 messages from 3 contacts while you were away") == true)
        await notifier.shutdown()
    }

    @Test func catchUpOlderThanFirstStartIsNotSummarised() async {
        let (notifier, sink) = notifier(["when": "always"])
        let old = Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: [NotifyFixtures.message("old", at: old)]))
        await notifier.flush()
        #expect(sink.notifications.isEmpty)
        await notifier.shutdown()
    }

    @Test func aFutureTimeDoesNotSilenceLaterCatchUps() async {
        // A message dated 9999 (a sender's forged stamp, believed by an older Roost) is summarised, but the "last
        // notified" mark it leaves is now, not 9999: the next catch-up still gets its summary.
        let clock = TestClock(Date())
        let (notifier, sink) = notifier(["when": "always"], clock: clock.clock)
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        clock.advance(10)
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: [NotifyFixtures.message("forged", at: 253_402_300_799_000)]))
        await notifier.flush()
        clock.advance(60)
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: [NotifyFixtures.message("later", at: started + 30_000)]))
        await notifier.flush()
        #expect(sink.notifications.map(\.kind) == [.summary, .summary])
        await notifier.shutdown()
    }

    @Test func aStateFilePoisonedWithAFutureTimeIsRepaired() async throws {
        let path = NotifyFixtures.temporaryDirectory() + "/notify-state.json"
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try Data(#"{"firstStartedMs": \#(now - 86_400_000), "lastNotifiedMs": {"alice@example.org": 253402300799000}}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        let sink = RecordingSink(name: "rec")
        var factory = SinkFactory()
        factory.substitute = { _ in sink }
        let config = NotifyFixtures.config(["when": "always"], sinks: ["rec": ["type": "command", "command": "/bin/true"]])
        let notifier = Notifier(config: config, actions: nil, statePath: path, log: { _, _ in }, clock: .system, idle: IdleProbe { nil }, factory: factory)
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: [NotifyFixtures.message("after the repair", at: now + 5000)]))
        await notifier.shutdown()
        #expect(sink.notifications.map(\.kind) == [.summary])
        let saved = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!saved.contains("253402300799000"), "\(saved)")
    }

    @Test func lastNotifiedSurvivesARestart() async throws {
        let path = NotifyFixtures.temporaryDirectory() + "/notify-state.json"
        let sink = RecordingSink(name: "rec")
        var factory = SinkFactory()
        factory.substitute = { _ in sink }
        let config = NotifyFixtures.config(["when": "always", "coalesce_seconds": "0"], sinks: ["rec": ["type": "command", "command": "/bin/true"]])
        let first = Notifier(config: config, actions: nil, statePath: path, log: { _, _ in }, clock: .system, idle: IdleProbe { nil }, factory: factory)
        let live = NotifyFixtures.message("live", at: Int64(Date().timeIntervalSince1970 * 1000) - 1000)
        first.post(.message(live))
        await first.shutdown()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let second = Notifier(config: config, actions: nil, statePath: path, log: { _, _ in }, clock: .system, idle: IdleProbe { nil }, factory: factory)
        second.post(.catchUpFinished(account: "alice@example.org", messages: [live]))
        await second.shutdown()
        #expect(sink.notifications.map(\.kind) == [.message])
    }

    @Test func subscriptionRequestCarriesTheAnswerCommands() async {
        let (notifier, sink) = notifier(["when": "always"])
        notifier.post(.subscriptionRequest(account: "alice@example.org", from: "eve@example.net", displayName: nil, text: "hi, it's Eve"))
        await notifier.flush()
        let request = sink.notifications.first
        #expect(request?.kind == .request)
        #expect(request?.fullText.contains("roost requests accept eve@example.net") == true)
        #expect(request?.fullText.contains("roost requests deny eve@example.net") == true)
        await notifier.shutdown()
    }
}

/// Issue 31, 3: a queue that keeps the newest notifications counts what it drops and says so (a handful of lines).
@Suite("Notify queues count what they drop")
struct NotifyQueueDropTests {
    /// A sink that holds every delivery until it is opened.
    final class HeldSink: NotificationSink {
        let name = "held"
        let typeName = "held"
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>], delivered: Int)>((false, [], 0))

        func deliver(_ notification: OutgoingNotification) async throws(NotifyError) {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let go = state.withLock { s -> Bool in
                    if s.open { return true }
                    s.waiting.append(c)
                    return false
                }
                if go { c.resume() }
            }
            state.withLock { $0.delivered += 1 }
        }

        func open() {
            let waiting = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }
            for c in waiting { c.resume() }
        }

        var delivered: Int { state.withLock { $0.delivered } }
    }

    @Test func aSinkQueueCountsAndLogsWhatItDrops() async {
        let log = LogCollector()
        let sink = HeldSink()
        let runner = SinkRunner(sink: sink, events: [], log: log.log)
        let sent = 1_600
        for index in 0..<sent { runner.submit(NotificationText.test(at: Int64(index))) }
        // The worker holds at most one job in the held delivery; the queue keeps the newest 500.
        let dropped = runner.drops.total
        #expect((sent - SinkRunner.queueBound - 1)...(sent - SinkRunner.queueBound) ~= dropped, "\(dropped)")
        // At the 1st, 10th, 100th and 1000th drop: four lines, each with the total so far.
        #expect(log.count(.warning, containing: "sink held: 500 notifications wait, the most kept; dropped the oldest") == 4, "\(log.all)")
        #expect(log.count(.warning, containing: "(1000 dropped since the start)") == 1, "\(log.all)")
        sink.open()
        await runner.flush()
        // (The flush itself took a place in the full queue: one more dropped.)
        #expect(sink.delivered == sent - runner.drops.total, "what was kept is delivered")
    }
}
