import Foundation
import Testing
import RoostAgent
import RoostTestSupport
import RoostXMPP

/// The security review's hostile contacts and servers against a real `roost run` on the test server: forged
/// `<delay/>` stamps, a log line forged inside an IQ id, and clients that crowd the control socket or send it
/// nonsense. The attackers are slixmpp peers (contrib/scripts/xmpp-peer.py) and raw sockets.
@Suite("End to end: hostile contacts and clients", .requires(.server))
struct HostileInputEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    private func rows(_ roost: RoostUnderTest, _ query: [String] = []) throws -> [[String: Any]] {
        try roost.json(["search", "--limit", "0"] + query)
    }

    @Test func contactsCannotChooseTheirMessagesTimes() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let agent = try roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }
        let roostJID = try alice.with(resource: "roost")

        // The far future, the past with the server's own name forged as `from`, and before 1970; one of them to
        // the bare JID (offline storage, then Roost's read of the server archive), the others to Roost live.
        let forged: [(to: JID, stamp: String, from: String?)] = [
            (roostJID, "9999-12-31T23:59:59Z", nil),
            (alice, "2001-01-01T00:00:00Z", server.domain),
            (roostJID, "1969-12-31T23:59:59Z", bob.jid.description),
        ]
        let before = Int64(Date().timeIntervalSince1970 * 1000) - 1000
        for (index, message) in forged.enumerated() {
            let from = message.from.map { " from='\($0)'" } ?? ""
            try await bob.call("raw", ["xml": """
                <message xmlns='jabber:client' to='\(message.to)' type='chat' id='forged-\(index)'><body>forged stamp \(index)</body>\
                <delay xmlns='urn:xmpp:delay'\(from) stamp='\(message.stamp)'/></message>
                """])
        }
        var stored: [[String: Any]] = []
        try await waitUntil("the three messages in the archive", timeout: .seconds(60)) {
            stored = try rows(roost, ["forged", "stamp"])
            return stored.count == 3
        }
        let after = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        for (index, message) in forged.enumerated() {
            let row = try #require(stored.first { $0["body"] as? String == "forged stamp \(index)" })
            // Stored at the time Roost (or the server archive) received it, the claim kept beside it.
            let time = try #require((row["timestamp"] as? String).flatMap(Self.milliseconds))
            #expect(time >= before && time <= after, "\(index): \(row["timestamp"] ?? "")")
            #expect(row["claimed_at"] as? String == message.stamp.replacingOccurrences(of: "Z", with: ".000Z"), "\(row)")
        }
        // Newest first is the last one sent, not the one from year 9999.
        let newest = try roost.json(["search", "--limit", "1"])
        #expect(newest.first?["body"] as? String == "forged stamp 2")
        // People see the claim.
        let human = try roost.run(["search", "forged", "stamp", "0"])
        #expect(human.stdout.contains("(sender's clock says 99"), "\(human.stdout)")
    }

    @Test func serverTextCannotForgeLogLines() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let mallory = try await XMPPPeer.registered(on: server, "mallory")
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let agent = try RoostBinary.start(["run", "--config", roost.config, "-vv"], environment: roost.environment)
        defer { agent.stop(signal: SIGKILL) }
        try agent.waitForReady()
        let roostJID = try alice.with(resource: "roost")
        // An answer to a question Roost never asked, whose id carries a line break, a whole fake log line and a
        // right-to-left override: Roost logs the id it drops.
        let marker = "FORGED-\(UUID().uuidString.prefix(8))"
        try await mallory.call("raw", ["xml": """
            <iq xmlns='jabber:client' type='result' to='\(roostJID)' id='x&#10;2026-01-01T00:00:00.000Z ERROR \(marker) &#x202E;evil'/>
            """])
        try agent.waitForLog("dropping an IQ answer nobody asked for")
        try agent.waitForLog(marker)
        let log = agent.stderrSoFar
        let lines = log.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("2026-01-01T00:00:00.000Z ERROR") }, "\(log)")
        let dropped = try #require(lines.first { $0.contains(marker) })
        // The line break reaches Roost as sent (ejabberd) or as a space (Prosody normalises attribute values on
        // its way through); either way it stays inside the one record, as does the override, escaped.
        #expect(dropped.contains("x\\n2026-01-01T00:00:00.000Z ERROR \(marker) \\u{202e}evil")
                || dropped.contains("x 2026-01-01T00:00:00.000Z ERROR \(marker) \\u{202e}evil"), "\(dropped)")
        #expect(!dropped.unicodeScalars.contains { $0.value == 0x202E })
    }

    @Test func controlClientsCannotLockOutStatusNorFoolTheAgent() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let agent = try roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }

        // Sixteen clients connect and say nothing: `roost status` still answers.
        let idle = try (0..<ControlProtocol.maxConnections).map { _ in try #require(ControlClient.connect(path: roost.socketPath)) }
        // The slots are taken: an ordinary request is turned away (proof the crowd reached the agent)…
        let crowded = try #require(ControlClient.connect(path: roost.socketPath))
        let refused = try #require(crowded.exchange(Data(#"{"command":"roster.list"}"#.utf8)))
        #expect(String(decoding: refused, as: UTF8.self).contains("only status and ping are answered now"))
        // …and status gets through.
        let status = try roost.run(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains(alice.description))
        // The idle ones are closed soon, and ordinary requests are served again.
        try await waitUntil("the idle connections to time out", timeout: .seconds(Double(ControlProtocol.idleTimeoutSeconds) + 30)) {
            guard let probe = ControlClient.connect(path: roost.socketPath),
                  let answer = probe.exchange(Data(#"{"command":"roster.list"}"#.utf8), timeoutSeconds: 10) else { return false }
            return String(decoding: answer, as: UTF8.self).contains(#""ok":true"#)
        }
        #expect(idle.count == ControlProtocol.maxConnections)

        let client = try #require(ControlClient.connect(path: roost.socketPath))
        func ask(_ line: String) throws -> [String: Any] {
            let answer = try #require(client.exchange(Data(line.utf8), timeoutSeconds: 10))
            return try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
        }
        func error(_ answer: [String: Any]) -> (kind: String, message: String) {
            let error = answer["error"] as? [String: Any]
            return (error?["kind"] as? String ?? "", error?["message"] as? String ?? "")
        }
        // A path is not an address, and is refused at once instead of reaching the server.
        let path = try ask(#"{"command":"vcard.fetch","arguments":{"jid":"../../../etc/passwd"}}"#)
        #expect(error(path).kind == "invalid-argument", "\(path)")
        #expect(error(path).message.contains("is not a valid JID"))
        // Answering a friend request nobody sent is a mistake, said so.
        let answered = try ask(#"{"command":"requests.answer","arguments":{"jid":"nobody@\#(server.domain)","accept":true,"addBack":false}}"#)
        #expect(error(answered).kind == "not-found", "\(answered)")
        #expect(error(answered).message.contains("no friend request waiting"))
        // What was wrong with a request, in words.
        let typed = try ask(#"{"command":"roster.add","arguments":{"jid":["a"]}}"#)
        #expect(error(typed).message.contains("expected a string at arguments.jid"), "\(typed)")
        #expect(!error(typed).message.contains("String") && !error(typed).message.contains("Dictionary"))
        #expect(try roost.run(["status"]).status == 0)
    }

    private static func milliseconds(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }
}
