import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// The seed app's friend features from the CLI while `roost run` is running: every command goes through
/// the control socket, and what it does is archived by the agent.
/// The contacts are slixmpp peers (contrib/scripts/xmpp-peer.py).
@Suite("Friends through the running agent", .requires(.server))
struct FriendsThroughAgentTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    @Test func addAcceptSendVCardPresenceRemove() async throws {
        let (own, alice, alicePassword) = try await server.registeredClient("alice")
        await own.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "phone")
        let carol = try await XMPPPeer.registered(on: server, "carol", resource: "phone")
        try await bob.presence(priority: 1)
        try await carol.presence(priority: 1)
        let roost = try RoostUnderTest(server: server, account: alice, password: alicePassword)
        let agent = try await roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }

        // status: online, exit 0.
        let status = try roost.run(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.jsonLines.contains { $0["kind"] as? String == "account" && $0["state"] as? String == "online" })

        // add → bob accepts and asks back → his request is answered without the user (pre-approval, or the
        // agent answering it) → both subscribed, nothing left pending.
        let add = try roost.run(["roster", "add", bob.jid.description, "--name", "Bob", "--group", "Friends", "--json"])
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.jsonLines.first?["via"] as? String == "agent")
        #expect(add.jsonLines.first?["pending"] as? Bool == true)
        _ = try await bob.presence("subscribe", from: alice)
        try await bob.presence(to: alice, type: "subscribed")
        try await bob.presence(to: alice, type: "subscribe", status: "hi from bob")
        _ = try await bob.presence("subscribed", from: alice)
        try await waitUntil("subscription both") { try roost.rosterEntry(bob.jid)?["subscription"] as? String == "both" }
        #expect(try roost.json(["requests"]).isEmpty)
        // Accepting a request that does not exist is refused, and points to `roost roster add`.
        let ghost = try roost.run(["requests", "accept", "ghost@\(server.domain)"])
        #expect(ghost.status == 1, "\(ghost.stderr)")
        #expect(ghost.stderr.contains("roost roster add ghost@\(server.domain)"))
        #expect(try roost.rosterEntry(try JID("ghost@\(server.domain)")) == nil)
        let entry = try #require(try roost.rosterEntry(bob.jid))
        #expect(entry["name"] as? String == "Bob")
        #expect(entry["groups"] as? [String] == ["Friends"])
        #expect(try roost.json(["requests"]).isEmpty)

        // A stranger's request, denied.
        try await carol.presence(to: alice, type: "subscribe")
        try await waitUntil("carol's request") { try roost.json(["requests"]).contains { $0["jid"] as? String == carol.jid.description } }
        let deny = try roost.run(["requests", "deny", carol.jid.description])
        #expect(deny.status == 0, "\(deny.stderr)")
        _ = try await carol.presence("unsubscribed", from: alice)
        #expect(try roost.json(["requests"]).isEmpty)

        // send: delivered to bob with an origin-id, archived once as outgoing.
        let send = try roost.run(["send", bob.jid.description, "你好 Bob, from roost"])
        #expect(send.status == 0, "\(send.stderr)")
        let message = try await bob.message { $0["body"] == "你好 Bob, from roost" }
        #expect(message["xml"]?.contains("urn:xmpp:sid:0") == true && message["xml"]?.contains("origin-id") == true, "\(message)")
        let piped = try roost.run(["send", bob.jid.description], stdin: "from stdin\n")
        #expect(piped.status == 0, "\(piped.stderr)")
        _ = try await bob.message { $0["body"] == "from stdin" }
        // A read of the server archive after the sends: the archive's copy must not duplicate them.
        try await RoostBinary.waitForServerArchiveRead(config: roost.config, after: Date(), environment: roost.environment)
        let sent = try roost.json(["search", "--limit", "0", "is:out"])
        #expect(sent.filter { $0["body"] as? String == "你好 Bob, from roost" }.count == 1, "\(sent)")
        #expect(sent.contains { $0["body"] as? String == "from stdin" })

        // presence history: bob goes away, then offline.
        try await bob.presence(show: "away", status: "lunch", priority: 1)
        try await waitUntil("bob away in the presence log") {
            try roost.json(["presence", bob.jid.description]).contains { $0["show"] as? String == "away" }
        }
        try await bob.presence(type: "unavailable")
        try await waitUntil("bob offline in the presence log") {
            try roost.json(["presence", bob.jid.description]).contains { $0["kind"] as? String == "presence" && $0["availability"] as? String == "unavailable" }
        }
        let history = try roost.run(["presence", bob.jid.description, "--json"])
        #expect(history.status == 0)
        #expect(history.jsonLines.contains { $0["show"] as? String == "away" && $0["status"] as? String == "lunch" })
        #expect(history.jsonLines.first?["kind"] as? String == "summary")
        #expect(history.jsonLines.first?["available"] as? Bool == false)
        #expect(history.jsonLines.first?["last_seen"] is String)
        let human = try roost.run(["presence", bob.jid.description])
        #expect(human.stdout.contains("last seen"))
        #expect(try roost.run(["presence", "nobody@roost.test"]).status == 1)
        try await bob.presence(priority: 1)

        // vCard set: the peer reads it back, and the photo hash reaches it in presence.
        let photo = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8) + [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1F, 0x15, 0xC4, 0x89])
        let photoFile = try roost.directory.write("me.png", "")
        try photo.write(to: URL(fileURLWithPath: photoFile))
        let set = try roost.run(["vcard", "set", "--nickname", "小爱", "--fullname", "Alice Example", "--photo", photoFile, "--json"])
        #expect(set.status == 0, "\(set.stderr)")
        let published = try #require(set.jsonLines.first)
        let hash = try #require(published["photo_hash"] as? String)
        #expect(hash.count == 40)
        #expect(published["pep"] as? Bool == true)
        let peerView = try await bob.call("vcard-get", ["jid": alice.description])
        #expect(peerView["nickname"] == "小爱")
        #expect(peerView["fullname"] == "Alice Example")
        #expect(peerView["photo_base64"] == photo.base64EncodedString())
        let announced = try await bob.presence("available", from: alice) { $0["photo_hash"] == hash }
        #expect(announced["priority"] == "-1")

        // vCard show: bob's card from the server (--refresh), then from the cache with its avatar file.
        try await bob.call("vcard-set", ["fullname": "Bob Builder", "nickname": "bobby", "photo_type": "image/png",
                                         "photo_base64": photo.base64EncodedString()])
        let fetched = try #require(try roost.json(["vcard", "show", bob.jid.description, "--refresh"]).first)
        #expect(fetched["nickname"] as? String == "bobby")
        #expect(fetched["source"] as? String == "server")
        let avatar = try #require(fetched["photo_path"] as? String)
        #expect(FileManager.default.contents(atPath: avatar) == photo)
        #expect(avatar.hasPrefix(roost.directory.path + "/data/avatars/"))
        let cached = try #require(try roost.json(["vcard", "show", bob.jid.description]).first)
        #expect(cached["source"] as? String == "cache")
        #expect(cached["fullname"] as? String == "Bob Builder")
        let text = try roost.run(["vcard", "show", bob.jid.description])
        #expect(text.stdout.contains("nickname: bobby"))

        // rename, regroup, remove.
        #expect(try roost.run(["roster", "rename", bob.jid.description, "Robert"]).status == 0)
        #expect(try roost.run(["roster", "group", bob.jid.description, "Work", "Chess"]).status == 0)
        let renamed = try #require(try roost.rosterEntry(bob.jid))
        #expect(renamed["name"] as? String == "Robert")
        #expect(Set(renamed["groups"] as? [String] ?? []) == ["Work", "Chess"])
        let remove = try roost.run(["roster", "remove", bob.jid.description])
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(try roost.rosterEntry(bob.jid) == nil)
        let again = try roost.run(["roster", "remove", bob.jid.description])
        #expect(again.status == 1)
        #expect(again.stderr.contains("not on the roster"))

        let (exit, log) = agent.stop(signal: SIGTERM)
        #expect(exit == 0)
        #expect(!log.contains(alicePassword))
        #expect(!FileManager.default.fileExists(atPath: roost.socketPath))
        for peer in [bob, carol] { await peer.stop() }
    }
}
