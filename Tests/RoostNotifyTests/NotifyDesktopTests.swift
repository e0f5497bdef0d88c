import Foundation
import RoostTestSupport
import Synchronization
import Testing
import RoostCore
@testable import RoostNotify

/// One private D-Bus session bus for the whole test process: GLib and libnotify keep one connection to
/// "the" session bus per process, so every desktop test shares it (and runs serialized).
enum PrivateSessionBus {
    /// The bus's address; throws (each test that needs it fails) when dbus-daemon cannot be started.
    static func address() throws -> String { try started.get() }

    private static let started: Result<String, any Error> = Result {
        try TestRequirement.check(.tool("/usr/bin/dbus-daemon"), .tool("/usr/bin/gdbus"))
        let daemon = try BackgroundProcess(["/usr/bin/dbus-daemon", "--session", "--nofork", "--print-address=1"])
        let address = daemon.firstLine()
        guard address.hasPrefix("unix:") else { throw RequirementMissing(missing: ["a session bus from dbus-daemon (it printed \"\(address)\")"]) }
        setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
        keepAlive = daemon
        return address
    }

    nonisolated(unsafe) private static var keepAlive: BackgroundProcess?

    static func nameHasOwner(_ name: String) -> Bool {
        NotifyFixtures.run(["/usr/bin/gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                            "--method", "org.freedesktop.DBus.NameHasOwner", name]).output.contains("true")
    }
}

/// python-dbusmock's notification daemon on the private bus, its call log read back as JSON.
final class MockNotificationServer {
    private let process: BackgroundProcess

    init(capabilities: String = "body body-markup icon-static") async throws {
        _ = try PrivateSessionBus.address()
        process = try BackgroundProcess([NotifyFixtures.python, "-m", "dbusmock", "--session", "-t", "notification_daemon",
                                         "-p", "{\"capabilities\": \"\(capabilities)\"}"])
        let up = await NotifyFixtures.eventually(30) { PrivateSessionBus.nameHasOwner("org.freedesktop.Notifications") }
        try #require(up, "dbusmock did not come up")
    }

    func calls(_ method: String) -> [[Any]] {
        let output = NotifyFixtures.run([NotifyFixtures.python, NotifyFixtures.path("dbusmock_calls.py")]).output
        guard let list = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]] else { return [] }
        return list.filter { $0["method"] as? String == method }.compactMap { $0["args"] as? [Any] }
    }

    func emitActionInvoked(id: Int, action: String) {
        NotifyFixtures.run(["/usr/bin/gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
                            "--object-path", "/org/freedesktop/Notifications", "--method", "org.freedesktop.DBus.Mock.EmitSignal",
                            "org.freedesktop.Notifications", "ActionInvoked", "us", "[<uint32 \(id)>, <'\(action)'>]"])
    }

    func stop() async {
        process.stop()
        _ = await NotifyFixtures.eventually(10) { !PrivateSessionBus.nameHasOwner("org.freedesktop.Notifications") }
    }
}

@Suite("Notify desktop sink (libnotify on a private D-Bus with dbusmock)", .serialized)
struct NotifyDesktopTests {
    private func desktopNotifier(_ notify: [String: String], actions: (any NotificationActions)? = nil, log: LogCollector = LogCollector(),
                                 clock: NotifyClock = .system, idle: IdleProbe = IdleProbe { nil }) throws -> Notifier {
        _ = try PrivateSessionBus.address()
        let config = NotifyFixtures.config(notify)
        return Notifier(config: config, actions: actions, statePath: nil, log: log.log, clock: clock, idle: idle, factory: SinkFactory())
    }

    @Test func messageShowsNameEscapedBodyAndAvatar() async throws {
        let server = try await MockNotificationServer()
        let notifier = try desktopNotifier(["when": "always"])
        notifier.post(.message(NotifyFixtures.message("<b>hi</b> & \"you\"", avatar: "/tmp/roost-avatars/bob.png")))
        await notifier.flush()
        let notify = try #require(server.calls("Notify").first)
        #expect(notify[0] as? String == "Roost")
        #expect(notify[1] as? Int == 0)
        #expect(notify[2] as? String == "/tmp/roost-avatars/bob.png")
        #expect(notify[3] as? String == "Bob Example")
        #expect(notify[4] as? String == "&lt;b&gt;hi&lt;/b&gt; &amp; &quot;you&quot;")
        #expect((notify[6] as? [String: Any])?["category"] as? String == "im.received")
        await notifier.shutdown()
        await server.stop()
    }

    /// A name someone chose with a right-to-left override ("eve\u{202E}nimda" reads "eveadmin") shows the control as
    /// an escape in the notification's title (issue 29).
    @Test func bidirectionalControlsInNamesAreShownNotObeyed() async throws {
        let server = try await MockNotificationServer()
        let notifier = try desktopNotifier(["when": "always"])
        notifier.post(.message(NotifyFixtures.message("hello", name: "eve\u{202E}nimda")))
        notifier.post(.message(NotifyFixtures.message("hi", from: "mallory@example.org", name: "mallory\u{2067}x")))
        await notifier.flush()
        let titles = server.calls("Notify").compactMap { $0[3] as? String }
        #expect(titles.contains("eve\\u{202e}nimda"), "\(titles)")
        #expect(titles.contains("mallory\\u{2067}x"), "\(titles)")
        #expect(!titles.joined().unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
        await notifier.shutdown()
        await server.stop()
    }

    @Test func plainBodyWhenTheServerHasNoMarkup() async throws {
        let server = try await MockNotificationServer(capabilities: "body")
        let notifier = try desktopNotifier(["when": "always"])
        notifier.post(.message(NotifyFixtures.message("a < b")))
        await notifier.flush()
        #expect(server.calls("Notify").first?[4] as? String == "a < b")
        await notifier.shutdown()
        await server.stop()
    }

    @Test func coalescedMessagesReplaceOneNotificationAndReadClosesIt() async throws {
        let server = try await MockNotificationServer()
        // The window ends when the test says so: a loaded machine may take longer than its second between two posts.
        let gate = WindowGate()
        let notifier = try desktopNotifier(["when": "always", "coalesce_seconds": "1"], clock: gate.clock)
        for n in 1...3 { notifier.post(.message(NotifyFixtures.message("message \(n)"))) }
        await notifier.flush()
        // The first message is shown at once, the other two when the window ends.
        #expect(server.calls("Notify").count == 1)
        gate.endWindows()
        #expect(await NotifyFixtures.eventually(30) { server.calls("Notify").count >= 2 })
        await notifier.flush()
        let calls = server.calls("Notify")
        #expect(calls.count == 2)
        #expect(calls.first?[1] as? Int == 0)
        #expect(calls.last?[1] as? Int == 1)
        #expect(calls.last?[4] as? String == "3 new messages\nmessage 3")
        notifier.post(.conversationRead(account: "alice@example.org", conversation: "bob@example.org"))
        await notifier.flush()
        #expect(server.calls("CloseNotification").first?.first as? Int == 1)
        await notifier.shutdown()
        await server.stop()
    }

    @Test func friendRequestHasActionsAndPressingAcceptAnswers() async throws {
        let server = try await MockNotificationServer(capabilities: "body body-markup actions")
        let actions = RecordingActions()
        let notifier = try desktopNotifier(["when": "always"], actions: actions)
        notifier.post(.subscriptionRequest(account: "alice@example.org", from: "eve@example.net", displayName: "Eve", text: nil))
        await notifier.flush()
        let notify = try #require(server.calls("Notify").first)
        #expect(notify[5] as? [String] == ["accept", "Accept", "deny", "Deny"])
        #expect((notify[4] as? String)?.contains("roost requests") == false)
        server.emitActionInvoked(id: 1, action: "accept")
        let answered = await NotifyFixtures.eventually(30) { !actions.recorded.isEmpty }
        #expect(answered)
        #expect(actions.recorded.first?.jid == "eve@example.net")
        #expect(actions.recorded.first?.accept == true)
        await notifier.shutdown()
        await server.stop()
    }

    @Test func friendRequestWithoutActionsNamesTheCommands() async throws {
        let server = try await MockNotificationServer(capabilities: "body")
        let notifier = try desktopNotifier(["when": "always"], actions: RecordingActions())
        notifier.post(.subscriptionRequest(account: "alice@example.org", from: "eve@example.net", displayName: nil, text: nil))
        await notifier.flush()
        let notify = try #require(server.calls("Notify").first)
        #expect(notify[5] as? [String] == [])
        #expect((notify[4] as? String)?.contains("roost requests accept eve@example.net") == true)
        await notifier.shutdown()
        await server.stop()
    }

    @Test func awayRulesSuppressWhileAnotherResourceIsAvailable() async throws {
        let server = try await MockNotificationServer()
        let log = LogCollector()
        let notifier = try desktopNotifier(["coalesce_seconds": "0"], log: log)
        notifier.post(.ownPresence(account: "alice@example.org", resource: "desktop-client", available: true, show: nil))
        notifier.post(.message(NotifyFixtures.message("seen at the other client")))
        await notifier.flush()
        #expect(server.calls("Notify").isEmpty)
        #expect(log.count(.debug, containing: "desktop-client available") == 1)
        notifier.post(.ownPresence(account: "alice@example.org", resource: "desktop-client", available: false, show: nil))
        notifier.post(.message(NotifyFixtures.message("now away")))
        await notifier.flush()
        #expect(server.calls("Notify").count == 1)
        await notifier.shutdown()
        await server.stop()
    }

    @Test func idleTimeComesFromTheMutterIdleMonitor() async throws {
        _ = try PrivateSessionBus.address()
        let monitor = try BackgroundProcess([NotifyFixtures.python, "-m", "dbusmock", "--session", "org.gnome.Mutter.IdleMonitor",
                                             "/org/gnome/Mutter/IdleMonitor/Core", "org.gnome.Mutter.IdleMonitor"])
        defer { monitor.stop() }
        #expect(await NotifyFixtures.eventually(10) { PrivateSessionBus.nameHasOwner("org.gnome.Mutter.IdleMonitor") })
        NotifyFixtures.run(["/usr/bin/gdbus", "call", "--session", "--dest", "org.gnome.Mutter.IdleMonitor", "--object-path",
                            "/org/gnome/Mutter/IdleMonitor/Core", "--method", "org.freedesktop.DBus.Mock.AddMethod",
                            "org.gnome.Mutter.IdleMonitor", "GetIdletime", "", "t", "ret = 600000"])
        #expect(await IdleProbe.sessionBus.query() == 600)
    }

    @Test func catchUpOf500MessagesShowsOneSummary() async throws {
        let server = try await MockNotificationServer()
        let notifier = try desktopNotifier([:])
        let start = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        let messages = (0..<500).map { NotifyFixtures.message("m\($0)", from: "c\($0 % 3)@example.org", name: "C\($0 % 3)", at: start + Int64($0)) }
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: messages))
        await notifier.flush()
        let calls = server.calls("Notify")
        #expect(calls.count == 1)
        #expect((calls.first?[4] as? String)?.hasPrefix("500 messages from 3 contacts while you were away") == true)
        await notifier.shutdown()
        await server.stop()
    }

    /// How fast `post` returns without a server is measured by `roost-bench notify`, not asserted here.
    @Test func withoutANotificationServerEveryPostIsHandledAndWarnsOnce() async throws {
        let log = LogCollector()
        let notifier = try desktopNotifier(["when": "always", "coalesce_seconds": "0"], log: log)
        #expect(!PrivateSessionBus.nameHasOwner("org.freedesktop.Notifications"))
        for n in 0..<1000 { notifier.post(.message(NotifyFixtures.message("m\(n)", from: "c\(n % 50)@example.org"))) }
        await notifier.flush()
        #expect(log.count(.warning, containing: "no desktop notification server") == 1)
        let results = await notifier.testAllSinks()
        #expect(results.count == 1)
        if case .failure(.noNotificationServer) = results.first?.result {} else { Issue.record("expected noNotificationServer, got \(String(describing: results.first?.result))") }
        await notifier.shutdown()
    }
}

/// The GLib thread's queue is bounded for callers that stop waiting (the desktop sink after `timeout_seconds`): a
/// thread stuck in a C call — libnotify waiting up to 25 s for a server that hangs — collects no more than the limit.
@Suite("GLib thread queue")
struct GMainThreadQueueTests {
    @Test func workPastTheLimitIsRefusedUntilTheThreadRunsAgain() async throws {
        let thread = GMainThread(name: "roost-test-glib")
        let stuck = DispatchSemaphore(value: 0)
        let ran = Mutex(0)
        thread.run { stuck.wait() }
        // The stuck work counts until it ends: two more fit under a limit of 3, the third does not.
        #expect(thread.run(ifFewerThan: 3) { ran.withLock { $0 += 1 } })
        #expect(thread.run(ifFewerThan: 3) { ran.withLock { $0 += 1 } })
        #expect(!thread.run(ifFewerThan: 3) { ran.withLock { $0 += 1 } })
        stuck.signal()
        try await waitUntil("the queued work ran", timeout: .seconds(10)) { ran.withLock { $0 } == 2 }
        #expect(thread.run(ifFewerThan: 3) { ran.withLock { $0 += 1 } })
        try await waitUntil("the work queued after it ran", timeout: .seconds(10)) { ran.withLock { $0 } == 3 }
    }
}
