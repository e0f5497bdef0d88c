import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// `roost run` raising desktop notifications on the private session bus that contrib/scripts/test starts,
/// where python3-dbusmock plays the notification server and logs every call to ROOST_TEST_NOTIFY_LOG.
@Suite("End to end: notifications from roost run",
       .enabled(if: TestServer.isAvailable && ProcessInfo.processInfo.environment["ROOST_TEST_NOTIFY_LOG"] != nil))
struct NotificationsEndToEndTests {
    let server: TestServer
    let notifyLog: String

    init() throws {
        server = try TestServer.require()
        notifyLog = ProcessInfo.processInfo.environment["ROOST_TEST_NOTIFY_LOG"] ?? ""
    }

    private func waitForNotification(containing text: String, timeout: TimeInterval = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let log = try? String(contentsOfFile: notifyLog, encoding: .utf8), log.contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }

    @Test func messagesRequestsAndCatchUpSummary() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bob, _, _) = try await server.registeredClient("bob")
        let (carol, carolJID, _) = try await server.registeredClient("carol")
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        var roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")

        // None of alice's other clients is online: she is away, so a live message is notified.
        let marker = "notify-\(UUID().uuidString.prefix(8))"
        try bob.send(Message(to: try alice.with(resource: "roost"), type: .chat, body: "\(marker) 你好 <b>bold</b>"))
        #expect(waitForNotification(containing: marker), "no notification with \(marker); roost log:\n\(roost.stderrSoFar)")

        // A friend request gets its own notification, with Accept/Deny actions.
        try carol.send(Presence(type: .subscribe, to: alice, status: "hi from carol"))
        #expect(waitForNotification(containing: carolJID.description))

        // Messages that arrive while roost is down come back through catch-up as one summary.
        roost.stop(signal: SIGTERM)
        for i in 1...3 { try bob.send(Message(to: alice, type: .chat, body: "while away \(i) \(marker)")) }
        bob.requestAcknowledgement()
        try await Task.sleep(for: .milliseconds(500))
        roost = try RoostBinary.start(["run", "--config", config, "-v"])
        try roost.waitForLog("server archive read")
        #expect(waitForNotification(containing: "3 messages from"), "no catch-up summary; roost log:\n\(roost.stderrSoFar)")
        let log = (try? String(contentsOfFile: notifyLog, encoding: .utf8)) ?? ""
        #expect(!log.contains("while away 1 \(marker)"), "catch-up must not notify message by message")
        await bob.disconnect()
        await carol.disconnect()
    }

    @Test func noNotificationServerLeavesArchivingAlone() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bob, _, _) = try await server.registeredClient("bob")
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        // A bus address where nothing listens.
        let roost = try RoostBinary.start(["run", "--config", config, "-v"],
                                          environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.path)/no-bus"])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")
        let target = try alice.with(resource: "roost")
        for i in 1...20 { try bob.send(Message(to: target, type: .chat, body: "no bus \(i)")) }
        let deadline = Date().addingTimeInterval(20)
        var rows = 0
        while Date() < deadline {
            rows = try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0", "bus"]).jsonLines.count
            if rows >= 20 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(rows == 20)
        let (status, log) = roost.stop(signal: SIGTERM)
        #expect(status == 0)
        let warnings = log.components(separatedBy: "\n").filter { $0.contains("WARN") && ($0.contains("bus") || $0.contains("notification")) }
        #expect(warnings.count <= 2, "\(warnings)")
        await bob.disconnect()
    }
}
