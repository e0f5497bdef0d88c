import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Roost's promise under faults: every message the server accepted is in the archive exactly once,
/// whatever happens to Roost (kill -9), the server (restart) or the connection (cut). Each test has its own
/// server, since it restarts or floods it; the sender is slixmpp (contrib/scripts/xmpp-peer.py), which waits
/// for the server's acks, so "sent" means "the server accepted it".
@Suite("Zero loss under faults", .serialized, .enabled(if: PrivateServer.isAvailable))
struct ZeroLossFaultTests {
    let floodSize = FaultSize.pick(suite: 2000, soak: 10_000)

    @Test func killNineAtRandomMomentsDuringAFlood() async throws {
        let rig = try await ZeroLossRig.make(hibernationSeconds: 30)
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let prefix = "kill-\(UUID().uuidString.prefix(6))"
        // Paced at 50 a second (40 s; 200 s at soak size), so that kills land while it comes in however slow or fast
        // the machine is (in the whole suite, with everything else running, a kill and restart can take seconds).
        var floods = [(prefix: prefix, flood: try PeerFlood(rig, to: rig.roostJID, count: floodSize, prefix: prefix, perSecond: 50))]
        // Counted in-process (a sqlite3 process per look made each turn of the loop below take seconds on a busy machine).
        func stored(_ flood: String) throws -> Int {
            try ZeroLossSQL.withStanzas(rig.archive, "SELECT count(*) FROM messages WHERE message_id LIKE '\(flood)-%'")
        }
        // Kills at random moments: at least 10 (22 at soak size), and on (up to twice that) until 4 (8) of them hit
        // while the archive still lacked part of the flood or it is all in. On a loaded machine a restart takes
        // seconds (15 s and more were seen), so few kills fit into one flood: while fewer than 3 (5) hit one, another
        // flood follows (up to four in all).
        let leastKills = FaultSize.pick(suite: 10, soak: 22), leastMidFlood = FaultSize.pick(suite: 4, soak: 8)
        let floodAgainBelow = FaultSize.pick(suite: 3, soak: 5)
        var kills = 0
        var killsMidFlood = 0
        while kills < 2 * leastKills - 4 {
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...450)))
            let midFlood = try stored(floods[floods.count - 1].prefix) < floodSize
            if !midFlood && killsMidFlood < floodAgainBelow && floods.count < 4 {
                let next = prefix + "x\(floods.count)"
                floods.append((next, try PeerFlood(rig, to: rig.roostJID, count: floodSize, prefix: next, perSecond: 50)))
                continue
            }
            if kills >= leastKills && (!midFlood || killsMidFlood >= leastMidFlood) { break }
            if midFlood { killsMidFlood += 1 }
            try await roost.killAndRestart()
            kills += 1
        }
        for flood in floods { try await flood.flood.finish() }
        let prefixes = floods.map(\.prefix)
        // Then a deterministic one: an agent that is online and has committed what it received (its
        // stream-management session with it) is killed; the next process must resume that session.
        try await roost.killAndRestart(untilReady: true)
        kills += 1
        let marker = try PeerFlood(rig, to: rig.roostJID, count: 20, prefix: prefix + "m")
        try await marker.finish()
        try await waitUntil("the last 20 messages stored", timeout: .seconds(60)) {
            try stored(prefix + "m") >= 20
        }
        try await roost.killAndRestart(waitingFor: "session resumed")
        kills += 1
        do {
            try await waitUntil("every flood in the archive", timeout: .seconds(180), detail: {
                prefixes.map { "\($0): \((try? stored($0)) ?? -1) stored" }.joined(separator: ", ")
            }) {
                try prefixes.allSatisfy { try stored($0) >= floodSize }
            }
        } catch {
            let log = await roost.stop()
            let serverLog = (try? String(contentsOfFile: rig.prosody.directory + "/prosody.log", encoding: .utf8)) ?? ""
            let kept = NSTemporaryDirectory() + "roost-kill-failure-\(prefix)"
            try? FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
            try? serverLog.write(toFile: kept + "/server.log", atomically: true, encoding: .utf8)
            try? log.write(toFile: kept + "/roost.log", atomically: true, encoding: .utf8)
            try? FileManager.default.copyItem(atPath: rig.archive, toPath: kept + "/archive.sqlite")
            try? FileManager.default.copyItem(atPath: rig.prosody.directory, toPath: kept + "/server")
            let sessions = serverLog.split(separator: "\n").filter { $0.contains("esum") || $0.contains("ibernat") || $0.contains("unacked") || $0.contains("queue") }
            Issue.record("""
                \(error)
                missing: \(prefixes.map { "\($0): \(ZeroLossRig.missingRanges(rig.archive, prefix: $0, count: floodSize))" }); logs and archive kept in \(kept)
                server log, sessions:\n\(sessions.suffix(80).joined(separator: "\n"))
                log:\n\(log.suffix(20_000))
                """)
            throw error
        }
        try await rig.settleAfterAnArchiveRead()
        let log = await roost.stop()
        for flood in prefixes {
            try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: flood, messages: floodSize, chatStates: 0, log: log)
        }
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix + "m", messages: 20, chatStates: 0, log: log)
        // Counts agree with the server's at every moment: no stream ended over an acknowledgement.
        #expect(!log.contains("the server closed the stream: undefined-condition"), "\(log.suffix(4000))")
        #expect(killsMidFlood >= floodAgainBelow, "only \(killsMidFlood) of \(kills) kills hit while the flood was still coming in")
        let resumptions = log.components(separatedBy: "session resumed").count - 1
        print("kill -9 test: \(kills) kills (\(killsMidFlood) mid-flood), \(prefixes.count) floods of \(floodSize) messages once each; resumptions: \(resumptions)")
    }

    /// The server restarts while Roost still has the first half to take in (the archive is locked meanwhile,
    /// so Roost has stored none of it): the server's session and its queue are gone, and everything comes
    /// from the server archive once the lock is released.
    @Test func serverRestartMidFlood() async throws {
        let rig = try await ZeroLossRig.make(hibernationSeconds: 30)
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let prefix = "restart-\(UUID().uuidString.prefix(6))"
        let locker = try LockHolder(archive: rig.archive, seconds: 600)
        let first = try PeerFlood(rig, to: rig.roostJID, count: floodSize / 2, prefix: prefix + "a")
        try await first.finish()
        try await rig.waitForStatus("archive writes to fail") { $0["archive_writes"] as? String == "failing" }
        #expect(try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)a-%'") == 0,
                "the server must restart before Roost stored the first half")
        try rig.prosody.restart()
        _ = locker.process.stop(signal: SIGKILL, timeout: 5)
        let second = try PeerFlood(rig, to: rig.alice, count: floodSize / 2, prefix: prefix + "b")
        try await second.finish()
        try await waitUntil("both halves in the archive", timeout: .seconds(240)) {
            try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)%'") >= floodSize
        }
        try await rig.settleAfterAnArchiveRead()
        let log = await roost.stop()
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix + "a", messages: floodSize / 2, chatStates: 0, log: log)
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix + "b", messages: floodSize / 2, chatStates: 0, log: log)
    }

    @Test func connectionCutByTheNetwork() async throws {
        let direct = try await ZeroLossRig.make(hibernationSeconds: 30)
        // A relay between Roost and the server that can drop every connection at once.
        let proxy = try TCPProxy(target: direct.server.host, port: direct.server.port)
        defer { proxy.stop() }
        let rig = try direct.connecting(through: proxy.port)
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let prefix = "cut-\(UUID().uuidString.prefix(6))"
        let flood = try PeerFlood(rig, to: rig.roostJID, count: floodSize, prefix: prefix)
        // Cut twice while Roost is in the middle of taking the flood in, each time on a connection of its own: the
        // second cut waits until Roost is connected again (what it stores meanwhile may be its backlog).
        for (cut, threshold) in [floodSize * 3 / 10, floodSize * 65 / 100].enumerated() {
            try await waitUntil("\(threshold) messages stored", timeout: .seconds(120)) {
                try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") >= threshold
            }
            try await roost.waitForLog("connected as", count: cut + 1, timeout: .seconds(120))
            proxy.cut()
        }
        try await flood.finish()
        try await waitUntil("the whole flood", timeout: .seconds(180)) {
            try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") >= floodSize
        }
        try await rig.settleAfterAnArchiveRead()
        let log = await roost.stop()
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix, messages: floodSize, chatStates: 0, log: log)
        #expect(log.components(separatedBy: "connected as").count - 1 >= 3, "two cuts, two reconnections:\n\(log.suffix(3000))")
    }

    @Test func offlineForTheWholeFlood() async throws {
        let rig = try await ZeroLossRig.make(hibernationSeconds: 30)
        let prefix = "offline-\(UUID().uuidString.prefix(6))"
        let flood = try PeerFlood(rig, to: rig.alice, count: floodSize, prefix: prefix)
        try await flood.finish()
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(waitingFor: "server archive read")
        try await rig.settleAfterAnArchiveRead()
        let log = await roost.stop()
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix, messages: floodSize, chatStates: 0, log: log)
        // A second run reads nothing twice.
        let again = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await again.start(waitingFor: "server archive read")
        let second = await again.stop()
        #expect(second.contains("server archive read (1 page): 0 new messages"), "\(second.suffix(2000))")
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix, messages: floodSize, chatStates: 0, log: second)
    }
}

/// The `roost run` under test, restarted after each kill -9.
actor Restarter {
    let arguments: [String]
    private var current: RunningRoost?
    private(set) var kills = 0
    private var logs = ""

    init(arguments: [String]) { self.arguments = arguments }

    /// The running process's pid, for a kill that must not wait for this actor (`killWhen`).
    var pid: pid_t? { current?.pid }

    /// `untilReady`: waits until `roost status` says every account is online with its roster loaded.
    func start(waitingFor text: String? = nil, untilReady: Bool = false) async throws {
        let process = try RoostBinary.start(arguments)
        current = process
        if let text { try await ZeroLossRig.waitForLog(process, text, timeout: .seconds(120)) }
        if untilReady { try await process.ready(timeout: 120) }
    }

    func killAndRestart(waitingFor text: String? = nil, untilReady: Bool = false) async throws {
        if let current {
            let (_, log) = current.stop(signal: SIGKILL)
            logs += log
        }
        kills += 1
        try await start(waitingFor: text, untilReady: untilReady)
    }

    /// Waits until the running process's log holds `text` at least `count` times.
    func waitForLog(_ text: String, count: Int, timeout: Duration) async throws {
        let process = current
        try await waitUntil("\(count) × '\(text)' in roost's log", timeout: timeout, every: .milliseconds(200),
                            detail: { process?.stderrSoFar.suffix(3000).description ?? "" }) {
            (process?.stderrSoFar.components(separatedBy: text).count ?? 1) - 1 >= count
        }
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

    /// `listenPort`: 0 for any free port; a port an earlier proxy had, to bring "the network" back where it was.
    init(target: String, port targetPort: UInt16, listenPort: UInt16 = 0) throws {
        process = try RoostBinary.startProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/tcp-proxy.py", String(listenPort),
                                                                    target, String(targetPort)])
        try process.waitForLog("ready ", timeout: 60)
        let line = process.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("ready ") } ?? ""
        guard let p = UInt16(line.dropFirst(6)) else { throw WaitTimedOut(what: "the TCP proxy's port (\(line))") }
        port = p
    }

    func cut() { kill(process.pid, SIGUSR1) }

    /// Stops forwarding on every relayed connection without closing it (prints "stalled N").
    func stall() { kill(process.pid, SIGUSR2) }

    /// Keeps what arrives, forwarding nothing, until `release` (the proxy prints "held", then "released").
    func hold() async throws { try await toggle(saying: "held") }

    func release() async throws { try await toggle(saying: "released") }

    private func toggle(saying word: String) async throws {
        let lines = { [process] in process.stderrSoFar.split(separator: "\n").filter { $0 == word }.count }
        let before = lines()
        kill(process.pid, SIGWINCH)
        try await waitUntil("the proxy to say \(word)") { lines() > before }
    }

    func stop() { process.stop(signal: SIGTERM, timeout: 5) }
}
