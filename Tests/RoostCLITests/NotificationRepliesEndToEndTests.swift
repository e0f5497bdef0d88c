import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Reply and Mark read on a message's desktop notification (issue 32, 2): `roost run` on a private session bus where
/// python3-dbusmock plays the notification server, the buttons pressed by emitting the server's signals, and the
/// contact (a slixmpp peer) receiving what Roost sent for them.
@Suite("End to end: Reply and Mark read on message notifications", .requires(.server, .tool("/usr/bin/gdbus")))
struct NotificationRepliesEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server, .tool("/usr/bin/gdbus"))
        server = try TestServer.require()
    }

    private func unread(_ config: String, _ jid: JID) throws -> Int {
        let lines = try RoostBinary.run(["status", "--config", config, "--json"]).jsonLines
        return lines.first { $0["kind"] as? String == "unread" && $0["conversation"] as? String == jid.description }?["unread"] as? Int ?? 0
    }

    /// A server with `inline-reply` (as KDE's): the reply typed into the notification (NotificationReplied) reaches the
    /// contact and is archived as sent; Mark read sends the contact a displayed marker for the newest message, clears the
    /// unread count and closes the notification.
    @Test func inlineReplyAndMarkReadReachTheContact() async throws {
        let notifications = try await PrivateNotificationServer(capabilities: "actions body inline-reply")
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let marker = "reply-\(UUID().uuidString.prefix(8).lowercased())"
        let target = try alice.with(resource: "roost")

        try await bob.send(to: target, body: "\(marker) question", id: "\(marker)-1")
        try await waitUntil("the notification of bob's message") { notifications.calls.contains("\(marker) question") }
        let calls = notifications.calls
        #expect(calls.contains("'inline-reply'") && calls.contains("'Reply'") && calls.contains("'mark-read'") && calls.contains("'Mark read'"),
                "\(calls.suffix(2000))")
        // The first notification on this server: id 1.
        notifications.emit("NotificationReplied", id: 1, "\(marker) answer")
        let reply = try await bob.message { $0["body"] == "\(marker) answer" }
        #expect(reply["from"].flatMap(JID.init(parsing:))?.bare == alice)
        try await waitUntil("the reply archived as sent") {
            try RoostBinary.run(["search", "--config", config, "--json", "is:out", "\"\(marker) answer\""]).jsonLines.count == 1
        }
        // Answered: the notification is closed.
        try await waitUntil("the notification closed") { notifications.calls.contains("CloseNotification") }

        // The next message is a new notification (id 2); Mark read on it.
        try await bob.send(to: target, body: "\(marker) second", id: "\(marker)-2")
        try await waitUntil("the notification of bob's second message") { notifications.calls.contains("\(marker) second") }
        #expect(try unread(config, bob.jid) == 1)
        let closesBefore = notifications.calls.components(separatedBy: "CloseNotification").count
        notifications.invokeAction(id: 2, "mark-read")
        let displayed = try await bob.message { $0["xml"]?.contains("displayed") == true && $0["xml"]?.contains("\(marker)-2") == true }
        #expect(displayed["from"].flatMap(JID.init(parsing:))?.bare == alice)
        try await waitUntil("bob's conversation read in the archive") { try unread(config, bob.jid) == 0 }
        try await waitUntil("the notification closed") { notifications.calls.components(separatedBy: "CloseNotification").count > closesBefore }
        await bob.stop()
    }

    /// A server without inline replies: with `reply_command`, Reply runs it (the message in ROOST_* variables, never in
    /// its arguments) and sends what it printed; a command that fails sends nothing.
    @Test func replyCommandSendsWhatItPrints() async throws {
        let notifications = try await PrivateNotificationServer(capabilities: "actions body")
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let script = try dir.write("reply.sh", "#!/bin/sh\nprintf 'got: %s\\n' \"$ROOST_BODY\"\n", mode: 0o700)
        let config = try server.roostConfig(in: dir, account: alice.description, password: password,
                                            extra: "[notify]\nreply_command = \(script)\ncoalesce_seconds = 0\n")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let marker = "cmdreply-\(UUID().uuidString.prefix(8).lowercased())"
        try await bob.send(to: try alice.with(resource: "roost"), body: "\(marker) $(touch /tmp/x) ; question")
        try await waitUntil("the notification of bob's message") { notifications.calls.contains("\(marker)") }
        let calls = notifications.calls
        #expect(calls.contains("'reply'") && calls.contains("'Reply'") && !calls.contains("'inline-reply'"), "\(calls.suffix(2000))")
        notifications.invokeAction(id: 1, "reply")
        let reply = try await bob.message { $0["body"]?.contains(marker) == true }
        #expect(reply["body"] == "got: \(marker) $(touch /tmp/x) ; question")
    }

    /// A group chat mention gets the same buttons: the inline reply goes to the room (another occupant sees it from
    /// Roost's nick), Mark read clears the room's unread count and closes the notification.
    @Test func aMentionInARoomIsAnsweredInTheRoom() async throws {
        let s = try await RoomsEndToEndTests().setUp(server)
        let notifications = try await PrivateNotificationServer(capabilities: "actions body inline-reply")
        let room = s.room("replies")
        try s.bob.run(["muc", room, "bob", "--send", "hello"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        let carol = try s.carol.start(["muc", room, "carol", "--stay", "90"])
        defer { carol.stop(signal: SIGKILL) }
        try await waitFor("carol in the room", carol) { carol.stderrSoFar.contains("\"joined\"") }
        let marker = "roomreply-\(UUID().uuidString.prefix(8).lowercased())"
        try s.bob.run(["muc", room, "bob", "--send", "Alice: \(marker) are you there?"])
        try await waitFor("the mention notified", roost) { notifications.calls.contains("\(marker) are you there?") }
        let calls = notifications.calls
        #expect(calls.contains("'inline-reply'") && calls.contains("'mark-read'"), "\(calls.suffix(2000))")
        notifications.emit("NotificationReplied", id: 1, "\(marker) here")
        try await waitFor("carol to see the reply from Alice", carol) {
            carol.stderrSoFar.split(separator: "\n").contains { $0.contains("\"body\": \"\(marker) here\"") && $0.contains("\(room)/Alice") }
        }
        try await waitFor("the notification closed", roost) { notifications.calls.contains("CloseNotification") }

        try s.bob.run(["muc", room, "bob", "--send", "Alice: \(marker) again"])
        try await waitFor("the second mention notified", roost) { notifications.calls.contains("\(marker) again") }
        let unreadBefore = try RoostBinary.run(["status", "--config", s.config, "--json"]).jsonLines
            .first { $0["kind"] as? String == "unread" && $0["conversation"] as? String == room }?["unread"] as? Int ?? 0
        #expect(unreadBefore > 0)
        notifications.invokeAction(id: 2, "mark-read")
        try await waitFor("the room read", roost) {
            try RoostBinary.run(["status", "--config", s.config, "--json"]).jsonLines
                .first { $0["kind"] as? String == "unread" && $0["conversation"] as? String == room }?["unread"] as? Int ?? 0 == 0
        }
        // The room's other occupants see the displayed marker from Roost's nick (XEP-0333 in a room).
        try await waitFor("carol to see Alice's displayed marker", carol) {
            carol.stderrSoFar.split(separator: "\n").contains { $0.contains("\"marker\": \"displayed\"") && $0.contains("\(room)/Alice") }
        }
    }
}

/// `roost notify` shows the keys of the buttons: `reply_command` and each webhook sink's `public_url`.
@Suite("roost notify shows reply_command and public_url")
struct NotifyShowsButtonKeysTests {
    @Test func rulesAndSinksNameThem() throws {
        let dir = try TestDirectory()
        let config = try dir.write("config.ini", """
            [archive]
            path = \(dir.path)/data/archive.sqlite
            [notify]
            reply_command = zenity --entry --title "Reply"
            [sink phone]
            type = webhook
            format = ntfy
            url = https://ntfy.example/topic
            public_url = https://roost.example.org
            [account alice@example.org]
            password = x

            """)
        let json = try RoostBinary.run(["notify", "--config", config, "--json"]).jsonLines
        #expect(json.first { $0["kind"] as? String == "rules" }?["reply_command"] as? String == "zenity --entry --title Reply", "\(json)")
        #expect(json.first { $0["sink"] as? String == "phone" }?["public_url"] as? String == "https://roost.example.org", "\(json)")
        let text = try RoostBinary.run(["notify", "--config", config]).stdout
        #expect(text.contains("reply with:   zenity --entry --title Reply") && text.contains("buttons act through https://roost.example.org"), "\(text)")
    }
}
