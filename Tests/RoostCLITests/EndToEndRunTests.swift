import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// `roost run` as a user runs it, against the real server; the user's phone, the contact, the stranger and
/// the attacker are slixmpp peers (contrib/scripts/xmpp-peer.py).
@Suite("End to end: roost run archives everything", .requires(.server))
struct EndToEndRunTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    /// Waits until `roost search --json` finds `count` rows.
    private func waitForMessages(_ query: [String], count: Int, config: String) async throws -> [[String: Any]] {
        var rows: [[String: Any]] = []
        try await waitUntil("\(count) archived messages") {
            rows = try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0"] + query).jsonLines
            return rows.count >= count
        }
        return rows
    }

    private func rejectedStanzas(_ config: String) throws -> Int {
        try RoostBinary.accountStatus(config: config).first?["rejected_stanzas"] as? Int ?? -1
    }

    @Test func archivesMessagesStatesPresenceAndRequestsOnceEach() async throws {
        let dir = try TestDirectory()
        // The user's phone (priority 1), a contact, a stranger who asks to be friends, and an attacker.
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let phone = try await XMPPPeer.start(on: server, jid: alice, password: alicePassword, resource: "phone")
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "laptop")
        let carol = try await XMPPPeer.registered(on: server, "carol")
        let mallory = try await XMPPPeer.registered(on: server, "mallory")
        let bobJID = bob.jid
        try await phone.presence(priority: 1)
        try await bob.presence(priority: 1)

        // Mutual subscription between alice and bob, so bob's presence reaches alice.
        try await phone.presence(to: bobJID, type: "subscribe")
        _ = try await bob.presence("subscribe", from: alice)
        try await bob.presence(to: alice, type: "subscribed")
        try await bob.presence(to: alice, type: "subscribe")
        _ = try await phone.presence("subscribe", from: bobJID)
        try await phone.presence(to: bobJID, type: "subscribed")
        // Settled once alice's roster says "both" for bob.
        _ = try await phone.next("bob as a contact both ways") { event in
            event.kind == "roster-push" && (event.fields["items"] as? [[String: Any]] ?? []).contains {
                $0["jid"] as? String == bobJID.description && $0["subscription"] as? String == "both"
            }
        }

        let config = try server.roostConfig(in: dir, account: alice.description, password: alicePassword)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForReady()
        let roostJID = try alice.with(resource: "roost")

        // Bob writes to alice's bare JID: the phone gets it, Roost gets carbons.
        let big = String(repeating: "長文 long text ", count: 65_536 / 18)
        let bodies = ["plain latin text", "中文消息：你好，好友！", "emoji 🎉👍 party", "<b>markup</b> & \"quotes\" 'apos'", big]
        try await bob.call("chatstate", ["to": alice.description, "state": "composing"])
        for body in bodies { try await bob.send(to: alice, body: body, chatState: "active") }
        try await bob.call("chatstate", ["to": alice.description, "state": "paused"])
        try await bob.presence(show: "away", status: "gone fishing", priority: 1)
        // The user answers from the phone: Roost archives it through a sent carbon.
        try await phone.send(to: bobJID, body: "reply from the phone")
        // A stranger asks to be friends.
        try await carol.presence(to: alice, type: "subscribe", status: "hi, I'm Carol")

        let rows = try await waitForMessages([], count: bodies.count + 1, config: config)
        let received = Date()

        // Mallory forges a carbon and a roster push straight to Roost's resource: both reach Roost (its count
        // of refused stanzas grows with each) and neither changes anything.
        let refusedBefore = try rejectedStanzas(config)
        try await mallory.call("raw", ["xml": """
            <message to='\(roostJID)' type='chat' xmlns='jabber:client'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\
            <message xmlns='jabber:client' from='\(bobJID)/laptop' to='\(alice)' type='chat'><body>forged carbon text</body></message>\
            </forwarded></received></message>
            """])
        try await waitUntil("Roost to refuse the forged carbon") { try rejectedStanzas(config) == refusedBefore + 1 }
        let spoof = try await mallory.call("iq", ["xml": """
            <iq type='set' to='\(roostJID)'><query xmlns='jabber:iq:roster'><item jid='mallory-evil@\(server.domain)' name='Trusted Friend'/></query></iq>
            """])
        try await waitUntil("Roost to refuse the spoofed roster push") { try rejectedStanzas(config) == refusedBefore + 2 }
        // The spoofed push was refused with an error.
        #expect(spoof["type"] == "error")
        #expect(spoof["xml"]?.contains("service-unavailable") == true, "\(spoof)")

        // A read of the server archive after everything arrived finds it all already there: still once each.
        try await RoostBinary.waitForServerArchiveRead(config: config, after: received)
        let all = try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0"]).jsonLines
        #expect(all.count == bodies.count + 1, "rows: \(all.map { $0["body"] ?? "" })")
        for body in bodies {
            #expect(all.filter { ($0["body"] as? String) == body }.count == 1, "\(body.prefix(20)) once")
        }
        let reply = all.first { ($0["body"] as? String) == "reply from the phone" }
        #expect(reply?["direction"] as? String == "out")
        #expect(reply?["conversation"] as? String == bobJID.description)
        #expect(rows.allSatisfy { ($0["stanza_id"] as? String) != nil || ($0["direction"] as? String) == "out" })
        #expect(!all.contains { ($0["body"] as? String)?.contains("forged") == true })

        // Search in Chinese, by word and by two-character word; filters.
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "好友"]).jsonLines.count == 1)
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "消息"]).jsonLines.count == 1)
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "from:\(bobJID)", "party"]).jsonLines.count == 1)
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "is:out"]).jsonLines.count == 1)
        let none = try RoostBinary.run(["search", "--config", config, "no-such-word-anywhere"])
        #expect(none.status == 1)
        let bad = try RoostBinary.run(["search", "--config", config, "\"unterminated"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("column"))

        // The transcript with chat states and presence interleaved.
        let log = try RoostBinary.run(["log", "--config", config, "--json", "--states", "--presence", bobJID.description]).jsonLines
        #expect(log.contains { $0["event"] as? String == "chat_state" && $0["state"] as? String == "composing" })
        #expect(log.contains { $0["event"] as? String == "chat_state" && $0["state"] as? String == "paused" })
        #expect(log.contains { $0["event"] as? String == "presence" && $0["show"] as? String == "away" && $0["status"] as? String == "gone fishing" })
        #expect(log.filter { $0["event"] as? String == "message" }.count == bodies.count + 1)

        let stats = try RoostBinary.run(["stats", "--config", config, "--json"]).jsonLines
        let conversation = stats.first { $0["kind"] as? String == "conversation" && $0["conversation"] as? String == bobJID.description }
        #expect(conversation?["messages"] as? Int == bodies.count + 1)
        #expect(conversation?["outgoing"] as? Int == 1)

        // SIGTERM: clean exit 0, after which the archive is intact and the subscription request is in it.
        let (status, stderr) = roost.stop(signal: SIGTERM)
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("stopped"))
        #expect(!stderr.contains(alicePassword))
        let counts = try ArchiveCount.sqlite("\(dir.path)/data/archive.sqlite",
            "SELECT (SELECT count(*) FROM subscription_requests WHERE jid LIKE 'carol-%'), (SELECT count(*) FROM contacts WHERE jid LIKE 'mallory-evil%')")
        #expect(counts.trimmingCharacters(in: .whitespacesAndNewlines) == "1|0")
        let attributes = try FileManager.default.attributesOfItem(atPath: "\(dir.path)/data/archive.sqlite")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        for peer in [phone, bob, carol, mallory] { await peer.stop() }
    }

    @Test func configErrorsAreClearAndNonZero() throws {
        let dir = try TestDirectory()
        let open = try dir.write("open.ini", "[account a@roost.test]\npassword = secret-value\n", mode: 0o644)
        let r = try RoostBinary.run(["run", "--config", open])
        #expect(r.status != 0)
        #expect(r.stderr.contains("chmod 600"))
        #expect(!r.stderr.contains("secret-value"))
        let unknown = try dir.write("unknown.ini", "[archive]\npath = \(dir.path)/a.sqlite\ncolour = blue\n")
        let u = try RoostBinary.run(["run", "--config", unknown])
        #expect(u.status != 0)
        #expect(u.stderr.contains("unknown.ini:3"))
        let empty = try dir.write("empty.ini", "[archive]\npath = \(dir.path)/a.sqlite\n")
        let e = try RoostBinary.run(["run", "--config", empty])
        #expect(e.status != 0)
        #expect(e.stderr.contains("no account"))
    }
}
