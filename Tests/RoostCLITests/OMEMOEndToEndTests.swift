import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Roost as the user's own OMEMO device, against an independent implementation: slixmpp-omemo 2.2.0 (PyPI,
/// in the virtualenv contrib/scripts/test makes; ROOST_TEST_OMEMO_PYTHON) driving contrib/scripts/omemo-peer.py
/// as bob and as alice's phone, through the suite's Prosody (PEP on).
@Suite("End to end: OMEMO", .serialized, .enabled(if: TestServer.isAvailable))
struct OMEMOEndToEndTests {
    let server: TestServer

    init() throws {
        server = try TestServer.require()
    }

    /// alice (Roost's account), bob, and alice's phone: accounts, peer state files and Roost's config.
    struct Setup {
        let dir: TestDirectory
        let alice: JID
        let alicePassword: String
        let bob: JID
        let bobPassword: String
        let config: String
        var archive: String { "\(dir.path)/data/archive.sqlite" }
    }

    func setUp() async throws -> Setup {
        let dir = try TestDirectory()
        let accounts = try await server.registeredAccounts(["alice", "bob"])
        let (alice, alicePassword) = accounts[0], (bob, bobPassword) = accounts[1]
        let config = try server.roostConfig(in: dir, account: alice.description, password: alicePassword, extra: "")
        return Setup(dir: dir, alice: alice, alicePassword: alicePassword, bob: bob, bobPassword: bobPassword, config: config)
    }

    static var python: String? { ProcessInfo.processInfo.environment["ROOST_TEST_OMEMO_PYTHON"] }

    /// Runs omemo-peer.py to completion; returns its JSON lines. A missing virtualenv fails the test.
    @discardableResult
    func peer(_ setup: Setup, as who: String, _ arguments: [String], timeout: TimeInterval = 120) throws -> [[String: Any]] {
        let running = try startPeer(setup, as: who, arguments)
        running.waitForExit(timeout: timeout)
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        #expect(status == 0, "omemo-peer \(arguments.joined(separator: " ")) failed (\(status)):\n\(output.suffix(3000))")
        return Self.jsonLines(output)
    }

    func startPeer(_ setup: Setup, as who: String, _ arguments: [String]) throws -> RunningRoost {
        guard let python = Self.python else {
            Issue.record("ROOST_TEST_OMEMO_PYTHON is not set: run the suite with contrib/scripts/test, which makes the slixmpp-omemo virtualenv")
            throw WaitTimedOut(what: "the OMEMO peer")
        }
        let (jid, password, resource) = switch who {
        case "bob": (setup.bob, setup.bobPassword, "peer")
        default: (setup.alice, setup.alicePassword, "phone")
        }
        let script = TestServer.packageRoot + "/contrib/scripts/omemo-peer.py"
        return try RoostBinary.startProgram(python, ["-W", "ignore", script] + arguments + [
            "--jid", jid.description, "--password", password, "--resource", resource, "--data", "\(setup.dir.path)/\(who).json",
            "--host", server.host, "--port", String(server.port), "--ca", server.caFile,
        ])
    }

    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }

    func sql(_ setup: Setup, _ query: String) throws -> String {
        try ArchiveCount.sqlite(setup.archive, query).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits until `query` (a count) reaches `count`; returns the last value.
    func waitForCount(_ setup: Setup, _ query: String, _ count: Int, timeout: TimeInterval = 60) async throws -> Int {
        var value = 0
        try? await waitUntil("\(count) rows", timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(250)) {
            value = Int((try? sql(setup, query)) ?? "") ?? 0
            return value >= count
        }
        return value
    }

    /// Waits until Roost has handled everything bob sent before now: bob sends a fresh encrypted marker and Roost
    /// archives it decrypted. The server delivers in order, so a late copy of anything earlier would be stored by then.
    func settle(_ setup: Setup) async throws {
        let marker = "settled \(UUID().uuidString)"
        try peer(setup, as: "bob", ["send", setup.alice.description, marker])
        let stored = try await waitForCount(setup, "SELECT count(*) FROM messages WHERE body = '\(marker)'", 1)
        #expect(stored == 1, "the marker '\(marker)' was not archived")
    }

    func startRoost(_ setup: Setup) async throws -> RunningRoost {
        let roost = try RoostBinary.start(["run", "--config", setup.config, "-v"])
        try await roost.wait(for: .omemoPublished())
        return roost
    }

    @Test func bobsMessagesInBothNamespacesCarbonsAndRoostSend() async throws {
        let setup = try await setUp()
        try peer(setup, as: "alice", ["setup"])
        let roost = try await startRoost(setup)
        defer { roost.stop(signal: SIGKILL) }

        // 50 messages in each namespace, decrypted, each once, searchable; never the fallback body.
        for namespace in ["oldmemo", "twomemo"] {
            try peer(setup, as: "bob", ["flood", setup.alice.description, "50", "--namespace", namespace, "--prefix", namespace])
        }
        let decrypted = "SELECT count(*) FROM messages WHERE encryption = 'omemo' AND e2e_failure IS NULL AND direction = 'in'"
        #expect(try await waitForCount(setup, decrypted, 100) == 100, "roost log:\n\(roost.stderrSoFar.suffix(4000))")
        #expect(try sql(setup, "SELECT count(DISTINCT body) FROM messages WHERE body LIKE '%mo-% secret'") == "100")
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body LIKE '%OMEMO encrypted%'") == "0")
        #expect(try sql(setup, "SELECT count(DISTINCT e2e_namespace) FROM messages WHERE encryption = 'omemo'") == "2")
        let found = try RoostBinary.run(["search", "--config", setup.config, "--json", "--limit", "0", "twomemo-17"]).jsonLines
        #expect(found.count == 1)

        // Roost's device sits in alice's published device list together with her phone's.
        let devices = try peer(setup, as: "bob", ["devices", setup.alice.description]).filter { $0["event"] as? String == "device" }
        #expect(devices.count == 2, "\(devices)")

        // alice's phone writes to bob: the sent carbons reach Roost and are archived decrypted as outgoing.
        try peer(setup, as: "alice", ["send", setup.bob.description, "from the phone 1", "from the phone 2"])
        let carbons = "SELECT count(*) FROM messages WHERE direction = 'out' AND is_carbon = 1 AND body LIKE 'from the phone %' AND encryption = 'omemo'"
        #expect(try await waitForCount(setup, carbons, 2) == 2, "roost log:\n\(roost.stderrSoFar.suffix(4000))")

        // roost send into the encrypted conversation: bob's client decrypts exactly the text. bob listens far longer
        // than the wait for the message below (then he is killed): on a loaded machine 30 s ran out before it came.
        let listener = try startPeer(setup, as: "bob", ["listen", "600"])
        try await waitUntil("bob's listener online", timeout: .seconds(60), detail: { listener.stderrSoFar.suffix(2000).description }) {
            listener.stderrSoFar.contains("\"online\"")
        }
        let text = "from roost 你好 <&> \(UUID().uuidString.prefix(6))"
        let sent = try RoostBinary.run(["send", "--config", setup.config, "--json", setup.bob.description, text])
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(sent.stdout.contains("\"encryption\":\"omemo\""))
        try? await waitUntil("bob to decrypt Roost's message", timeout: .seconds(120)) {
            Self.jsonLines(listener.stderrSoFar).contains { $0["event"] as? String == "message" && $0["body"] as? String == text }
        }
        let heard = Self.jsonLines(listener.stop(signal: SIGKILL).stderr)
        #expect(heard.contains { $0["event"] as? String == "message" && $0["body"] as? String == text }, "bob heard: \(heard)")
        #expect(try sql(setup, "SELECT encryption FROM messages WHERE direction = 'out' AND body = '\(text.replacingOccurrences(of: "'", with: "''"))'") == "omemo")
    }

    @Test func offlineMessagesForAnotherDeviceAndForgedOnes() async throws {
        let setup = try await setUp()
        try peer(setup, as: "alice", ["setup"])
        // Before Roost's device exists: encrypted for alice's phone only.
        try peer(setup, as: "bob", ["send", setup.alice.description, "before roost existed"])
        var roost = try await startRoost(setup)
        defer { roost.stop(signal: SIGKILL) }
        let undecryptable = "SELECT count(*) FROM messages WHERE e2e_failure = 'not encrypted for this device' AND body IS NULL AND raw IS NOT NULL"
        #expect(try await waitForCount(setup, undecryptable, 1) == 1, "roost log:\n\(roost.stderrSoFar.suffix(4000))")
        #expect(try ZeroLossSQL.withStanzas(setup.archive, undecryptable + " AND roost_stanza(raw) LIKE '%<payload%'") == 1, "the stored stanza keeps the payload")
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body LIKE '%OMEMO encrypted%'") == "0")
        let log = try RoostBinary.run(["log", "--config", setup.config, setup.bob.description]).stdout
        #expect(log.contains("could not be decrypted: not encrypted for this device"), "\(log)")

        // Once bob's client sees Roost's device it builds a session with it: new messages decrypt.
        try peer(setup, as: "bob", ["send", setup.alice.description, "after roost exists"])
        #expect(try await waitForCount(setup, "SELECT count(*) FROM messages WHERE body = 'after roost exists' AND encryption = 'omemo'", 1) == 1)

        // Forged payload (bad MAC) and a damaged key: archived as undecryptable, Roost carries on.
        try peer(setup, as: "bob", ["send", setup.alice.description, "forged payload", "--corrupt", "payload"])
        try peer(setup, as: "bob", ["send", setup.alice.description, "damaged key", "--corrupt", "key"])
        let forged = "SELECT count(*) FROM messages WHERE e2e_failure IS NOT NULL AND e2e_failure != 'not encrypted for this device'"
        #expect(try await waitForCount(setup, forged, 2) == 2, "roost log:\n\(roost.stderrSoFar.suffix(4000))")
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body IN ('forged payload', 'damaged key')") == "0")
        #expect(roost.isRunning)

        // While Roost is down: fetched from the server archive and decrypted at start.
        roost.stop(signal: SIGTERM)
        try peer(setup, as: "bob", ["flood", setup.alice.description, "5", "--prefix", "offline"])
        roost = try await startRoost(setup)
        #expect(try await waitForCount(setup, "SELECT count(*) FROM messages WHERE body LIKE 'offline-% secret' AND encryption = 'omemo'", 5) == 5,
                "roost log:\n\(roost.stderrSoFar.suffix(4000))")
        try await roost.wait(for: .serverArchiveRead(), timeout: 120)
        try await settle(setup)
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body LIKE 'offline-% secret'") == "5")
    }

    /// An encrypted group chat: bob's client (slixmpp-omemo) makes the room non-anonymous and encrypts for alice's
    /// devices, as Conversations and Dino do for a room's members; Roost learns bob's real JID from his presence
    /// and decrypts with his sessions. Then `roost omemo fingerprints|distrust|trust|retry` on bob's device, and what
    /// each does to the next message's trust.
    @Test func encryptedGroupChatAndTrustCommands() async throws {
        let setup = try await setUp()
        try peer(setup, as: "alice", ["setup"])
        let roost = try await startRoost(setup)
        defer { roost.stop(signal: SIGKILL) }
        let room = "omemo-\(UUID().uuidString.prefix(8).lowercased())@conference.\(server.domain)"
        let bob = try startPeer(setup, as: "bob", ["room", room, "bob", "in the room 1", "in the room 2 你好",
                                                    "--for", setup.alice.description, "--prefix", "room", "--timeout", "90", "--stay", "60"])
        defer { bob.stop(signal: SIGKILL) }
        try await waitUntil("bob's room", timeout: .seconds(60), detail: { bob.stderrSoFar.suffix(2000).description }) {
            bob.stderrSoFar.contains("\"joined\"")
        }
        let joined = try RoostBinary.run(["rooms", "join", "--config", setup.config, room])
        #expect(joined.status == 0, "\(joined.stderr)")
        let quotedRoom = room.replacingOccurrences(of: "'", with: "''")
        let decrypted = """
            SELECT count(*) FROM messages WHERE conversation = '\(quotedRoom)' AND type = 'groupchat' AND encryption = 'omemo'
              AND e2e_failure IS NULL AND body LIKE 'in the room %' AND direction = 'in' AND lower(real_jid) = lower('\(setup.bob)')
            """
        let roomMessages = try await waitForCount(setup, decrypted, 2)
        #expect(roomMessages == 2, """
            \((try? sql(setup, "SELECT direction, body, e2e_failure, real_jid FROM messages WHERE conversation = '\(quotedRoom)'")) ?? "")
            roost log:\n\(roost.stderrSoFar.suffix(4000))
            """)
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body LIKE '%OMEMO encrypted%'") == "0")
        let transcript = try RoostBinary.run(["log", "--config", setup.config, room]).stdout
        #expect(transcript.contains("in the room 2 你好"), "\(transcript)")

        // `roost send` into the encrypted room encrypts for its members' devices: bob's client decrypts it.
        let text = "to the room, encrypted \(UUID().uuidString.prefix(6))"
        let sent = try RoostBinary.run(["send", "--config", setup.config, "--json", room, text])
        #expect(sent.status == 0 && sent.stdout.contains("\"encryption\":\"omemo\""), "\(sent.stdout)\(sent.stderr)")
        try await waitUntil("bob to decrypt Roost's message", timeout: .seconds(30), detail: { bob.stderrSoFar.suffix(3000).description }) {
            Self.jsonLines(bob.stderrSoFar).contains { $0["event"] as? String == "message" && $0["body"] as? String == text }
        }
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body = '\(text)' AND direction = 'out' AND encryption = 'omemo'") == "1")
        bob.stop(signal: SIGKILL)

        // bob's device, learnt from his messages: blind trust until verified.
        let listed = try RoostBinary.run(["omemo", "fingerprints", "--config", setup.config, "--json", setup.bob.description])
        #expect(listed.status == 0, "\(listed.stderr)")
        let bobs = listed.jsonLines.filter { ($0["jid"] as? String)?.lowercased() == setup.bob.description.lowercased() }
        #expect(bobs.count == 1, "\(listed.stdout)")
        let fingerprint = try #require(bobs.first?["fingerprint"] as? String, "\(listed.stdout)")
        #expect(bobs.first?["trust"] as? String == "blind")
        #expect(try sql(setup, "SELECT DISTINCT e2e_fingerprint FROM messages WHERE body LIKE 'in the room %'") == fingerprint)

        // distrusted: the next message is still archived, marked distrusted; verified: marked verified.
        for (verb, trust, text) in [("distrust", "distrusted", "after distrust"), ("trust", "verified", "after trust")] {
            let changed = try RoostBinary.run(["omemo", verb, "--config", setup.config, setup.bob.description, fingerprint])
            #expect(changed.status == 0, "\(changed.stderr)")
            try peer(setup, as: "bob", ["send", setup.alice.description, text])
            let marked = "SELECT count(*) FROM messages WHERE body = '\(text)' AND e2e_trust = '\(trust)'"
            let found = try await waitForCount(setup, marked, 1)
            #expect(found == 1, "\((try? sql(setup, "SELECT body, e2e_trust FROM messages WHERE body LIKE 'after %'")) ?? "")\n\(roost.stderrSoFar.suffix(3000))")
        }
        let after = try RoostBinary.run(["omemo", "fingerprints", "--config", setup.config, "--json", setup.bob.description]).jsonLines
        #expect(after.first { $0["fingerprint"] as? String == fingerprint }?["trust"] as? String == "verified")

        // A fingerprint nobody has, and one that is no fingerprint: clear errors, non-zero.
        let unknown = try RoostBinary.run(["omemo", "trust", "--config", setup.config, setup.bob.description, String(repeating: "ab", count: 32)])
        #expect(unknown.status != 0 && unknown.stderr.contains("no device of"), "\(unknown.stderr)")
        let malformed = try RoostBinary.run(["omemo", "trust", "--config", setup.config, setup.bob.description, "12 34"])
        #expect(malformed.status != 0 && malformed.stderr.contains("64 hex digits"), "\(malformed.stderr)")

        // retry: a forged message stays undecryptable, counted as tried (the agent is down: roost logs in itself).
        try peer(setup, as: "bob", ["send", setup.alice.description, "forged", "--corrupt", "payload"])
        #expect(try await waitForCount(setup, "SELECT count(*) FROM messages WHERE e2e_failure IS NOT NULL", 1) == 1)
        roost.stop(signal: SIGTERM)
        let retried = try RoostBinary.run(["omemo", "retry", "--config", setup.config, "--json"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.jsonLines.first?["tried"] as? Int == 1 && retried.jsonLines.first?["decrypted"] as? Int == 0, "\(retried.stdout)")
    }

    @Test func killNineDuringAnEncryptedFlood() async throws {
        let setup = try await setUp()
        try peer(setup, as: "alice", ["setup"])
        let roost = Restarter(arguments: ["run", "--config", setup.config, "-v"])
        try await roost.start(until: .omemoPublished())
        let count = 1000
        let flood = try startPeer(setup, as: "bob", ["flood", setup.alice.description, String(count), "--prefix", "kill"])
        var kills = 0
        while flood.isRunning && kills < 15 {
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...900)))
            try await roost.killAndRestart()
            kills += 1
        }
        try? await waitUntil("the flood to end", timeout: .seconds(240), every: .milliseconds(200)) { !flood.isRunning }
        let peerOutput = flood.stop(signal: SIGKILL).stderr
        #expect(peerOutput.contains("\"count\": \(count)"), "the flood did not finish:\n\(peerOutput.suffix(2000))")
        let query = "SELECT count(*) FROM messages WHERE body LIKE 'kill-% secret' AND encryption = 'omemo' AND e2e_failure IS NULL"
        let decrypted = try await waitForCount(setup, query, count, timeout: 180)
        try await settle(setup)
        let log = await roost.stop()
        #expect(decrypted == count, "roost log:\n\(log.suffix(4000))")
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE body LIKE 'kill-% secret'") == String(count))
        #expect(try sql(setup, "SELECT count(DISTINCT body) FROM messages WHERE body LIKE 'kill-% secret'") == String(count))
        #expect(try sql(setup, "SELECT count(*) FROM messages WHERE e2e_failure IS NOT NULL") == "0")
        #expect(kills > 0)
        print("OMEMO kill -9 test: \(kills) kills, \(decrypted) of \(count) decrypted exactly once")
    }
}
