import Foundation
import RoostCore
import Testing
import RoostTestSupport
import RoostXMPP

/// Issue 30, 8: while the agent's account is offline (reconnecting), `roost send` queues a chat message in the
/// archive (pending, in the outbox) instead of failing, and the agent sends the queue in order once the account is
/// online again, each message exactly once; `roost roster` reads the roster from the archive meanwhile, and says so.
/// "The network" is a TCP relay between the agent and the server, stopped and started again on the same port.
@Suite("End to end: sending while the account is offline", .requires(.server), .serialized)
struct OfflineOutboxEndToEndTests {
    @Test func aSendWhileReconnectingIsQueuedAndSentOnceOnline() async throws {
        let server = try TestServer.require()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        var proxy: TCPProxy? = try TCPProxy(target: server.host, port: server.port)
        defer { proxy?.stop() }
        let port = try #require(proxy?.port)
        let config = try server.roostConfig(in: dir, account: alice.description, password: password, extra: "reconnect_max_seconds = 1")
        let text = try String(contentsOfFile: config, encoding: .utf8).replacingOccurrences(of: "port = \(server.port)", with: "port = \(port)")
        try dir.write("config.ini", text)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let added = try RoostBinary.run(["roster", "add", bob.jid.description, "--name", "Bobby", "--config", config])
        #expect(added.status == 0, "\(added.stderr)")
        func state() -> String { ((try? RoostBinary.accountStatus(config: config))?.first?["state"] as? String) ?? "?" }

        // The network goes away: the agent tries again and again.
        proxy?.stop()
        proxy = nil
        try await waitUntil("the account offline", timeout: .seconds(60), detail: { state() }) { !state().hasPrefix("online") }
        let marker = "outbox-\(UUID().uuidString.prefix(8))"
        for i in 1...3 {
            let sent = try RoostBinary.run(["send", "--json", "--config", config, bob.jid.description, "\(marker) \(i)"])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.jsonLines.first?["queued"] as? Bool == true && sent.jsonLines.first?["via"] as? String == "agent", "\(sent.stdout)")
        }
        let human = try RoostBinary.run(["send", "--config", config, bob.jid.description, "\(marker) 4"])
        #expect(human.status == 0 && human.stdout.hasPrefix("queued for \(bob.jid.bare)"), "\(human.stdout)\(human.stderr)")
        let roster = try RoostBinary.run(["roster", "--config", config])
        #expect(roster.status == 0 && roster.stdout.contains("\(bob.jid.bare) (Bobby)"), "\(roster.stdout)\(roster.stderr)")
        #expect(roster.stderr.contains("is not online") && roster.stderr.contains("the roster as last archived"), "\(roster.stderr)")
        let rosterJSON = try RoostBinary.run(["roster", "--json", "--config", config])
        #expect(rosterJSON.jsonLines.first?["from_archive"] as? Bool == true, "\(rosterJSON.stdout)")
        #expect(!bob.events.contains { ($0.fields["body"] as? String)?.hasPrefix(marker) == true }, "nothing is sent while offline")
        #expect(try ArchiveCount.sqlite(dir.path + "/data/archive.sqlite",
                                        "SELECT count(*) FROM messages m JOIN outbox o ON o.origin_id = m.origin_id WHERE m.delivery = 'pending'")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "4", "archived as pending, in the outbox")

        // The network comes back where it was: the queue goes out, in order, once each.
        proxy = try TCPProxy(target: server.host, port: server.port, listenPort: port)
        func received() -> [String] { bob.events.compactMap { $0.kind == "message" ? $0.fields["body"] as? String : nil }.filter { $0.hasPrefix(marker) } }
        try await waitUntil("bob received the queue", timeout: .seconds(90), detail: { "\(received()); \(state())" }) { received().count >= 4 }
        // Two reads of the server archive later, anything sent twice (a resend of an unsettled message) would be there.
        try await RoostBinary.waitForServerArchiveRead(config: config, after: Date())
        #expect(received() == (1...4).map { "\(marker) \($0)" }, "in order, exactly once")
        let archive = dir.path + "/data/archive.sqlite"
        #expect(try ArchiveCount.sqlite(archive, "SELECT group_concat(delivery) FROM messages WHERE body LIKE '\(marker)%'")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "sent,sent,sent,sent")
        #expect(try ArchiveCount.sqlite(archive, "SELECT count(*) FROM outbox").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        await bob.stop()
    }
}
