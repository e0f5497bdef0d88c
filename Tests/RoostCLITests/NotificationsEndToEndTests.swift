import Foundation
import RoostCore
import Testing
import RoostArchive
import RoostTestSupport
import RoostXMPP

/// `roost run` raising desktop notifications on the private session bus that contrib/scripts/test starts,
/// where python3-dbusmock plays the notification server and logs every call to ROOST_TEST_NOTIFY_LOG. The
/// log is shared by every test: each looks only for lines naming its own contacts (unique JIDs) or marker.
/// The contacts are slixmpp peers (contrib/scripts/xmpp-peer.py).
@Suite("End to end: notifications from roost run", .requires(.server, .notificationLog))
struct NotificationsEndToEndTests {
    let server: TestServer
    let notifyLog: String

    init() throws {
        try TestRequirement.check(.server, .notificationLog)
        server = try TestServer.require()
        notifyLog = ProcessInfo.processInfo.environment["ROOST_TEST_NOTIFY_LOG"] ?? ""
    }

    /// The lines of the shared notification log that contain every one of `parts`.
    private func notifications(containing parts: String...) -> [String] { notifications(containing: parts) }

    private func waitForNotification(_ parts: String..., roost: RunningRoost) async throws {
        do {
            try await waitUntil("a notification with \(parts)") { !notifications(containing: parts).isEmpty }
        } catch {
            Issue.record("no notification containing \(parts); roost log:\n\(roost.stderrSoFar.suffix(3000))")
            throw error
        }
    }

    private func notifications(containing parts: [String]) -> [String] {
        let log = (try? String(contentsOfFile: notifyLog, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init).filter { line in parts.allSatisfy(line.contains) }
    }

    @Test func messagesRequestsAndCatchUpSummary() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let carol = try await XMPPPeer.registered(on: server, "carol")
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        var roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()

        // None of alice's other clients is online: she is away, so a live message is notified.
        let marker = "notify-\(UUID().uuidString.prefix(8))"
        try await bob.send(to: try alice.with(resource: "roost"), body: "\(marker) 你好 <b>bold</b>")
        try await waitForNotification(marker, roost: roost)

        // A friend request gets its own notification, with Accept/Deny actions.
        try await carol.presence(to: alice, type: "subscribe", status: "hi from carol")
        try await waitForNotification(carol.jid.description, roost: roost)

        // Messages that arrive while roost is down come back through catch-up as one summary.
        roost.stop(signal: SIGTERM)
        // Catch-up summarises what is newer than the last notification, and the server archive stamps whole
        // seconds: wait until the clock is in a later second than that notification.
        let notifiedSecond = Int(Date().timeIntervalSince1970)
        try await waitUntil("the next second", timeout: .seconds(3)) { Int(Date().timeIntervalSince1970) > notifiedSecond }
        // Each send returns once the server acknowledged it (XEP-0198), so all three are stored.
        for i in 1...3 { try await bob.send(to: alice, body: "while away \(i) \(marker)") }
        roost = try RoostBinary.start(["run", "--config", config, "-v"])
        try await roost.wait(for: .serverArchiveRead())
        // The summary names bob, whose account name no other test uses.
        try await waitForNotification("3 messages from", bob.jid.localpart ?? "?", roost: roost)
        #expect(notifications(containing: "while away 1 \(marker)").isEmpty, "catch-up must not notify message by message")
        await bob.stop()
        await carol.stop()
    }

    /// A picture shared as a bare upload link (no size in the message, as slixmpp, Conversations and Dino send it)
    /// is notified with its size, as README shows it: "sent a picture: NAME (SIZE)", the size the download found.
    @Test func aPictureIsNotifiedWithItsSize() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        let (bobClient, bob, bobPassword) = try await server.registeredClient("bob")
        // A contact's files are downloaded (download = contacts).
        try await FilesKit.befriend(server, aliceClient, alice, bobClient, bob)
        await aliceClient.disconnect()
        await bobClient.disconnect()
        let config = try server.roostConfig(in: dir, account: alice.description, password: password,
                                            extra: "[files]\nallow_private_addresses = true\n")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let marker = "notify-\(UUID().uuidString.prefix(8).lowercased())"
        let picture = dir.path + "/\(marker).png"
        try await FilesKit.fixture("make_png.py", [picture, "320", "200", "10", "200", "10"])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: picture)[.size] as? Int)
        try await FilesKit.peer(bob, bobPassword, ["upload", try alice.with(resource: "roost").description, picture])
        try await waitForNotification("sent a picture: \(marker).png (\(FileSize.text(Int64(size))))", roost: roost)
    }

    @Test func noNotificationServerLeavesArchivingAlone() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        // A bus address where nothing listens.
        let roost = try RoostBinary.start(["run", "--config", config, "-v"],
                                          environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.path)/no-bus"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let target = try alice.with(resource: "roost")
        for i in 1...20 { try await bob.send(to: target, body: "no bus \(i)") }
        var rows = 0
        try await waitUntil("20 archived messages") {
            rows = try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0", "bus"]).jsonLines.count
            return rows >= 20
        }
        #expect(rows == 20)
        let (status, log) = roost.stop(signal: SIGTERM)
        #expect(status == 0)
        // README: "a missing notification server is logged once".
        let warnings = log.components(separatedBy: "\n").filter { $0.contains("WARN") && ($0.contains("bus") || $0.contains("notification")) }
        #expect(warnings.count == 1, "\(warnings)")
        await bob.stop()
    }
}

/// A notification server of one test's own (a private session bus with python3-dbusmock), so the ids of its
/// notifications are known and ActionInvoked reaches only this test's agent.
final class PrivateNotificationServer: @unchecked Sendable {
    let bus: RunningRoost
    let mock: RunningRoost
    let address: String

    /// `capabilities`: what the server says it can do (GetCapabilities), e.g. with `inline-reply`.
    init(capabilities: String = "actions body body-markup icon-static") async throws {
        try TestRequirement.check(.tool("/usr/bin/dbus-daemon"), .tool("/usr/bin/gdbus"))
        bus = try RoostBinary.startProgram("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        // The address is complete once its line is.
        try await waitUntil("dbus-daemon to print its address", timeout: .seconds(10)) { [bus] in
            bus.stderrSoFar.hasPrefix("unix:") && bus.stderrSoFar.contains("\n")
        }
        address = bus.stderrSoFar.split(separator: "\n").first.map(String.init) ?? ""
        mock = try RoostBinary.startProgram("/usr/bin/python3", ["-m", "dbusmock", "--session", "-t", "notification_daemon",
                                                                 "-p", "{\"capabilities\": \"\(capabilities)\"}"],
                                            environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        let owner = { [address] in
            Self.gdbus(address, ["--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                 "--method", "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.Notifications"])
        }
        try await waitUntil("dbusmock to own org.freedesktop.Notifications", timeout: .seconds(90)) { owner().contains("true") }
    }

    deinit {
        mock.stop(signal: SIGTERM, timeout: 5)
        bus.stop(signal: SIGTERM, timeout: 5)
    }

    /// The mock's call log (method names and arguments, as gdbus prints them).
    var calls: String {
        Self.gdbus(address, ["--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
                             "--method", "org.freedesktop.DBus.Mock.GetCalls"])
    }

    func invokeAction(id: Int, _ action: String) {
        emit("ActionInvoked", id: id, action)
    }

    /// The server's `signal` (ActionInvoked, NotificationReplied: both `us`) for notification `id`.
    func emit(_ signal: String, id: Int, _ text: String) {
        _ = Self.gdbus(address, ["--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
                                 "--method", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.Notifications", signal, "us",
                                 "[<uint32 \(id)>, <'\(text)'>]"])
    }

    static func gdbus(_ address: String, _ arguments: [String]) -> String {
        do {
            let result = try RoostBinary.runProgram("/usr/bin/gdbus", ["call", "--timeout", "5", "--address", address] + arguments)
            return result.stdout + result.stderr
        } catch {
            return "gdbus could not run: \(error)"
        }
    }
}

@Suite("End to end: answering a friend request from its notification", .requires(.server, .tool("/usr/bin/gdbus")))
struct NotificationActionEndToEndTests {
    @Test func acceptButtonAnswersTheRequestOnTheServer() async throws {
        try TestRequirement.check(.server, .tool("/usr/bin/gdbus"))
        let server = try TestServer.require()
        let notifications = try await PrivateNotificationServer()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let carol = try await XMPPPeer.registered(on: server, "carol")
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        try await carol.presence(to: alice, type: "subscribe", status: "hi")
        try await waitUntil("a notification with an Accept button") { notifications.calls.contains("'accept'") }
        #expect(notifications.calls.contains("'Accept'"), "no notification with actions: \(notifications.calls)\n\(roost.stderrSoFar)")
        let requests = try RoostBinary.run(["requests", "--config", config, "--json"])
        #expect(requests.stdout.contains(carol.jid.description), "the request is pending before the button is pressed")
        // The request is the first notification on this server: id 1.
        notifications.invokeAction(id: 1, "accept")
        let answer = try await carol.presence("subscribed", from: alice)
        #expect(answer["from"].flatMap(JID.init(parsing:))?.bare == alice)
        // The answer is archived: the request is no longer pending.
        try await waitUntil("carol's request answered in the archive") {
            !(try RoostBinary.run(["requests", "--config", config, "--json"]).stdout.contains(carol.jid.description))
        }
        await carol.stop()
    }
}

@Suite("End to end: notifications show the contact's vCard name and avatar", .requires(.server, .tool("/usr/bin/gdbus")))
struct NotificationAvatarEndToEndTests {
    @Test func avatarFromThePresenceHashIsFetchedAndShown() async throws {
        try TestRequirement.check(.server, .tool("/usr/bin/gdbus"))
        let server = try TestServer.require()
        let notifications = try await PrivateNotificationServer()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        // Bob publishes a vCard with a nickname and a photo, and announces its hash (XEP-0153).
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(7), count: 64))
        try await bob.call("vcard-set", ["fullname": "Robert Example", "nickname": "Bobby", "photo_type": "image/png",
                                         "photo_base64": png.base64EncodedString()])
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let target = try alice.with(resource: "roost")
        try await bob.presence(to: target, priority: 1, photoHash: "0123456789abcdef0123456789abcdef01234567")
        try roost.waitForLog("cached the vCard of", timeout: 20)
        try await bob.send(to: target, body: "hello with avatar")
        try await waitUntil("the notification of bob's message") { notifications.calls.contains("hello with avatar") }
        let calls = notifications.calls
        #expect(calls.contains("'Bobby'"), "\(calls)")
        #expect(calls.contains("/avatars/"), "\(calls)")
        await bob.stop()
    }
}

@Suite("End to end: PEP avatars (XEP-0084) of contacts", .requires(.server, .tool("/usr/bin/gdbus")))
struct PEPAvatarEndToEndTests {
    @Test func publishedAvatarIsFetchedAndShown() async throws {
        try TestRequirement.check(.server, .tool("/usr/bin/gdbus"))
        let server = try TestServer.require()
        let notifications = try await PrivateNotificationServer()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let phone = try await XMPPPeer.start(on: server, jid: alice, password: password, resource: "phone")
        let bob = try await XMPPPeer.registered(on: server, "bob")
        // Mutual subscription: PEP notifications go to contacts subscribed to bob's presence.
        try await phone.presence(to: bob.jid, type: "subscribe")
        _ = try await bob.presence("subscribe", from: alice)
        try await bob.presence(to: alice, type: "subscribed")
        try await bob.presence(to: alice, type: "subscribe")
        _ = try await phone.presence("subscribe", from: bob.jid)
        try await phone.presence(to: bob.jid, type: "subscribed")
        await phone.stop()

        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()

        // Bob publishes an avatar over PEP: the data node, then the metadata that announces it. The server
        // notifies Roost (+notify in its caps), or sends the last item once it has learnt the caps.
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(9), count: 80))
        let id = try HashAlgorithm.sha1.digest(Array(png)).map { String(format: "%02x", $0) }.joined()
        func publish(_ node: String, _ payload: String) -> String {
            "<iq type='set'><pubsub xmlns='http://jabber.org/protocol/pubsub'><publish node='\(node)'><item id='\(id)'>\(payload)</item></publish></pubsub></iq>"
        }
        let data = try await bob.call("iq", ["xml": publish(Namespace.avatarData, "<data xmlns='\(Namespace.avatarData)'>\(png.base64EncodedString())</data>")])
        #expect(data["type"] == "result", "\(data)")
        let metadata = try await bob.call("iq", ["xml": publish(Namespace.avatarMetadata,
                                                 "<metadata xmlns='\(Namespace.avatarMetadata)'><info bytes='\(png.count)' id='\(id)' type='image/png'/></metadata>")])
        #expect(metadata["type"] == "result", "\(metadata)")
        try roost.waitForLog("cached the PEP avatar of", timeout: 20)

        try await bob.send(to: try alice.with(resource: "roost"), body: "pep avatar hello")
        try await waitUntil("the notification of bob's message") { notifications.calls.contains("pep avatar hello") }
        #expect(notifications.calls.contains("/avatars/\(id)"), "\(notifications.calls)")
        await bob.stop()
    }
}
