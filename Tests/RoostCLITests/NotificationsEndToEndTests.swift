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
        // The server archive stamps whole seconds; "newer than the last notification" needs the next second.
        try await Task.sleep(for: .milliseconds(1100))
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

/// A notification server of one test's own (a private session bus with python3-dbusmock), so the ids of its
/// notifications are known and ActionInvoked reaches only this test's agent.
final class PrivateNotificationServer: @unchecked Sendable {
    let bus: RunningRoost
    let mock: RunningRoost
    let address: String

    init() throws {
        bus = try RoostBinary.startProgram("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        try bus.waitForLog("unix:", timeout: 10)
        address = bus.stderrSoFar.split(separator: "\n").first.map(String.init) ?? ""
        mock = try RoostBinary.startProgram("/usr/bin/python3", ["-m", "dbusmock", "--session", "-t", "notification_daemon",
                                                                 "-p", "{\"capabilities\": \"actions body body-markup icon-static\"}"],
                                            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !gdbus(["--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                         "--method", "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.Notifications"]).contains("true") {
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    deinit {
        mock.stop(signal: SIGTERM, timeout: 5)
        bus.stop(signal: SIGTERM, timeout: 5)
    }

    /// The mock's call log (method names and arguments, as gdbus prints them).
    var calls: String {
        gdbus(["--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
               "--method", "org.freedesktop.DBus.Mock.GetCalls"])
    }

    func invokeAction(id: Int, _ action: String) {
        _ = gdbus(["--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
                   "--method", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.Notifications", "ActionInvoked", "us",
                   "[<uint32 \(id)>, <'\(action)'>]"])
    }

    func gdbus(_ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gdbus")
        process.arguments = ["call", "--address", address] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try? process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite("End to end: answering a friend request from its notification",
       .enabled(if: TestServer.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus")))
struct NotificationActionEndToEndTests {
    @Test func acceptButtonAnswersTheRequestOnTheServer() async throws {
        let server = try TestServer.require()
        let notifications = try PrivateNotificationServer()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (carol, _, _) = try await server.registeredClient("carol")
        _ = try await carol.request(Roster.getRequest())
        let carolEvents = EventCollector(carol)
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")
        try carol.send(Presence(type: .subscribe, to: alice, status: "hi"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !notifications.calls.contains("'accept'") { try await Task.sleep(for: .milliseconds(200)) }
        #expect(notifications.calls.contains("'Accept'"), "no notification with actions: \(notifications.calls)\n\(roost.stderrSoFar)")
        // The request is the first notification on this server: id 1.
        notifications.invokeAction(id: 1, "accept")
        let answer = try await carolEvents.waitForStanza { $0.name == "presence" && Presence($0).type == .subscribed }
        #expect(Presence(answer).from?.bare == alice)
        // The answer is archived: the request is no longer pending.
        try await Task.sleep(for: .milliseconds(500))
        let pending = try RoostBinary.run(["requests", "--config", config, "--json"])
        #expect(!pending.stdout.contains("carol-"), "\(pending.stdout)")
        await carol.disconnect()
    }
}

@Suite("End to end: notifications show the contact's vCard name and avatar",
       .enabled(if: TestServer.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus")))
struct NotificationAvatarEndToEndTests {
    @Test func avatarFromThePresenceHashIsFetchedAndShown() async throws {
        let server = try TestServer.require()
        let notifications = try PrivateNotificationServer()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bob, _, _) = try await server.registeredClient("bob")
        // Bob publishes a vCard with a nickname and a photo, and announces its hash (XEP-0153).
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(7), count: 64))
        _ = try await bob.request(VCard.publishRequest(VCard(fullName: "Robert Example", nickname: "Bobby",
                                                             photo: .init(mimeType: "image/png", data: png))))
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")
        let target = try alice.with(resource: "roost")
        var presence = Presence(to: target, priority: 1)
        presence.add(VCardAvatarUpdate.element(photoHash: "0123456789abcdef0123456789abcdef01234567"))
        try bob.send(presence)
        try roost.waitForLog("cached the vCard of", timeout: 20)
        try bob.send(Message(to: target, type: .chat, body: "hello with avatar"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !notifications.calls.contains("hello with avatar") { try await Task.sleep(for: .milliseconds(200)) }
        let calls = notifications.calls
        #expect(calls.contains("'Bobby'"), "\(calls)")
        #expect(calls.contains("/avatars/"), "\(calls)")
        await bob.disconnect()
    }
}

@Suite("End to end: PEP avatars (XEP-0084) of contacts",
       .enabled(if: TestServer.isAvailable && FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus")))
struct PEPAvatarEndToEndTests {
    @Test func publishedAvatarIsFetchedAndShown() async throws {
        let server = try TestServer.require()
        let notifications = try PrivateNotificationServer()
        let dir = try TestDirectory()
        let (phone, alice, password) = try await server.registeredClient("alice", resource: "phone")
        let (bob, bobJID, _) = try await server.registeredClient("bob")
        let phoneEvents = EventCollector(phone)
        let bobEvents = EventCollector(bob)
        for c in [phone, bob] { _ = try await c.request(Roster.getRequest()) }
        // Mutual subscription: PEP notifications go to contacts subscribed to bob's presence.
        try phone.send(Presence(type: .subscribe, to: bobJID))
        _ = try await bobEvents.waitForStanza { $0.name == "presence" && Presence($0).type == .subscribe }
        try bob.send(Presence(type: .subscribed, to: alice))
        try bob.send(Presence(type: .subscribe, to: alice))
        _ = try await phoneEvents.waitForStanza { $0.name == "presence" && Presence($0).type == .subscribe }
        try phone.send(Presence(type: .subscribed, to: bobJID))
        await phone.disconnect()

        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")
        try await Task.sleep(for: .milliseconds(500))

        // Bob publishes an avatar over PEP: the data node, then the metadata that announces it.
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(9), count: 80))
        let id = try HashAlgorithm.sha1.digest(Array(png)).map { String(format: "%02x", $0) }.joined()
        func publish(_ node: String, _ payload: Element) -> IQ {
            var item = Element("item", namespace: Namespace.pubsub, attributes: [("id", id)])
            item.append(payload)
            let publish = Element("publish", namespace: Namespace.pubsub, attributes: [("node", node)], children: [.element(item)])
            return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(publish)]))
        }
        _ = try await bob.request(publish(Namespace.avatarData, Element("data", namespace: Namespace.avatarData, text: png.base64EncodedString())))
        var metadata = Element("metadata", namespace: Namespace.avatarMetadata)
        metadata.append(Element("info", namespace: Namespace.avatarMetadata,
                                attributes: [("bytes", String(png.count)), ("id", id), ("type", "image/png")]))
        _ = try await bob.request(publish(Namespace.avatarMetadata, metadata))
        try roost.waitForLog("cached the PEP avatar of", timeout: 20)

        try bob.send(Message(to: try alice.with(resource: "roost"), type: .chat, body: "pep avatar hello"))
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !notifications.calls.contains("pep avatar hello") { try await Task.sleep(for: .milliseconds(200)) }
        #expect(notifications.calls.contains("/avatars/\(id)"), "\(notifications.calls)")
        await bob.disconnect()
    }
}
