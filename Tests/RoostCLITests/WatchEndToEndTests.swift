import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Watches (`[watch NAME]`, `highlight_words`) and catch-up summaries end to end: `roost run` in rooms of the test
/// Prosody, the other occupants played by slixmpp (contrib/scripts/xmpp-peer.py), notifications shown by the D-Bus
/// notification mock. Each test has its rooms, accounts and marker.
extension RoomsEndToEndTests {
    /// A test's setup, notification server, room (where bob said `first`) and marker.
    private func roomWithNotifications(_ label: String, first: (String) -> String = { _ in "hello" }) async throws
        -> (Setup, PrivateNotificationServer, String, String) {
        let s = try await setUp()
        let notifications = try await PrivateNotificationServer()
        let room = s.room(label), marker = UUID().uuidString.prefix(8).lowercased()
        try s.bob.run(["muc", room, "bob", "--send", first(marker)])
        return (s, notifications, room, marker)
    }

    /// Runs Roost until it has joined `room` and archived bob's first words there, then stops it (SIGTERM): what is
    /// said next, Roost reads after an outage. The environment that reaches the notification mock.
    private func runUntilCaughtUp(_ s: Setup, _ notifications: PrivateNotificationServer, room: String, marker: String) async throws
        -> [String: String] {
        let environment = ["DBUS_SESSION_BUS_ADDRESS": notifications.address]
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: environment)
        try await waitFor("joined and caught up", roost) {
            s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body = 'before \(marker)'") == 1
        }
        roost.stop(signal: SIGTERM)
        return environment
    }

    /// The mock's Notify calls whose arguments contain `text`.
    private func notifyCalls(_ calls: String, containing text: String) -> [Substring] {
        calls.components(separatedBy: "'Notify', ").dropFirst().map { Substring($0) }.filter { $0.contains(text) }
    }

    @Test func aWatchNotifiesAMutedRoomsMessageOnceNamingEveryWatchItMatched() async throws {
        let (s, notifications, room, marker) = try await roomWithNotifications("ops")
        try s.writeConfig(account: """
            rooms = \(room)
            [watch deploys]
            query = deploy \(marker)
            [watch bobs]
            query = from:bob \(marker)
            priority = urgent
            """, notify: "mute = \(room)")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try s.bob.run(["muc", room, "bob", "--send", "deploy \(marker) one"])
        try s.carol.run(["muc", room, "carol", "--send", "chatter \(marker) two", "--send", "deploy \(marker) three"])
        try await waitFor("the last watched message notified", roost) { notifications.calls.contains("deploy \(marker) three") }
        let calls = notifications.calls
        let roomName = room.split(separator: "@")[0]
        // Matched by both watches: one notification, titled by both.
        let both = notifyCalls(calls, containing: "deploy \(marker) one")
        #expect(both.count == 1, "\(calls.suffix(3000))")
        #expect(both.first?.contains("'bobs, deploys: bob in \(roomName)'") == true, "\(both)")
        // The highest priority of the two: urgent is the desktop's critical urgency (byte 2).
        #expect(both.first?.contains("'urgency': <byte 0x02>") == true, "\(both)")
        #expect(notifyCalls(calls, containing: "deploy \(marker) three").first?.contains("'deploys: carol in \(roomName)'") == true)
        // Muted and matching no watch: silent.
        #expect(notifyCalls(calls, containing: "chatter \(marker) two").isEmpty, "\(calls.suffix(3000))")
        #expect(s.count("SELECT count(*) FROM messages WHERE body LIKE '%\(marker)%'") == 3)

        // What the watch would have fired over the last day: the two messages, not the chatter.
        let test = try s.roost(["watch", "test", "deploys", "--days", "1"])
        #expect(test.status == 0, "\(test.stderr)")
        #expect(test.stdout.contains("deploy \(marker) one") && test.stdout.contains("deploy \(marker) three"), "\(test.stdout)")
        #expect(!test.stdout.contains("chatter \(marker) two"))
        #expect(test.stderr.contains("2 messages of the last 1 day would have notified"), "\(test.stderr)")
        let list = try s.roost(["watch", "list", "--json"]).jsonLines
        #expect(list.first { $0["watch"] as? String == "bobs" }?["priority"] as? String == "urgent", "\(list)")
        #expect(list.first { $0["watch"] as? String == "deploys" }?["query"] as? String == "deploy \(marker)")
        let notify = try s.roost(["notify"])
        #expect(notify.stdout.contains("watch:        deploys: deploy \(marker) (sink all, priority high, quiet_hours ignore)"), "\(notify.stdout)")
    }

    @Test func aWatchWhoseNameFitsNoConversationIsLoggedOnceAndHoldsNoOtherBack() async throws {
        let (s, notifications, room, marker) = try await roomWithNotifications("desk")
        try s.writeConfig(account: """
            rooms = \(room)
            [watch ghost]
            query = with:nobody\(marker) \(marker)
            [watch deploys]
            query = deploy \(marker)
            """, notify: "mute = \(room)")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try s.bob.run(["muc", room, "bob", "--send", "deploy \(marker) one", "--send", "chatter \(marker) two",
                       "--send", "deploy \(marker) three"])
        try await waitFor("the watched messages notified", roost) {
            notifications.calls.contains("deploy \(marker) one") && notifications.calls.contains("deploy \(marker) three")
        }
        let calls = notifications.calls
        #expect(notifyCalls(calls, containing: "deploy \(marker) one").first?.contains("'deploys: bob in \(room.split(separator: "@")[0])'") == true,
                "\(calls.suffix(3000))")
        #expect(notifyCalls(calls, containing: "chatter \(marker) two").isEmpty, "\(calls.suffix(3000))")
        // The watch that cannot be compiled: one warning for all the batches, none of the whole set failing.
        let log = roost.stderrSoFar
        #expect(log.components(separatedBy: "[watch ghost]").count == 2, "\(log.suffix(3000))")
        #expect(log.contains("no contact, room or conversation matches 'nobody\(marker)'"), "\(log.suffix(3000))")
        #expect(!log.contains("the watches could not be evaluated"), "\(log.suffix(3000))")
    }

    @Test func quietHoursAreRespectedOrIgnoredByEachWatch() async throws {
        let (s, notifications, room, marker) = try await roomWithNotifications("night")
        // Quiet from an hour ago to an hour from now, in local time as the agent reads it.
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        let quiet = formatter.string(from: Date().addingTimeInterval(-3600)) + "-" + formatter.string(from: Date().addingTimeInterval(3600))
        try s.writeConfig(account: """
            rooms = \(room)
            [watch polite]
            query = polite \(marker)
            quiet_hours = respect
            [watch pager]
            query = urgent \(marker)
            quiet_hours = ignore
            """, notify: "quiet_hours = \(quiet)\ngroupchat = all")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try s.bob.run(["muc", room, "bob", "--send", "polite \(marker)", "--send", "urgent \(marker)"])
        try await waitFor("the watch ignoring quiet hours notified", roost) { notifications.calls.contains("'pager: bob in") }
        let calls = notifications.calls
        #expect(!calls.contains("polite \(marker)"), "\(calls.suffix(3000))")
        #expect(s.count("SELECT count(*) FROM messages WHERE body = 'polite \(marker)'") == 1)
    }

    @Test func highlightWordsOfARoomNotifyLikeAMention() async throws {
        let (s, notifications, room, marker) = try await roomWithNotifications("kitchen")
        // groupchat = mentions (the default): only mentions notify, and the words count as one.
        try s.writeConfig(account: """
            [room \(room)]
            highlight_words = teapot\(marker), the kettle \(marker)
            """)
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try s.bob.run(["muc", room, "bob", "--send", "plain \(marker)", "--send", "where is the teapot\(marker)?",
                       "--send", "boil the kettle \(marker) now"])
        try await waitFor("the highlighted messages notified", roost) {
            notifications.calls.contains("where is the teapot\(marker)?") && notifications.calls.contains("boil the kettle \(marker) now")
        }
        let calls = notifications.calls
        #expect(!calls.contains("plain \(marker)"), "\(calls.suffix(3000))")
        // Like a mention: the ordinary title, no watch's.
        #expect(notifyCalls(calls, containing: "teapot\(marker)").first?.contains("'bob in \(room.split(separator: "@")[0])'") == true)
        let list = try s.roost(["watch", "list"])
        #expect(list.stdout.contains("highlight:    \(room): teapot\(marker), the kettle \(marker)"), "\(list.stdout)")
    }

    @Test func aWatchWhoseQueryDoesNotParseIsRefusedByConfig() async throws {
        let s = try await setUp()
        try s.writeConfig(account: "[watch broken]\nquery = (deploy OR")
        let result = try s.roost(["config"])
        #expect(result.status == 78, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("[watch broken]") || result.stderr.contains("query"), "\(result.stderr)")
        #expect(result.stderr.contains("does not parse"), "\(result.stderr)")
    }

    @Test func afterAnOutageTheRoomsSummaryDoesNotReplaceTheChatsSummary() async throws {
        let (s, notifications, room, marker) = try await roomWithNotifications("outage") { "before \($0)" }
        try s.writeConfig(account: "rooms = \(room)", notify: "groupchat = all")
        let environment = try await runUntilCaughtUp(s, notifications, room: room, marker: marker)
        // While Roost is away: bob writes to alice, and carol in the room.
        for n in 1...2 {
            try s.bob.run(["raw", "<message to='\(s.alice)' type='chat' id='dm-\(marker)-\(n)'><body>dm \(n) \(marker)</body></message>"])
        }
        try s.carol.run(["muc", room, "carol", "--send", "room 1 \(marker)", "--send", "room 2 \(marker)", "--send", "room 3 \(marker)"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: environment)
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("both summaries shown", roost) {
            let calls = notifications.calls
            return calls.contains("2 messages from") && calls.contains("3 messages in \(room)")
        }
        let calls = notifications.calls
        let chats = notifyCalls(calls, containing: "2 messages from")
        let rooms = notifyCalls(calls, containing: "3 messages in \(room)")
        // Each its own notification (replaces_id 0: a new one), neither replacing the other.
        #expect(chats.count == 1 && chats.first?.hasPrefix("[<'Roost'>, <uint32 0>,") == true, "\(chats)")
        #expect(rooms.count == 1 && rooms.first?.hasPrefix("[<'Roost'>, <uint32 0>,") == true, "\(rooms)")
    }

    @Test func aWatchedMessageCaughtUpAfterAnOutageNotifiesOnItsOwn() async throws {
        let (s, notifications, room, marker) = try await roomWithNotifications("missed") { "before \($0)" }
        try s.writeConfig(account: "rooms = \(room)\n[watch missed]\nquery = urgent \(marker)", notify: "mute = \(room)")
        let environment = try await runUntilCaughtUp(s, notifications, room: room, marker: marker)
        try s.carol.run(["muc", room, "carol", "--send", "urgent \(marker) while away", "--send", "plain \(marker) while away"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: environment)
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("the caught-up watched message notified", roost) { notifications.calls.contains("urgent \(marker) while away") }
        try await roost.roomArchiveRead(room, timeout: 60)
        let calls = notifications.calls
        #expect(notifyCalls(calls, containing: "urgent \(marker) while away").first?.contains("'missed: carol in ") == true, "\(calls.suffix(3000))")
        // The muted room's other message: neither on its own nor in a summary.
        #expect(!calls.contains("plain \(marker)") && !calls.contains("while you were away"), "\(calls.suffix(3000))")
        #expect(s.count("SELECT count(*) FROM messages WHERE body = 'plain \(marker) while away'") == 1)
    }

    @Test func anInvitationThroughTheRoomNamesTheInviter() async throws {
        let s = try await setUp()
        let notifications = try await PrivateNotificationServer()
        let room = s.room("through")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        try s.carol.run(["muc", room, "carol", "--invite", s.alice.description])
        try await waitFor("the invitation notified", roost) { notifications.calls.contains("invites you to \(room)") }
        let calls = notifications.calls
        // Prosody names the inviter by their seat in the room (room@service/carol): the nick, not the room again;
        // ejabberd by the real JID (carol-…@roost.test). Either way carol is named.
        let inviter = calls.components(separatedBy: " invites you to \(room)").first?.components(separatedBy: "'").last ?? ""
        #expect(inviter == "carol" || inviter.hasPrefix("carol-"), "named \(inviter): \(calls.suffix(3000))")
        #expect(!calls.contains("\(room) invites you"), "\(calls.suffix(3000))")
    }
}
