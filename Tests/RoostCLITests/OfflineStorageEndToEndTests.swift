import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Roost at priority -1 as the only resource: the server counts the account as offline and keeps messages to
/// the bare JID in offline storage (ejabberd bounces them once its cap is reached). `roost status` says so.
@Suite("End to end: roost status and offline storage", .requires(.server))
struct OfflineStorageEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    @Test func statusNotesWhenTheServerCountsTheAccountAsOffline() async throws {
        let (own, alice, password) = try await server.registeredClient("alone")
        await own.disconnect()
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let agent = try await roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }
        func storesOffline() throws -> Bool? {
            try roost.json(["status"]).first { $0["kind"] as? String == "account" }?["server_stores_offline"] as? Bool
        }
        #expect(try storesOffline() == true)
        let human = try roost.run(["status"])
        #expect(human.stdout.contains("the server counts it as offline"), "\(human.stdout)")
        #expect(human.stdout.contains("priority = 0"))
        // Shown at each `roost status`, so one short line, not a paragraph: the man page explains (issue 30, 11).
        let note = human.stdout.split(separator: "\n").filter { $0.contains("counts it as offline") }
        #expect(note.count == 1 && note.allSatisfy { $0.count <= 120 }, "\(note)")

        // The user's phone comes online: the server delivers to it, and the note goes away.
        let phone = try await XMPPPeer.start(on: server, jid: alice, password: password, resource: "phone")
        try await waitUntil("the phone seen by the agent") { try storesOffline() == false }
        #expect(!(try roost.run(["status"]).stdout.contains("counts it as offline")))

        await phone.stop()
        try await waitUntil("the phone gone") { try storesOffline() == true }

        // What the note warns of, on a server with a cap (ejabberd: Debian's 100): past it, senders get errors,
        // while Roost still archives every message from the server archive.
        if let limit = server.offlineLimit {
            let bob = try await XMPPPeer.registered(on: server, "bob")
            for i in 1...(limit + 5) { try await bob.send(to: alice, body: "to the bare JID \(i)") }
            let bounce = try await bob.message { $0["type"] == "error" && $0["error"] == "resource-constraint" }
            #expect(bounce["from"]?.hasPrefix(alice.description) == true, "\(bounce)")
            try await waitUntil("every message archived through MAM", timeout: .seconds(60)) {
                try roost.json(["search", "--limit", "0", "bare"]).count == limit + 5
            }
            await bob.stop()
        }
        let (exit, _) = agent.stop(signal: SIGTERM)
        #expect(exit == 0)
    }
}
