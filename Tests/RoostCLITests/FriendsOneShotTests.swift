import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// The same commands with no agent running: roost logs in once by itself, acts, archives and logs out.
/// The contacts are slixmpp peers (contrib/scripts/xmpp-peer.py).
@Suite("Friends without an agent (one-shot login)", .requires(.server))
struct FriendsOneShotTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    @Test func addSendDenyAndStatusWithoutAgent() async throws {
        let (own, alice, alicePassword) = try await server.registeredClient("alice")
        await own.disconnect()
        let carol = try await XMPPPeer.registered(on: server, "carol", resource: "phone")
        let dave = try await XMPPPeer.registered(on: server, "dave", resource: "phone")
        let erin = try await XMPPPeer.registered(on: server, "erin", resource: "phone")
        let roost = try RoostUnderTest(server: server, account: alice, password: alicePassword)

        let status = try roost.run(["status"])
        #expect(status.status == 3)
        #expect(status.stdout.contains("not running"))

        let add = try roost.run(["roster", "add", carol.jid.description, "--group", "Family", "--json"])
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.jsonLines.first?["via"] as? String == "one-shot")
        _ = try await carol.presence("subscribe", from: alice)
        try await carol.presence(to: alice, type: "subscribed")
        try await waitUntil("subscription to") { try roost.rosterEntry(carol.jid)?["subscription"] as? String == "to" }
        // The one-shot login stays invisible: it sent no available presence.
        #expect(!carol.events.contains { $0.kind == "presence" && $0["kind"] == "available" && $0["from"]?.hasPrefix(alice.description) == true })

        let send = try roost.run(["send", carol.jid.description, "one-shot hello", "--json"])
        #expect(send.status == 0, "\(send.stderr)")
        #expect(send.jsonLines.first?["via"] as? String == "one-shot")
        _ = try await carol.message { $0["body"] == "one-shot hello" }
        let archived = try roost.json(["search", "is:out", "hello"])
        #expect(archived.count == 1)
        #expect(archived.first?["conversation"] as? String == carol.jid.description)

        // A request that arrived while nothing ran (the server acknowledged it), refused.
        try await dave.presence(to: alice, type: "subscribe")
        let deny = try roost.run(["requests", "deny", dave.jid.description])
        #expect(deny.status == 0, "\(deny.stderr)")
        _ = try await dave.presence("unsubscribed", from: alice)
        // Accepting a request Roost never saw would pre-approve whoever it is: refused, and nothing is sent.
        try await erin.presence(to: alice, type: "subscribe")
        let unseen = try roost.run(["requests", "accept", erin.jid.description])
        #expect(unseen.status != 0 && unseen.stderr.contains("\(erin.jid) has no pending friend request")
                && unseen.stderr.contains("roost roster add"), "\(unseen.stderr)")
        #expect(!erin.events.contains { $0.kind == "presence" && $0["kind"] == "subscribed" })

        // The archive keeps the roster and the answers; the cached roster needs no server.
        let cached = try roost.json(["roster", "--cached"])
        #expect(cached.contains { $0["jid"] as? String == carol.jid.description && ($0["groups"] as? [String]) == ["Family"] })

        // Errors: bad JID is a usage error, wrong password a connection error, neither leaks the password.
        let bad = try roost.run(["send", "not a jid", "x"])
        #expect(bad.status == 2, "\(bad.stderr)")
        let wrong = try RoostUnderTest(server: server, account: alice, password: "wrong-password-xyz")
        let refused = try wrong.run(["roster"])
        #expect(refused.status == 3, "\(refused.stderr)")
        #expect(refused.stderr.contains("not-authorized"))
        #expect(!refused.stderr.contains("wrong-password-xyz"))
        for peer in [carol, dave] { await peer.stop() }
    }

    @Test func registerWithVCardThenPasswdThenUnregister() async throws {
        let (own, existing, existingPassword) = try await server.registeredClient("host")
        await own.disconnect()
        let roost = try RoostUnderTest(server: server, account: existing, password: existingPassword)
        let newJID = server.uniqueJID("new")
        let photoFile = try roost.directory.write("face.gif", "GIF89a-not-really-an-image")
        let register = try roost.run(["register", newJID.description, "--password-command", "echo first-secret-1",
                                      "--nickname", "新人", "--photo", photoFile])
        #expect(register.status == 0, "\(register.stderr)")
        #expect(register.stdout.contains("registered \(newJID)"))
        #expect(register.stderr.contains("[account \(newJID)]"))
        #expect(!register.stdout.contains("first-secret-1") && !register.stderr.contains("first-secret-1"))

        // Another client logs in with the new account and reads the vCard Roost published.
        let newcomer = try await XMPPPeer.start(on: server, jid: newJID, password: "first-secret-1")
        let card = try await newcomer.call("vcard-get")
        #expect(card["nickname"] == "新人")
        #expect(card["photo_type"] == "image/gif")
        #expect(card["photo_base64"] == Data("GIF89a-not-really-an-image".utf8).base64EncodedString())
        await newcomer.stop()

        let again = try roost.run(["register", newJID.description, "--password-command", "echo x"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))

        // passwd and unregister act on the configured account.
        let account = try RoostUnderTest(server: server, account: newJID, password: "first-secret-1")
        let passwd = try account.run(["passwd", "--password-command", "echo second-secret-2"])
        #expect(passwd.status == 0, "\(passwd.stderr)")
        let relogin = XMPPClient(configuration: server.configuration(for: newJID, password: "second-secret-2"))
        _ = try await relogin.connect()
        await relogin.disconnect()

        let changed = try RoostUnderTest(server: server, account: newJID, password: "second-secret-2")
        let unconfirmed = try changed.run(["unregister"])
        #expect(unconfirmed.status == 2, "no terminal and no --yes: \(unconfirmed.stderr)")
        let unregister = try changed.run(["unregister", "--yes"])
        #expect(unregister.status == 0, "\(unregister.stderr)")
        let gone = XMPPClient(configuration: server.configuration(for: newJID, password: "second-secret-2"))
        await #expect(throws: ClientError.self) { _ = try await gone.connect() }
    }

    /// Through the running agent: the removal is a success (exit 0), and the agent stops the account instead
    /// of logging in again to an account that no longer exists. ejabberd answers from the session's own JID
    /// and closes the stream with <conflict/> "User removed"; Prosody answers and closes.
    @Test func unregisterThroughTheAgentStopsTheAccount() async throws {
        let (own, jid, password) = try await server.registeredClient("gone")
        await own.disconnect()
        let roost = try RoostUnderTest(server: server, account: jid, password: password)
        let agent = try await roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }
        let unregister = try roost.run(["unregister", "--yes", "--json"])
        #expect(unregister.status == 0, "\(unregister.stderr)")
        #expect(unregister.jsonLines.first?["via"] as? String == "agent")
        try await waitUntil("the account stopped in the agent") {
            try roost.json(["status"]).contains { $0["kind"] as? String == "account" && $0["state"] as? String == "stopped" }
        }
        // Stopped for good: no second login (which would fail: the account is gone).
        #expect(!agent.stderrSoFar.contains("authentication failed"), "\(agent.stderrSoFar)")
        #expect(agent.stderrSoFar.contains("deleted on the server"))
        let gone = XMPPClient(configuration: server.configuration(for: jid, password: password))
        await #expect(throws: ClientError.self) { _ = try await gone.connect() }
        let (exit, _) = agent.stop(signal: SIGTERM)
        #expect(exit == 0)
    }
}
