import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Issue 28: private messages in a room where the user is present twice under one nick — Roost, and the phone (a
/// slixmpp client logged in as the user). The room delivers one copy to each session and the server archives each
/// under an id of its own; Roost stores one message, live and in a catch-up, names the occupant by nick, finds the
/// conversation by `with:room@service/nick`, and `roost verify` reports a private message stored twice.
extension RoomsEndToEndTests {
    @Test func privateMessagesToTwoSessionsUnderOneNickAreStoredOnceAndShownByNick() async throws {
        let s = try await setUp()
        let room = s.room("pm")
        try s.bob.run(["muc", room, "bob", "--send", "the room's own message"])
        try s.writeConfig(account: "rooms = \(room)")
        let tablet = RoomPeer(server: s.server, jid: s.alice, password: s.alicePassword, resource: "tablet")
        let m = UUID().uuidString.prefix(8).lowercased()
        let occupant = "\(room)/bob"
        func rows(_ body: String) throws -> String {
            try s.sql("SELECT conversation || '|' || direction || '|' || type || '|' || coalesce(sender_name, '') FROM messages WHERE body = '\(body)'")
        }

        var roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        // The phone is in the room under Roost's nick, and stays.
        let phone = try s.phone.start(["muc", room, "Alice", "--stay", "300"])
        defer { phone.stop(signal: SIGKILL) }
        try phone.waitForLog("\"joined\"", timeout: 60)

        // Live: bob writes to Alice privately; both of her sessions get a copy (the phone's proves it).
        let bob = try s.bob.start(["muc", room, "bob", "--pm", "Alice=live \(m)", "--pm-id", "live-\(m)", "--stay", "300"])
        defer { bob.stop(signal: SIGKILL) }
        try phone.waitForLog("live \(m)", timeout: 60)
        try await waitFor("the live private message archived", roost) { s.count("SELECT count(*) FROM messages WHERE body = 'live \(m)'") >= 1 }
        // The tablet, also as Alice, answers bob privately: a carbon to Roost.
        try tablet.run(["muc", room, "Alice", "--pm", "bob=reply \(m)"])
        try await waitFor("the answer archived", roost) { s.count("SELECT count(*) FROM messages WHERE body = 'reply \(m)'") >= 1 }
        // The server archive is read past both: its copies (one per session) add nothing.
        try await RoostBinary.waitForServerArchiveRead(config: s.config, after: Date(), timeout: .seconds(60))
        #expect(try rows("live \(m)") == "\(occupant)|in|chat|bob")
        #expect(try rows("reply \(m)") == "\(occupant)|out|chat|Alice")

        // While Roost is away, the phone and the tablet are in the room as Alice: the server archives two copies of
        // bob's next message, and Roost's catch-up (before or while it joins the room again) stores one.
        #expect(roost.stop(signal: SIGTERM).status == 0)
        let tabletInRoom = try tablet.start(["muc", room, "Alice", "--stay", "300"])
        defer { tabletInRoom.stop(signal: SIGKILL) }
        try tabletInRoom.waitForLog("\"joined\"", timeout: 60)
        let bob2 = RoomPeer(server: s.server, jid: s.bob.jid, password: s.bob.password, resource: "laptop")
        try bob2.run(["muc", room, "bob", "--pm", "Alice=away \(m)", "--pm-id", "away-\(m)"])
        try phone.waitForLog("away \(m)", timeout: 60)
        try tabletInRoom.waitForLog("away \(m)", timeout: 60)
        let restarted = Date()
        roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        try await waitFor("joined again", roost) { s.state(of: room) == "joined" }
        try await RoostBinary.waitForServerArchiveRead(config: s.config, after: restarted, timeout: .seconds(60))
        #expect(try rows("away \(m)") == "\(occupant)|in|chat|bob")

        // Shown by nick (and "me"), found by the occupant's address: the three private messages, not the room's.
        let log = try s.roost(["log", occupant])
        #expect(log.status == 0, "\(log.stderr)")
        #expect(log.stdout.contains("< bob: live \(m)") && log.stdout.contains("> me: reply \(m)") && log.stdout.contains("< bob: away \(m)"),
                "\(log.stdout)")
        let search = try s.roost(["search", "--json", "live \(m)"]).jsonLines
        #expect(search.count == 1 && search.first?["sender_display_name"] as? String == "bob"
                && search.first?["conversation_name"] as? String == occupant, "\(search)")
        let plain = try s.roost(["search", "live \(m)"]).stdout
        #expect(plain.contains("\(occupant) → me: live \(m)"), "\(plain)")
        let count = try s.roost(["count", "--json", "with:\(occupant)"]).jsonLines.first?["count"] as? Int
        let selected = try s.roost(["search", "--json", "--limit", "0", "with:\(occupant)"]).jsonLines.compactMap { $0["body"] as? String }
        #expect(count == 3 && Set(selected) == ["live \(m)", "reply \(m)", "away \(m)"], "\(selected)")
        let privately = try s.roost(["search", "--json", "--limit", "0", "from:bob", m]).jsonLines.compactMap { $0["body"] as? String }
        #expect(Set(privately) == ["live \(m)", "away \(m)"], "from: finds the occupant's private messages by nick")

        // verify: consistent, the copies of other sessions counted as such.
        #expect(roost.stop(signal: SIGTERM).status == 0)
        let verified = try s.roost(["verify", "--json"])
        let report = try #require(verified.jsonLines.first)
        #expect(verified.status == 0 && report["consistent"] as? Bool == true, "\(verified.stdout)\(verified.stderr)")
        #expect(report["room_private_copies"] as? Int == 2, "\(report)")
        #expect(report["missing"] as? Int == 0)

        // An archive that holds one of them twice (as Roost stored them before): verify says so.
        let id = try #require(Int(try s.sql("SELECT id FROM messages WHERE body = 'live \(m)'")), "one row")
        let columns = "account_id, conversation, direction, type, from_jid, from_bare, to_jid, to_bare, sender_name, body, timestamp, "
            + "received_at, stanza_id_by, stanza_id_trusted, message_id, source, dedup_key"
        let forged = try RoostBinary.runProgram("/usr/bin/sqlite3", [s.archive, """
            INSERT INTO messages (id, stanza_id, \(columns)) SELECT id + 1, 'another-session-\(m)', \(columns) FROM messages WHERE id = \(id)
            """])
        #expect(forged.status == 0, "\(forged.stderr)")
        let doubled = try s.roost(["verify", "--json"])
        let groups = try #require(doubled.jsonLines.first)["duplicate_fallback_keys"] as? [[String: Any]]
        #expect(doubled.status == 1 && groups?.count == 1, "\(doubled.stdout)")
        #expect(groups?.first?["rows"] as? [Int] == [id, id + 1])
    }
}
