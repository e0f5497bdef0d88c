import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Roost's promise under faults: every message the server accepted is in the archive exactly once,
/// whatever happens to Roost (kill -9), the server (restart) or the connection (cut).
/// Each test has its own Prosody, since it restarts or floods it.
@Suite("Zero loss under faults", .serialized, .enabled(if: PrivateServer.isAvailable))
struct ZeroLossFaultTests {
    let floodSize = 10_000

    /// A private server, alice's archive config, and bob ready to flood alice's Roost resource.
    struct Setup {
        let prosody: PrivateServer
        let dir: TestDirectory
        let config: String
        let alice: JID
        let bob: XMPPClient
        var archive: String { "\(dir.path)/data/archive.sqlite" }
    }

    func setUp(hibernation: Int = 30, host: String? = nil, port: UInt16? = nil) async throws -> Setup {
        let prosody = try PrivateServer(hibernationSeconds: hibernation)
        let server = prosody.server
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bob, _, _) = try await server.registeredClient("bob")
        let dir = try TestDirectory()
        var text = """
            [general]
            archive_poll_seconds = 2
            keepalive_seconds = 10
            reconnect_max_seconds = 2
            [archive]
            path = \(dir.path)/data/archive.sqlite
            [account \(alice)]
            password = \(password)
            host = \(host ?? server.host)
            port = \(port ?? server.port)
            ca_file = \(server.caFile)

            """
        text += ""
        let config = try dir.write("config.ini", text)
        return Setup(prosody: prosody, dir: dir, config: config, alice: alice, bob: bob)
    }

    /// Waits until the archive holds the whole flood (or the deadline passes) and returns the tally.
    func settle(_ setup: Setup, _ flood: Flood, timeout: TimeInterval = 120) async throws -> ArchiveCount.Tally {
        let deadline = Date().addingTimeInterval(timeout)
        var tally = ArchiveCount.Tally(rows: 0, distinctIDs: 0, matchingBodies: 0)
        while Date() < deadline {
            tally = try ArchiveCount.tally(archive: setup.archive, flood: flood)
            if tally.rows >= flood.count { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        // A little longer: late duplicates would show up now.
        try await Task.sleep(for: .seconds(3))
        return try ArchiveCount.tally(archive: setup.archive, flood: flood)
    }

    func expectExactlyOnce(_ tally: ArchiveCount.Tally, _ flood: Flood, _ log: String) {
        #expect(tally.rows == flood.count, "\(tally); roost log tail:\n\(log.suffix(4000))")
        #expect(tally.distinctIDs == flood.count)
        #expect(tally.matchingBodies == flood.count)
    }

    @Test func killNineAtRandomMomentsDuringAFlood() async throws {
        let setup = try await setUp()
        let roost = Restarter(arguments: ["run", "--config", setup.config, "-v"])
        try await roost.start(waitingFor: "online")
        let flood = Flood(count: floodSize)
        let target = try setup.alice.with(resource: "roost")
        let kills = 22
        let killer = Task {
            for _ in 0..<kills {
                try await Task.sleep(for: .milliseconds(Int.random(in: 150...450)))
                try await roost.killAndRestart()
            }
        }
        try await flood.send(from: setup.bob, to: target, perSecond: 1000)
        try await killer.value
        let tally = try await settle(setup, flood)
        let log = await roost.stop()
        expectExactlyOnce(tally, flood, log)
        #expect(await roost.kills == kills)
        print("kill -9 test: \(kills) kills, \(tally); resumptions: \(log.components(separatedBy: "session resumed").count - 1)")
        await setup.bob.disconnect()
    }

    @Test func serverRestartMidFlood() async throws {
        let setup = try await setUp()
        let roost = Restarter(arguments: ["run", "--config", setup.config, "-v"])
        try await roost.start(waitingFor: "online")
        let first = Flood(count: floodSize / 2)
        let target = try setup.alice.with(resource: "roost")
        try await first.send(from: setup.bob, to: target, perSecond: 5000)
        // The server goes down while Roost is still taking in the first half.
        try setup.prosody.restart()
        let bob = XMPPClient(configuration: setup.prosody.server.configuration(for: setup.bob.configuration.jid,
                                                                                  password: setup.bob.configuration.password))
        _ = try await bob.connect()
        let second = Flood(count: floodSize / 2)
        try await second.send(from: bob, to: setup.alice, perSecond: 2000)
        let tally1 = try await settle(setup, first)
        let tally2 = try await settle(setup, second)
        let log = await roost.stop()
        expectExactlyOnce(tally1, first, log)
        expectExactlyOnce(tally2, second, log)
        await bob.disconnect()
    }

    @Test func connectionCutByTheNetwork() async throws {
        let prosodyFirst = try await setUp()
        // A relay between Roost and the server that can drop every connection at once.
        let proxy = try TCPProxy(target: prosodyFirst.prosody.server.host, port: prosodyFirst.prosody.server.port)
        defer { proxy.stop() }
        let setup = try await rewrite(prosodyFirst, port: proxy.port)
        let roost = Restarter(arguments: ["run", "--config", setup.config, "-v"])
        try await roost.start(waitingFor: "online")
        let flood = Flood(count: floodSize)
        let target = try setup.alice.with(resource: "roost")
        try await flood.send(from: setup.bob, to: target, perSecond: 1500) { i in
            if i == 3000 || i == 6500 { proxy.cut() }
        }
        let tally = try await settle(setup, flood)
        let log = await roost.stop()
        expectExactlyOnce(tally, flood, log)
        #expect(log.contains("session resumed") || log.contains("new messages"), "Roost should have resumed or caught up")
        await setup.bob.disconnect()
    }

    @Test func offlineForTheWholeFlood() async throws {
        let setup = try await setUp()
        let flood = Flood(count: floodSize)
        try await flood.send(from: setup.bob, to: setup.alice, perSecond: 5000)
        let roost = Restarter(arguments: ["run", "--config", setup.config, "-v"])
        try await roost.start(waitingFor: "online")
        let tally = try await settle(setup, flood)
        let log = await roost.stop()
        expectExactlyOnce(tally, flood, log)
        // A second run reads nothing twice.
        let again = Restarter(arguments: ["run", "--config", setup.config, "-v"])
        try await again.start(waitingFor: "server archive read")
        let after = try ArchiveCount.tally(archive: setup.archive, flood: flood)
        _ = await again.stop()
        #expect(after.rows == flood.count)
        await setup.bob.disconnect()
    }

    private func rewrite(_ setup: Setup, port: UInt16) async throws -> Setup {
        let text = try String(contentsOfFile: setup.config, encoding: .utf8)
            .replacingOccurrences(of: "port = \(setup.prosody.server.port)", with: "port = \(port)")
        try setup.dir.write("config.ini", text)
        return setup
    }
}

/// The `roost run` under test, restarted after each kill -9.
actor Restarter {
    let arguments: [String]
    private var current: RunningRoost?
    private(set) var kills = 0
    private var logs = ""

    init(arguments: [String]) { self.arguments = arguments }

    func start(waitingFor text: String? = nil) throws {
        let process = try RoostBinary.start(arguments)
        current = process
        if let text { try process.waitForLog(text) }
    }

    func killAndRestart() throws {
        if let current {
            let (_, log) = current.stop(signal: SIGKILL)
            logs += log
        }
        kills += 1
        try start()
    }

    /// SIGTERM; returns every run's log.
    func stop() -> String {
        if let current {
            let (status, log) = current.stop(signal: SIGTERM)
            logs += log + "\n(exit \(status))\n"
        }
        current = nil
        return logs
    }
}

/// contrib/scripts/tcp-proxy.py as a child process.
final class TCPProxy: @unchecked Sendable {
    let process: RunningRoost
    let port: UInt16

    init(target: String, port targetPort: UInt16) throws {
        process = try RoostBinary.startProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/tcp-proxy.py", "0", target, String(targetPort)])
        try process.waitForLog("ready ", timeout: 10)
        let line = process.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("ready ") } ?? ""
        guard let p = UInt16(line.dropFirst(6)) else { throw WaitTimedOut(what: "the TCP proxy's port (\(line))") }
        port = p
    }

    func cut() { kill(process.pid, SIGUSR1) }

    /// Stops forwarding on every relayed connection without closing it (prints "stalled N").
    func stall() { kill(process.pid, SIGUSR2) }

    func stop() { process.stop(signal: SIGTERM, timeout: 5) }
}
