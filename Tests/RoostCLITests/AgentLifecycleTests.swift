import Foundation
import RoostCore
import Testing
import RoostTestSupport
import RoostXMPP

/// `roost run` stays in charge of itself whatever an account does: a `password_command` that hangs neither
/// blocks start-up nor SIGTERM nor the control socket; an account whose password is refused waits for the
/// user (and SIGHUP makes it try again), and when every account is refused before any has logged in (a wrong
/// config), the agent exits 78 so systemd shows it. Once one has logged in, see AgentKeepsRunningTests.
@Suite("roost run lifecycle", .requires(.server))
struct AgentLifecycleTests {
    let server: TestServer

    init() throws { server = try TestServer.require() }

    func config(_ dir: TestDirectory, account: JID, passwordLine: String) throws -> String {
        try dir.write("config.ini", """
            [general]
            reconnect_max_seconds = 2
            [archive]
            path = \(dir.path)/data/archive.sqlite
            [account \(account)]
            \(passwordLine)
            host = \(server.host)
            port = \(server.port)
            ca_file = \(server.caFile)

            """)
    }

    @Test func hungPasswordCommandBlocksNeitherStatusNorSigterm() async throws {
        let dir = try TestDirectory()
        let (client, alice, _) = try await server.registeredClient("alice")
        await client.disconnect()
        // A duration of its own: other runs of this test on the same machine have their own sleepers.
        let sleeper = "sleep 987.\(Int.random(in: 100_000...999_999))"
        let config = try config(dir, account: alice, passwordLine: "password_command = \(sleeper)")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.wait(for: .answering)
        // The agent answers while the command hangs: the account is still connecting (resolving its password).
        let status = try await offPool { try RoostBinary.run(["status", "--config", config, "--json"], timeout: 20) }
        let account = status.jsonLines.first { $0["kind"] as? String == "account" }
        #expect(account?["state"] as? String == "connecting", "\(status.stdout)\n\(status.stderr)")
        // SIGTERM ends it at once, and the command's process group goes with it.
        let started = ContinuousClock.now
        let (exit, log) = roost.stop(signal: SIGTERM, timeout: 15)
        #expect(exit == 0, "\(log)")
        #expect(ContinuousClock.now - started < .seconds(15), "SIGTERM waited for the password command")
        let sleepers = try TmpfsMount.run("/usr/bin/pgrep", ["-f", "^\(sleeper)$"])
        #expect(sleepers.status != 0 || sleepers.output.isEmpty, "the hung password_command survived: \(sleepers.output)")
    }

    @Test func refusedPasswordWaitsForTheUserAndEveryAccountFailingExits78() async throws {
        let dir = try TestDirectory()
        let (client, alice, _) = try await server.registeredClient("alice")
        await client.disconnect()
        let config = try config(dir, account: alice, passwordLine: "password = definitely-wrong-\(UUID().uuidString.prefix(6))")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitUntil("roost run to exit", timeout: .seconds(60), detail: { roost.stderrSoFar }) { !roost.isRunning }
        let (exit, log) = roost.stop(signal: SIGTERM, timeout: 5)
        #expect(exit == 78, "\(log)")
        #expect(log.contains("\(alice): authentication failed: not-authorized") && log.contains("check the account's password"), "\(log)")
        #expect(log.contains("every account failed to log in") && log.contains("stopping with exit status 78"), "\(log)")
        // The log says what happens: no retry is promised by an agent that stops.
        #expect(!log.contains("retrying in") && !log.contains("tries again"), "\(log)")
        #expect(!log.contains("definitely-wrong"), "the password must not be logged")
    }

    /// Two accounts, one with a wrong password: the agent keeps running for the other; SIGHUP makes the waiting
    /// one try again at once.
    @Test func sighupRetriesAnAccountThatWaits() async throws {
        let dir = try TestDirectory()
        let (good, goodJID, goodPassword) = try await server.registeredClient("alice")
        await good.disconnect()
        let (bad, badJID, _) = try await server.registeredClient("carol")
        await bad.disconnect()
        let config = try dir.write("config.ini", """
            [general]
            reconnect_max_seconds = 2
            [archive]
            path = \(dir.path)/data/archive.sqlite
            [account \(goodJID)]
            password = \(goodPassword)
            host = \(server.host)
            port = \(server.port)
            ca_file = \(server.caFile)
            [account \(badJID)]
            password = wrong-\(UUID().uuidString.prefix(6))
            host = \(server.host)
            port = \(server.port)
            ca_file = \(server.caFile)

            """)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        // Once the other account is online, the agent keeps running, and the refused one says what it does next.
        try await roost.ready("\(goodJID)")
        try await ZeroLossRig.waitForLog(roost, "\(badJID): authentication failed")
        try await ZeroLossRig.waitForLog(roost, "tries this one again in 60 minutes, or at once on SIGHUP")
        let attemptsBefore = roost.stderrSoFar.components(separatedBy: "\(badJID): authentication failed").count
        try await roost.hangUp()
        try await waitUntil("another login attempt for the waiting account", timeout: .seconds(30), detail: { roost.stderrSoFar }) {
            roost.stderrSoFar.components(separatedBy: "\(badJID): authentication failed").count > attemptsBefore
        }
        #expect(roost.isRunning, "one account still works: the agent keeps running")
    }
}
