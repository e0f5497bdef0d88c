import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Group chats end to end: `roost run` against the test Prosody's `conference.` service (MUC with MAM), the
/// other occupants and the user's phone played by an independent client — slixmpp (Debian) through
/// contrib/scripts/xmpp-peer.py. Every test has rooms and accounts of its own.
@Suite("End to end: group chats", .requires(.server, .tool("/usr/bin/gdbus"), .tool("/usr/bin/dbus-daemon")))
struct RoomsEndToEndTests {
    let server: TestServer

    init() throws {
        server = try TestServer.require()
    }

    /// alice (Roost's account, and her phone) and the peers bob, carol, dave, each registered for this test.
    struct Setup {
        let server: TestServer
        let dir: TestDirectory
        let alice: JID
        let alicePassword: String
        let phone: RoomPeer
        let bob: RoomPeer
        let carol: RoomPeer
        let dave: RoomPeer
        var config: String { dir.path + "/config.ini" }
        var archive: String { dir.path + "/data/archive.sqlite" }

        func room(_ label: String) -> String { "\(label)-\(UUID().uuidString.prefix(8).lowercased())@conference.\(server.domain)" }

        /// Writes Roost's config: alice as `nick = Alice`, rooms pinged every 10 s, the server archive read every 2 s.
        func writeConfig(account extra: String = "", notify: String = "") throws {
            try dir.write("config.ini", """
                [general]
                archive_poll_seconds = 2
                room_ping_seconds = 10
                reconnect_max_seconds = 2
                [archive]
                path = \(archive)
                [notify]
                when = always
                coalesce_seconds = 0
                \(notify)
                [account \(alice)]
                password = \(alicePassword)
                host = \(server.host)
                port = \(server.port)
                ca_file = \(server.caFile)
                nick = Alice
                \(extra)

                """)
        }

        func roost(_ arguments: [String]) throws -> RoostBinary.Result {
            try RoostBinary.run(arguments + ["--config", config])
        }

        func sql(_ query: String) throws -> String {
            try ArchiveCount.sqlite(archive, query).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func count(_ query: String) -> Int { Int((try? sql(query)) ?? "") ?? -1 }

        /// `roost rooms --json`, by room.
        func rooms() throws -> [String: [String: Any]] {
            var out: [String: [String: Any]] = [:]
            for row in try roost(["rooms", "--json"]).jsonLines { if let room = row["room"] as? String { out[room] = row } }
            return out
        }

        func state(of room: String) -> String? { (try? rooms())?[room]?["state"] as? String }

        func rejectedStanzas() throws -> Int {
            try roost(["status", "--json"]).jsonLines.first { $0["kind"] as? String == "account" }?["rejected_stanzas"] as? Int ?? -1
        }
    }

    func setUp(_ server: TestServer? = nil) async throws -> Setup {
        let server = server ?? self.server
        let dir = try TestDirectory()
        let peers = try await server.registeredAccounts(["alice", "bob", "carol", "dave"])
        let setup = Setup(server: server, dir: dir, alice: peers[0].0, alicePassword: peers[0].1,
                          phone: RoomPeer(server: server, jid: peers[0].0, password: peers[0].1, resource: "phone"),
                          bob: RoomPeer(server: server, jid: peers[1].0, password: peers[1].1),
                          carol: RoomPeer(server: server, jid: peers[2].0, password: peers[2].1),
                          dave: RoomPeer(server: server, jid: peers[3].0, password: peers[3].1))
        try setup.writeConfig()
        return setup
    }

    // MARK: - Which rooms

    @Test func bookmarkedRoomsAreJoinedAndBookmarkChangesTakeEffectLive() async throws {
        let s = try await setUp()
        let lounge = s.room("lounge"), later = s.room("later"), legacy = s.room("legacy"), quiet = s.room("quiet"), excluded = s.room("excluded")
        // bob made the rooms and said something before Roost ever came.
        for room in [lounge, later, legacy, quiet, excluded] { try s.bob.run(["muc", room, "bob", "--send", "first words in \(room)"]) }
        try s.phone.run(["bookmark", lounge, "--autojoin", "--nick", "Alice", "--name", "The lounge"])
        try s.phone.run(["bookmark", quiet, "--name", "../../../tmp/evil"])
        try s.phone.run(["bookmark", excluded, "--autojoin"])
        try s.writeConfig(account: "exclude_rooms = \(excluded)")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("Roost joined the autojoin bookmark", roost) { s.state(of: lounge) == "joined" }
        let rooms = try s.rooms()
        #expect(rooms[lounge]?["nick"] as? String == "Alice")
        #expect(rooms[lounge]?["bookmarked"] as? Bool == true && rooms[lounge]?["autojoin"] as? Bool == true)
        #expect(rooms[quiet]?["state"] as? String == "out", "a bookmark without autojoin is not joined: \(rooms)")
        #expect(rooms[quiet]?["name"] as? String == "../../../tmp/evil", "a bookmark's name is data")
        #expect(rooms[excluded]?["state"] as? String == "out", "exclude_rooms wins over autojoin")
        // What the room said before Roost came is read from the room's archive.
        try await waitFor("the room's history archived", roost) {
            s.count("SELECT count(*) FROM messages WHERE conversation = '\(lounge)' AND body = 'first words in \(lounge)'") == 1
        }

        // A bookmark added on the phone while Roost runs: joined at once (PEP +notify).
        try s.phone.run(["bookmark", later, "--autojoin"])
        try await waitFor("the new bookmark joined live", roost) { s.state(of: later) == "joined" }
        // An older client writing XEP-0048 private storage (the server keeps both in step).
        try s.phone.run(["bookmark", legacy, "--autojoin", "--legacy"])
        try await waitFor("the legacy bookmark joined live", roost) { s.state(of: legacy) == "joined" }
        // autojoin turned off on the phone: Roost leaves; the bookmark removed: it leaves that one too.
        try s.phone.run(["bookmark", later])
        try s.phone.run(["bookmark", lounge, "--remove"])
        try await waitFor("left the rooms no longer wanted", roost) { s.state(of: later) == "out" && s.state(of: lounge) == "out" }
        #expect(s.state(of: legacy) == "joined")
        #expect(FileManager.default.fileExists(atPath: "/tmp/evil") == false)

        // `roost rooms join --bookmark` publishes the bookmark the phone sees too (it comes back through PEP),
        // and `roost rooms leave` clears its autojoin.
        let joined = try s.roost(["rooms", "join", quiet, "--bookmark", "--json"])
        #expect(joined.status == 0, "\(joined.stderr)")
        try await waitFor("the published bookmark", roost) {
            let row = try s.rooms()[quiet]
            return row?["state"] as? String == "joined" && row?["autojoin"] as? Bool == true && row?["joined_by_user"] as? Bool == true
        }
        let left = try s.roost(["rooms", "leave", quiet])
        #expect(left.status == 0, "\(left.stderr)")
        try await waitFor("left, autojoin cleared", roost) {
            let row = try s.rooms()[quiet]
            return row?["state"] as? String == "out" && row?["autojoin"] as? Bool == false && row?["joined_by_user"] as? Bool == false
        }
    }

    // MARK: - Complete archive, once, in order

    @Test func fiveHundredMessagesWhileOfflineArriveOnceInOrderWithOneSummary() async throws {
        let s = try await setUp()
        let notifications = try await PrivateNotificationServer()
        try s.writeConfig(notify: "groupchat = all")
        let room = s.room("busy")
        try s.bob.run(["muc", room, "bob", "--send", "before the flood"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let environment = ["DBUS_SESSION_BUS_ADDRESS": notifications.address]
        var roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: environment)
        try await waitFor("joined and caught up", roost) {
            s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body = 'before the flood'") == 1
        }
        roost.stop(signal: SIGTERM)

        // Three occupants write 500 messages while Roost is away.
        let flooders = try [(s.bob, "bob", 167), (s.carol, "carol", 167), (s.dave, "dave", 166)].map { peer, nick, count in
            try peer.start(["muc", room, nick, "--flood", String(count), "--prefix", "\(nick)-flood"])
        }
        for flooder in flooders {
            try await waitFor("a flooder finished", flooder, timeout: 120) { !flooder.isRunning }
            #expect(flooder.stop().status == 0, "flooder failed: \(flooder.stderrSoFar.suffix(2000))")
        }
        let flood = "conversation = '\(room)' AND message_id LIKE '%-flood-%'"
        roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: environment)
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("500 messages archived", roost, timeout: 120) { s.count("SELECT count(*) FROM messages WHERE \(flood)") >= 500 }
        try await roost.roomArchiveRead(room, timeout: 120)
        #expect(s.count("SELECT count(*) FROM messages WHERE \(flood)") == 500)
        #expect(s.count("SELECT count(DISTINCT message_id) FROM messages WHERE \(flood)") == 500)
        #expect(s.count("SELECT count(*) FROM messages WHERE \(flood) AND body = replace(message_id, '-flood-', '-flood message ')") == 500)
        #expect(s.count("SELECT count(*) FROM messages WHERE \(flood) AND stanza_id_trusted = 1 AND stanza_id_by = '\(room)'") == 500)
        // In the room's own order: the archive's order is the room archive's.
        let archived = try s.sql("SELECT message_id FROM messages WHERE \(flood) ORDER BY id").split(separator: "\n").map(String.init)
        let roomOrder = try s.bob.run(["mam", "--archive", room, "--max", "1000"]).compactMap { line -> String? in
            guard line["event"] as? String == "archived", let id = line["id"] as? String, id.contains("-flood-") else { return nil }
            return id
        }
        #expect(roomOrder.count == 500)
        #expect(archived == roomOrder)
        // No flood of notifications: one summary for the room, no message one by one.
        try await waitFor("the catch-up summary", roost) { notifications.calls.contains("500 messages") }
        let calls = notifications.calls
        #expect(calls.components(separatedBy: "'Notify'").count - 1 == 1, "exactly one notification: \(calls.suffix(3000))")
        #expect(!calls.contains("flood message"))
    }

    /// A room that keeps no archive: the first join takes the room's join history, later joins ask for the history
    /// `since` the newest stored message; what the room sends again (the newest stored one, at least) is recognised
    /// by the fallback dedup, so every message is stored once.
    @Test func aRoomWithoutAnArchiveIsCaughtUpFromItsHistoryOnce() async throws {
        let s = try await setUp()
        let room = s.room("noarchive")
        let configured = try s.bob.run(["muc", room, "bob", "--no-archive", "--flood", "3", "--prefix", "early"])
        #expect(configured.contains { $0["event"] as? String == "configured" }, "\(configured)")
        try s.writeConfig(account: "rooms = \(room)")
        func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
        let firstStart = now()
        var roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        let early = "conversation = '\(room)' AND message_id LIKE 'early-%'"
        try await waitFor("the join history archived", roost) { s.count("SELECT count(*) FROM messages WHERE \(early)") >= 3 }
        #expect(roost.stderrSoFar.contains("the room keeps no archive"), "\(roost.stderrSoFar.suffix(3000))")
        roost.stop(signal: SIGTERM)

        try s.bob.run(["muc", room, "bob", "--flood", "4", "--prefix", "away"])
        let secondStart = now()
        roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        let away = "conversation = '\(room)' AND message_id LIKE 'away-%'"
        try await waitFor("the history since the newest stored message", roost) { s.count("SELECT count(*) FROM messages WHERE \(away)") >= 4 }
        #expect(roost.stderrSoFar.contains("history since the newest stored message"))
        // Settled: a live message after the history is archived after all of it (one stream, in order).
        try s.bob.run(["muc", room, "bob", "--send", "live marker"])
        try await waitFor("the live marker", roost) { s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body = 'live marker'") == 1 }
        #expect(s.count("SELECT count(*) FROM messages WHERE \(early)") == 3)
        #expect(s.count("SELECT count(*) FROM messages WHERE \(away)") == 4)
        #expect(s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body IS NOT NULL") == 8,
                "\((try? s.sql("SELECT message_id, body, stanza_id_trusted FROM messages WHERE conversation = '\(room)'")) ?? "")")
        #expect(s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND stanza_id_trusted = 1") == 0,
                "a room without an archive makes no ids promises")
        // The history the joins asked for carries the room's own times (its <delay/>, believed until the subject):
        // said before Roost started, dated so; the live marker is dated when Roost got it.
        #expect(s.count("SELECT count(*) FROM messages WHERE \(early) AND timestamp < \(firstStart) AND claimed_at IS NULL") == 3,
                "\((try? s.sql("SELECT message_id, timestamp, claimed_at FROM messages WHERE conversation = '\(room)'")) ?? "")")
        #expect(s.count("SELECT count(*) FROM messages WHERE \(away) AND timestamp < \(secondStart) AND claimed_at IS NULL") == 4)
        #expect(s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body = 'live marker' AND timestamp > \(secondStart)") == 1)
    }

    // MARK: - Notifications

    @Test func aMentionNotifiesAnOrdinaryMessageDoesNot() async throws {
        let s = try await setUp()
        let notifications = try await PrivateNotificationServer()
        let room = s.room("talk")
        try s.bob.run(["muc", room, "bob", "--send", "hello"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        let marker = UUID().uuidString.prefix(8)
        try s.bob.run(["muc", room, "bob", "--send", "ordinary \(marker)", "--send", "alice: mention \(marker)", "--send", "malice \(marker)"])
        try s.carol.run(["muc", room, "carol", "--send", "see this \(marker)", "--reference", s.alice.description])
        try await waitFor("the mentions notified", roost) {
            notifications.calls.contains("mention \(marker)") && notifications.calls.contains("see this \(marker)")
        }
        #expect(s.count("SELECT count(*) FROM messages WHERE body LIKE '%\(marker)%'") == 4)
        let calls = notifications.calls
        #expect(!calls.contains("ordinary \(marker)") && !calls.contains("malice \(marker)"), "\(calls.suffix(2000))")
        #expect(calls.contains("bob in \(room.split(separator: "@")[0])"))
    }

    @Test func anInvitationNotifiesWithJoinAndDeclineAndIsListed() async throws {
        let s = try await setUp()
        let notifications = try await PrivateNotificationServer()
        let party = s.room("party")
        try s.carol.run(["muc", party, "carol", "--send", "welcome"])
        // carol is no contact of alice: shown, never joined by itself (even with accept_invitations = contacts).
        try s.writeConfig(account: "accept_invitations = contacts")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"], environment: ["DBUS_SESSION_BUS_ADDRESS": notifications.address])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        try s.carol.run(["invite", s.alice.description, party, "--reason", "cake at five"])
        try await waitFor("the invitation notified with actions", roost) { notifications.calls.contains("'Join'") }
        let calls = notifications.calls
        #expect(calls.contains("Invitation to \(party)") && calls.contains("'Decline'") && calls.contains("cake at five"))
        let invites = try s.roost(["rooms", "invites", "--json"]).jsonLines
        #expect(invites.count == 1)
        // Its fallback body is no chat message.
        #expect(s.count("SELECT count(*) FROM messages WHERE body LIKE '%invites you to%'") == 0)
        #expect(invites.first?["room"] as? String == party && invites.first?["from_contact"] as? Bool == false)
        #expect(invites.first?["reason"] as? String == "cake at five")
        #expect(s.state(of: party) != "joined", "an invitation from a non-contact is never accepted by itself")
        // Join, from the notification (the first on this notification server: id 1).
        notifications.invokeAction(id: 1, "accept")
        try await waitFor("joined from the notification", roost) { s.state(of: party) == "joined" }
        #expect(try s.roost(["rooms", "invites", "--json"]).jsonLines.isEmpty)
        #expect(try s.roost(["rooms", "invites", "--all", "--json"]).jsonLines.first?["status"] as? String == "accepted")
        try await waitFor("the room's history archived", roost) {
            s.count("SELECT count(*) FROM messages WHERE conversation = '\(party)' AND body = 'welcome'") == 1
        }
    }

    @Test func aContactsInvitationIsAcceptedWhenConfiguredAndDeclineWorks() async throws {
        let s = try await setUp()
        let ours = s.room("ours"), theirs = s.room("theirs")
        try s.bob.run(["muc", ours, "bob", "--send", "hi"])
        try s.carol.run(["muc", theirs, "carol", "--send", "hi"])
        // bob is in alice's roster.
        let phone = XMPPClient(configuration: s.server.configuration(for: s.alice, password: s.alicePassword, resource: "setup"))
        _ = try await phone.connect()
        _ = try await phone.request(Roster.setRequest(RosterItem(jid: s.bob.jid.bare, name: "Bob")))
        await phone.disconnect()
        try s.writeConfig(account: "accept_invitations = contacts")
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        try s.carol.run(["invite", s.alice.description, theirs])
        try s.bob.run(["invite", s.alice.description, ours])
        try await waitFor("the contact's invitation accepted", roost) { s.state(of: ours) == "joined" }
        #expect(s.state(of: theirs) != "joined")
        let declined = try s.roost(["rooms", "decline", theirs])
        #expect(declined.status == 0, "\(declined.stderr)")
        #expect(try s.roost(["rooms", "invites", "--json"]).jsonLines.isEmpty)
    }

    // MARK: - The user's own messages

    @Test func ownMessagesFromThePhoneAndFromRoostAreStoredOnceAsOutgoing() async throws {
        let s = try await setUp()
        let room = s.room("own")
        try s.bob.run(["muc", room, "bob", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin", "--nick", "Alice"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        let marker = UUID().uuidString.prefix(8)
        try s.phone.run(["muc", room, "Alice", "--send", "from the phone \(marker)", "--origin-ids"])
        let sent = try s.roost(["send", room, "from roost \(marker)"])
        #expect(sent.status == 0, "\(sent.stderr)")
        try await waitFor("both archived", roost) { s.count("SELECT count(*) FROM messages WHERE body LIKE 'from % \(marker)'") >= 2 }
        // A self-ping later the room's archive was read past them (its mark is the newest message's id): still once each.
        try await waitFor("the room's archive read past them", roost, timeout: 40) {
            let newest = try s.sql("SELECT stanza_id FROM messages WHERE conversation = '\(room)' ORDER BY id DESC LIMIT 1")
            let mark = try s.sql("SELECT catch_up_id FROM rooms WHERE jid = '\(room)'")
            return !newest.isEmpty && mark == newest
        }
        let rows = try s.sql("SELECT body, direction, delivery, stanza_id_trusted FROM messages WHERE body LIKE 'from % \(marker)' ORDER BY id")
        #expect(rows == "from the phone \(marker)|out||1\nfrom roost \(marker)|out|sent|1", "\(rows)")
        let search = try s.roost(["search", "--json", "is:groupchat", "in:\(room)", String(marker)]).jsonLines
        #expect(search.count == 2)
    }

    // MARK: - Security

    @Test func forgedRoomMessagesAndArchiveResultsAreRefused() async throws {
        let s = try await setUp()
        let room = s.room("guarded")
        try s.bob.run(["muc", room, "bob", "--subject", "the real subject", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        let before = try s.rejectedStanzas()
        let to = "\(s.alice)/roost"
        // Mallory (dave) cannot make his server stamp the room's JID: he claims the room inside instead.
        try s.dave.run(["raw",
            "<message to='\(to)' type='groupchat'><body>forged room text</body><stanza-id xmlns='urn:xmpp:sid:0' by='\(room)' id='F1'/></message>",
            "<message to='\(to)' type='groupchat'><subject>forged subject</subject></message>",
            "<message to='\(to)'><result xmlns='urn:xmpp:mam:2' queryid='q1' id='F2'><forwarded xmlns='urn:xmpp:forward:0'>"
                + "<message xmlns='jabber:client' from='\(room)/bob' type='groupchat'><body>forged archive text</body></message></forwarded></result></message>",
            "<message to='\(to)' type='chat'><body>a chat with a room's id</body><stanza-id xmlns='urn:xmpp:sid:0' by='\(room)' id='R-1'/></message>",
        ])
        try await waitFor("the forgeries reached Roost", roost) { (try? s.rejectedStanzas()) ?? 0 >= before + 3 }
        try await waitFor("the chat message after them archived", roost) {
            s.count("SELECT count(*) FROM messages WHERE body = 'a chat with a room''s id'") == 1
        }
        #expect(s.count("SELECT count(*) FROM messages WHERE body LIKE 'forged%' OR subject LIKE 'forged%'") == 0)
        #expect(try s.sql("SELECT subject FROM rooms WHERE jid = '\(room)'") == "the real subject")
        // The chat message is a chat (with dave); its id is the one the account's own archive gave it, never the room's.
        let chat = try s.sql("SELECT conversation, type, stanza_id_by, stanza_id = 'R-1' FROM messages WHERE body = 'a chat with a room''s id'")
        #expect(chat == "\(s.dave.jid.bare)|chat|\(s.alice.bare)|0", "\(chat)")
    }

    /// An occupant dates its messages (issue 16): a far-future `<delay/>`, and one naming the room (Prosody drops
    /// that one on its way through; ejabberd relays it), live and in the room's archive read after an absence. The
    /// time is when Roost (or the room's archive) got the message; a stamp that arrives is kept as `claimed_at`,
    /// which also proves the forgery reached Roost.
    @Test func occupantsCannotChooseTheirMessagesTimes() async throws {
        let s = try await setUp()
        let room = s.room("clocks")
        try s.bob.run(["muc", room, "bob", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
        let future = (delay: "9999-12-31T23:59:59Z", ms: Int64(253_402_300_799_000))
        let roomNamed = (delay: "2001-01-01T00:00:00Z,\(room)", ms: Int64(978_307_200_000))
        /// Sends one message of bob's per stamp, and checks how Roost stored each once it is there.
        func forge(_ phase: String, while roost: () throws -> RunningRoost) async throws -> RunningRoost {
            let before = now() - 1000
            for (name, stamp) in [("far future", future), ("room's name", roomNamed)] {
                try s.bob.run(["muc", room, "bob", "--send", "\(phase): \(name)", "--delay", stamp.delay])
            }
            let running = try roost()
            try await waitFor("both archived", running) {
                s.count("SELECT count(*) FROM messages WHERE body LIKE '\(phase): %'") == 2
            }
            let after = now() + 1000
            for (name, stamp) in [("far future", future), ("room's name", roomNamed)] {
                let row = try s.sql("SELECT timestamp || '|' || ifnull(claimed_at, '') FROM messages WHERE body = '\(phase): \(name.replacingOccurrences(of: "'", with: "''"))'")
                    .split(separator: "|", omittingEmptySubsequences: false)
                let (timestamp, claimed) = (Int64(row.first ?? "") ?? -1, row.count > 1 ? Int64(row[1]) : nil)
                #expect(timestamp >= before && timestamp <= after, "\(phase): \(name): stored at \(timestamp), not in \(before)…\(after)")
                if name == "far future" || s.server.kind != .prosody {
                    #expect(claimed == stamp.ms, "\(phase): \(name): the stamp did not reach Roost as sent")
                } else {
                    #expect(claimed == nil || claimed == stamp.ms)
                }
            }
            return running
        }
        var roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        roost = try await forge("live") { roost }
        roost.stop(signal: SIGTERM)
        // Said while Roost is away: read from the room's archive, whose own time orders it.
        roost = try await forge("archived") { try RoostBinary.start(["run", "--config", s.config, "-v"]) }
        // The newest message of the room is the last one said.
        let newest = try s.roost(["search", "--json", "--limit", "1", "in:\(room)"]).jsonLines
        #expect(newest.first?["body"] as? String == "archived: room's name")
    }

    // MARK: - Faults

    @Test func killNineDuringARoomFloodStoresEveryMessageOnce() async throws {
        let s = try await setUp()
        let room = s.room("flood")
        try s.bob.run(["muc", room, "bob", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let roost = Restarter(arguments: ["run", "--config", s.config, "-v"])
        try await roost.start()
        try await waitFor("joined", nil) { s.state(of: room) == "joined" }
        let flooder = try s.bob.start(["muc", room, "bob", "--flood", "2000", "--prefix", "kill9", "--timeout", "120"])
        for _ in 0..<5 {
            try await Task.sleep(for: .milliseconds(Int.random(in: 400...1200)))
            try await roost.killAndRestart()
        }
        try await waitFor("the flood sent", flooder, timeout: 180) { !flooder.isRunning }
        #expect(flooder.stop().status == 0, "\(flooder.stderrSoFar.suffix(2000))")
        let flood = "conversation = '\(room)' AND message_id LIKE 'kill9-%'"
        try await waitFor("2000 messages archived", nil, timeout: 120) { s.count("SELECT count(*) FROM messages WHERE \(flood)") >= 2000 }
        try await settle(s, room: room, nil)
        let log = await roost.stop()
        #expect(s.count("SELECT count(*) FROM messages WHERE \(flood)") == 2000, "\(log.suffix(3000))")
        #expect(s.count("SELECT count(DISTINCT message_id) FROM messages WHERE \(flood)") == 2000)
        #expect(await roost.kills == 5)
    }

    @Test func aKickedRoostRejoinsAndLosesNothing() async throws {
        let s = try await setUp()
        let room = s.room("strict")
        try s.bob.run(["muc", room, "bob", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin", "--nick", "Alice"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        // The room's owner kicks Roost's occupant, then talks while Roost is out.
        try s.bob.run(["muc", room, "bob", "--kick", "Alice", "--send", "said while Roost was kicked"])
        try roost.waitForLog("kicked by a moderator")
        try await waitFor("the kick in the timeline", roost) {
            s.count("SELECT count(*) FROM presence_log WHERE contact = '\(room)' AND room_event = 'kick'") == 1
        }
        try await waitFor("rejoined, and what was said meanwhile archived", roost) {
            s.count("SELECT count(*) FROM messages WHERE body = 'said while Roost was kicked'") == 1 && s.state(of: room) == "joined"
        }
        try await settle(s, room: room, roost)
        #expect(s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body IS NOT NULL AND body NOT LIKE 'settled %'") == 2)

        // The transcript with its timeline, an export in colours, the room in the stats.
        let log = try s.roost(["log", "--presence", "--json", room]).jsonLines
        #expect(log.contains { $0["event"] as? String == "room_presence" && $0["room_event"] as? String == "kick" && $0["nick"] as? String == "Alice" })
        #expect(log.contains { $0["event"] as? String == "message" && $0["body"] as? String == "said while Roost was kicked" })
        let text = try s.roost(["log", "--presence", room]).stdout
        #expect(text.contains("* Alice was kicked"), "\(text)")
        let html = s.dir.path + "/html"
        let export = try s.roost(["export", "--format", "html", "-o", html, "in:\(room)"])
        #expect(export.status == 0, "\(export.stderr)")
        let page = try FileManager.default.contentsOfDirectory(atPath: html).first { $0.hasPrefix(room) }
            .map { try String(contentsOfFile: html + "/" + $0, encoding: .utf8) } ?? ""
        #expect(page.contains("class=\"name occupant\" style=\"--hue:") && page.contains("said while Roost was kicked"))
        let stats = try s.roost(["stats", "--json"]).jsonLines
        #expect(stats.contains { $0["kind"] as? String == "room" && $0["conversation"] as? String == room && $0["senders"] as? Int == 1 })
    }

    /// A room that forgets Roost without a word (a room service restarted, a lost presence) leaves a "ghost"
    /// that receives nothing: the self-ping notices and Roost joins again, reading what it missed.
    @Test func aRoomThatSilentlyForgotRoostIsNoticedBySelfPing() async throws {
        let s = try await setUp()
        let room = s.room("forgetful")
        try s.bob.run(["muc", room, "bob", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try forgetOccupant(s, room: room)
        try s.bob.run(["muc", room, "bob", "--send", "said to a ghost"])
        try roost.waitForLog("self-ping: \(room) no longer counts Roost", timeout: 90)
        try await waitFor("rejoined, and what the ghost missed archived", roost, timeout: 90) {
            s.count("SELECT count(*) FROM messages WHERE body = 'said to a ghost'") == 1 && s.state(of: room) == "joined"
        }
        try await settle(s, room: room, roost)
        #expect(s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body IS NOT NULL AND body NOT LIKE 'settled %'") == 2)
    }

    /// Makes the room service drop Roost's occupant without telling it: Prosody through its admin shell;
    /// ejabberd through its Erlang shell (`ejabberdctl` has no command for it), removing the occupant from the
    /// room process's state.
    private func forgetOccupant(_ s: Setup, room: String) throws {
        guard let ctl = s.server.serverctl else {
            Issue.record("the test server names no control program (ROOST_TEST_SERVERCTL)")
            throw WaitTimedOut(what: "a server control program")
        }
        let occupant = "\(s.alice)/roost"
        let arguments: [String]
        switch s.server.kind {
        case .prosody:
            arguments = ["shell", "> local r = prosody.hosts['conference.\(s.server.domain)'].modules.muc.get_room_from_jid('\(room)'); "
                + "local o = r:get_occupant_by_real_jid('\(occupant)'); o:remove_session('\(occupant)'); r:save_occupant(o); return 'dropped'"]
        case .ejabberd:
            // The room's process dies without a word (as in a crash); the persistent room comes back empty on the
            // next stanza. Through an Erlang node of our own, set up like the server's ejabberdctl wrapper.
            let wrapper = try String(contentsOfFile: ctl, encoding: .utf8)
            func capture(_ pattern: String) -> String? {
                guard let range = wrapper.range(of: pattern, options: .regularExpression) else { return nil }
                let match = String(wrapper[range])
                guard let quote = match.firstIndex(where: { $0 == "'" || $0 == " " }) else { return nil }
                return match[match.index(after: quote)...].trimmingCharacters(in: CharacterSet(charactersIn: "' "))
            }
            guard let home = capture("HOME='[^']*'"), let libs = capture("ERL_LIBS='[^']*'"),
                  let port = capture("-erl_epmd_port [0-9]+"), let node = capture("-extra '[^']*'") else {
                Issue.record("cannot read the ejabberdctl wrapper \(ctl)")
                throw WaitTimedOut(what: "the ejabberd node")
            }
            let (name, service) = (room.split(separator: "@")[0], room.split(separator: "@")[1])
            let eval = "{ok, P} = rpc:call(list_to_atom(\"\(node)\"), mod_muc, find_online_room, [<<\"\(name)\">>, <<\"\(service)\">>]), "
                + "exit(P, kill), io:format(\"dropped~n\"), halt()."
            arguments = ["-c", "HOME='\(home)' ERL_LIBS='\(libs)' ERL_CRASH_DUMP=/dev/null exec erl -sname roostmuc-$$@localhost -hidden -noinput -noshell "
                + "-erl_epmd_port \(port) -start_epmd false -dist_listen false -eval '\(eval)'"]
        }
        let result = try RoostBinary.runProgram(s.server.kind == .prosody ? ctl : "/bin/sh", arguments, timeout: 120)
        let output = result.stdout + result.stderr
        #expect(output.contains("dropped"), "\(ctl) \(arguments.joined(separator: " ")): \(output)")
    }
}

/// A server restart drops every connection and every room: Roost reconnects, rejoins, and reads what it missed.
@Suite("End to end: group chats across a server restart", .serialized, .requires(.server))
struct RoomsServerRestartTests {
    @Test func roostRejoinsAfterAServerRestartAndLosesNothing() async throws {
        let prosody = try PrivateServer(hibernationSeconds: 5)
        let s = try await RoomsEndToEndTests(serverOverride: prosody.server).setUp(prosody.server)
        let room = s.room("restart")
        try s.bob.run(["muc", room, "bob", "--send", "before the restart"])
        try s.phone.run(["bookmark", room, "--autojoin"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try s.bob.run(["muc", room, "bob", "--send", "live before the restart"])
        try await waitFor("the live message", roost) { s.count("SELECT count(*) FROM messages WHERE body = 'live before the restart'") == 1 }
        try prosody.restart()
        // Said before Roost is back in the room (it reconnects with a backoff of up to 2 s).
        try s.bob.run(["muc", room, "bob", "--send", "right after the restart"])
        try await waitFor("rejoined after the restart", roost, timeout: 60) {
            s.count("SELECT count(*) FROM messages WHERE body = 'right after the restart'") == 1 && s.state(of: room) == "joined"
        }
        try s.bob.run(["muc", room, "bob", "--send", "live after the restart"])
        try await waitFor("live again", roost) { s.count("SELECT count(*) FROM messages WHERE body = 'live after the restart'") == 1 }
        #expect(s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body IS NOT NULL") == 4)
        #expect(s.count("SELECT count(DISTINCT stanza_id) FROM messages WHERE conversation = '\(room)' AND body IS NOT NULL") == 4)
    }
}

extension RoomsEndToEndTests {
    init(serverOverride: TestServer) { server = serverOverride }
}

/// One independent XMPP client (slixmpp) as a user of the test server: contrib/scripts/xmpp-peer.py.
struct RoomPeer {
    let server: TestServer
    let jid: JID
    let password: String
    var resource = "peer"

    struct Failed: Error, CustomStringConvertible {
        let arguments: [String]
        let status: Int32
        let output: String
        var description: String { "xmpp-peer.py \(arguments.joined(separator: " ")) exited \(status):\n\(output)" }
    }

    /// One-shot commands (the group chat section of the script); the password goes through the environment, never argv.
    func start(_ arguments: [String]) throws -> RunningRoost {
        try RoostBinary.startProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py",
            "--jid", jid.bare.description, "--host", server.host, "--port", String(server.port),
            "--ca", server.caFile, "--resource", resource] + arguments, environment: ["XMPP_PEER_PASSWORD": password])
    }

    /// Runs one command to completion; a failure (exit status) throws with its output.
    @discardableResult
    func run(_ arguments: [String], timeout: TimeInterval = 90) throws -> [[String: Any]] {
        let running = try start(arguments)
        running.waitForExit(timeout: timeout)
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        guard status == 0 else { throw Failed(arguments: arguments, status: status, output: String(output.suffix(3000))) }
        return output.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }
}

/// Waits until Roost has handled everything the room sent before now: bob says a fresh marker in the room and
/// Roost archives it live. The room delivers in order, so a late copy of anything earlier would be stored by then.
func settle(_ s: RoomsEndToEndTests.Setup, room: String, _ process: RunningRoost?) async throws {
    let marker = "settled \(UUID().uuidString)"
    try s.bob.run(["muc", room, "bob", "--send", marker])
    try await waitFor("the marker '\(marker)' archived", process) {
        s.count("SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body = '\(marker)'") == 1
    }
}

/// Waits for `condition` (checked every 250 ms) up to `timeout`; fails with the process's log otherwise.
func waitFor(_ what: String, _ process: RunningRoost?, timeout: TimeInterval = 90, _ condition: () throws -> Bool) async throws {
    try await waitUntil(what, timeout: .seconds(timeout), every: .milliseconds(250),
                        detail: { "log tail:\n\(process?.stderrSoFar.suffix(4000) ?? "")" }) { (try? condition()) == true }
}
