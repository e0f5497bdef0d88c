import RoostCore
import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Issue 30, 11: what `roost run` logs and `roost status` shows on a healthy link is what matters, not noise — sent
/// stanzas acknowledged while traffic flows, a clean stop without a TLS warning, SIGHUP silent about accounts that
/// do not wait.
@Suite("End to end: a healthy agent is quiet", .requires(.server))
struct QuietAgentEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    private func start(_ directory: TestDirectory, account: JID, password: String, extra: String = "") async throws -> (String, RunningRoost, [String: String]) {
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let environment = ["XDG_RUNTIME_DIR": directory.path + "/run"]
        let config = try server.roostConfig(in: directory, account: account.description, password: password, extra: extra)
        let agent = try RoostBinary.start(["run", "--config", config], environment: environment)
        try await agent.ready("\(account)")
        return (config, agent, environment)
    }

    /// A link never idle (a contact pings Roost every second) never gets the idle keepalive's `<r/>`: Roost asks for
    /// an acknowledgement itself once what it sent has waited half a keepalive interval, so nothing stays
    /// unacknowledged, and `roost status` says nothing about it.
    @Test func sentStanzasAreAcknowledgedOnABusyLink() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        defer { Task { await bob.stop() } }
        let directory = try TestDirectory("roost-busy-link")
        let (config, agent, environment) = try await start(directory, account: alice, password: password, extra: "keepalive_seconds = 5")
        defer { agent.stop(signal: SIGKILL) }
        let roost = try alice.with(resource: "roost")
        // 16 s of pings, one a second (the keepalive's idle probe would come after 2.5 s without traffic): each answer
        // is a sent stanza. Without Roost asking, the first answers would wait the whole time, past 2 × 5 s.
        let until = ContinuousClock.now + .seconds(16)
        while ContinuousClock.now < until {
            try await bob.call("ping", ["to": roost.description])
            try await Task.sleep(for: .seconds(1))
        }
        let status = try RoostBinary.run(["status", "--json", "--config", config], environment: environment)
        let account = try #require(status.jsonLines.first { $0["kind"] as? String == "account" }, "\(status.stdout)")
        #expect(account["acknowledgement_overdue"] as? Bool == false, "\(account)")
        #expect((account["unacknowledged_oldest_seconds"] as? Int ?? 0) < 10, "\(account)")
        let human = try RoostBinary.run(["status", "--config", config], environment: environment)
        #expect(!human.stdout.contains("acknowledged"), "a healthy link says nothing about acknowledgements: \(human.stdout)")
        let (exit, _) = agent.stop(signal: SIGTERM)
        #expect(exit == 0)
    }

    /// SIGHUP with every account online logs no "try again now"; SIGTERM then stops cleanly with no warning (the TLS
    /// session's end after Roost's own `</stream:stream>` is no problem).
    @Test func sighupAndCleanStopAreQuiet() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let directory = try TestDirectory("roost-quiet-stop")
        let (_, agent, _) = try await start(directory, account: alice, password: password)
        defer { agent.stop(signal: SIGKILL) }
        try await agent.hangUp()
        let (exit, log) = agent.stop(signal: SIGTERM)
        #expect(exit == 0, "\(log)")
        let afterStart = log.components(separatedBy: "control socket").dropFirst().joined(separator: "control socket")
        #expect(afterStart.contains("received signal 15"), "\(log)")
        #expect(!afterStart.contains("try again now"), "no account waits: \(afterStart)")
        let warnings = afterStart.split(separator: "\n").filter { $0.contains(" WARN ") || $0.contains(" ERROR ") }
        #expect(warnings.isEmpty, "a clean stop warns of nothing: \(warnings)")
    }
}
