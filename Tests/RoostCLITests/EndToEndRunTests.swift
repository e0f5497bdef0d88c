import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// `roost run` as a user runs it, against the real Prosody, with peers on Roost's own client library.
@Suite("End to end: roost run archives everything", .enabled(if: TestServer.isAvailable))
struct EndToEndRunTests {
    let server: TestServer

    init() throws { server = try TestServer.require() }

    private func client(_ jid: JID, _ password: String, resource: String, priority: Int) -> XMPPClient {
        var config = server.configuration(for: jid, password: password, resource: resource)
        config.priority = priority
        return XMPPClient(configuration: config)
    }

    /// Polls `roost search --json` until `count` rows match or the deadline passes.
    private func waitForMessages(_ query: [String], count: Int, config: String, timeout: TimeInterval = 30) throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        var rows: [[String: Any]] = []
        while Date() < deadline {
            rows = try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0"] + query).jsonLines
            if rows.count >= count { return rows }
            Thread.sleep(forTimeInterval: 0.3)
        }
        return rows
    }

    @Test func archivesMessagesStatesPresenceAndRequestsOnceEach() async throws {
        let dir = try TestDirectory()
        // The user's phone (priority 1), a contact, a stranger who asks to be friends, and an attacker.
        let (phone, alice, alicePassword) = try await server.registeredClient("alice", resource: "phone")
        let (bob, bobJID, _) = try await server.registeredClient("bob", resource: "laptop")
        let (carol, _, _) = try await server.registeredClient("carol")
        let (mallory, _, _) = try await server.registeredClient("mallory")
        let phoneEvents = EventCollector(phone)
        let bobEvents = EventCollector(bob)
        // Prosody sends subscription requests and roster pushes to "interested" resources only:
        // those that fetched the roster, as real clients do.
        for c in [phone, bob, carol, mallory] { _ = try await c.request(Roster.getRequest()) }
        try phone.send(Presence(priority: 1))
        try bob.send(Presence(priority: 1))

        // Mutual subscription between alice and bob, so bob's presence reaches alice.
        try phone.send(Presence(type: .subscribe, to: bobJID))
        _ = try await bobEvents.waitForStanza { $0.name == "presence" && Presence($0).type == .subscribe }
        try bob.send(Presence(type: .subscribed, to: alice))
        try bob.send(Presence(type: .subscribe, to: alice))
        _ = try await phoneEvents.waitForStanza { Presence($0).type == .subscribe }
        try phone.send(Presence(type: .subscribed, to: bobJID))
        try await Task.sleep(for: .milliseconds(300))

        let config = try server.roostConfig(in: dir, account: alice.description, password: alicePassword)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")
        let roostJID = try alice.with(resource: "roost")

        // Bob writes to alice's bare JID: the phone gets it, Roost gets carbons.
        let big = String(repeating: "長文 long text ", count: 65_536 / 18)
        let bodies = ["plain latin text", "中文消息：你好，好友！", "emoji 🎉👍 party", "<b>markup</b> & \"quotes\" 'apos'", big]
        var composing = Message(to: alice, type: .chat)
        composing.setChatState(.composing)
        try bob.send(composing)
        for body in bodies {
            var m = Message(to: alice, type: .chat, body: body)
            m.setChatState(.active)
            try bob.send(m)
        }
        var paused = Message(to: alice, type: .chat)
        paused.setChatState(.paused)
        try bob.send(paused)
        try bob.send(Presence(show: .away, status: "gone fishing", priority: 1))
        // The user answers from the phone: Roost archives it through a sent carbon.
        try phone.send(Message(to: bobJID, type: .chat, body: "reply from the phone"))
        // A stranger asks to be friends.
        try carol.send(Presence(type: .subscribe, to: alice, status: "hi, I'm Carol"))
        // Mallory forges a carbon and a roster push straight to Roost's resource.
        try mallory.send(Message(XMLStreamParserHelper.parse("""
            <message to='\(roostJID)' type='chat'><received xmlns='urn:xmpp:carbons:2'><forwarded xmlns='urn:xmpp:forward:0'>\
            <message xmlns='jabber:client' from='\(bobJID)/laptop' to='\(alice)' type='chat'><body>forged carbon text</body></message>\
            </forwarded></received></message>
            """)))
        let spoof = IQ(type: .set, to: roostJID, payload: Element("query", namespace: Namespace.roster,
            children: [.element(RosterItem(jid: try JID("mallory-evil@roost.test"), name: "Trusted Friend").element)]))
        async let spoofAnswer: IQ = mallory.request(spoof, timeout: .seconds(10))

        let rows = try waitForMessages([], count: bodies.count + 1, config: config)
        try await Task.sleep(for: .seconds(3)) // let a poll of the server archive run too: still once each
        let all = try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0"]).jsonLines
        #expect(all.count == bodies.count + 1, "rows: \(all.map { $0["body"] ?? "" })")
        for body in bodies {
            #expect(all.filter { ($0["body"] as? String) == body }.count == 1, "\(body.prefix(20)) once")
        }
        let reply = all.first { ($0["body"] as? String) == "reply from the phone" }
        #expect(reply?["direction"] as? String == "out")
        #expect(reply?["conversation"] as? String == bobJID.description)
        #expect(rows.allSatisfy { ($0["stanza_id"] as? String) != nil || ($0["direction"] as? String) == "out" })
        #expect(!all.contains { ($0["body"] as? String)?.contains("forged") == true })

        // Search in Chinese, by word and by two-character word; filters.
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "好友"]).jsonLines.count == 1)
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "消息"]).jsonLines.count == 1)
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "from:\(bobJID)", "party"]).jsonLines.count == 1)
        #expect(try RoostBinary.run(["search", "--config", config, "--json", "is:out"]).jsonLines.count == 1)
        let none = try RoostBinary.run(["search", "--config", config, "no-such-word-anywhere"])
        #expect(none.status == 1)
        let bad = try RoostBinary.run(["search", "--config", config, "\"unterminated"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("column"))

        // The transcript with chat states and presence interleaved.
        let log = try RoostBinary.run(["log", "--config", config, "--json", "--states", "--presence", bobJID.description]).jsonLines
        #expect(log.contains { $0["event"] as? String == "chat_state" && $0["state"] as? String == "composing" })
        #expect(log.contains { $0["event"] as? String == "chat_state" && $0["state"] as? String == "paused" })
        #expect(log.contains { $0["event"] as? String == "presence" && $0["show"] as? String == "away" && $0["status"] as? String == "gone fishing" })
        #expect(log.filter { $0["event"] as? String == "message" }.count == bodies.count + 1)

        let stats = try RoostBinary.run(["stats", "--config", config, "--json"]).jsonLines
        let conversation = stats.first { $0["kind"] as? String == "conversation" && $0["conversation"] as? String == bobJID.description }
        #expect(conversation?["messages"] as? Int == bodies.count + 1)
        #expect(conversation?["outgoing"] as? Int == 1)

        // The spoofed push was refused with an error, and nothing of it reached the archive.
        do {
            _ = try await spoofAnswer
            Issue.record("Roost accepted a roster push from a stranger")
        } catch let error as ClientError {
            guard case .stanzaError(let e) = error else { Issue.record("unexpected \(error)"); return }
            #expect(e.condition == "service-unavailable")
        }

        // SIGTERM: clean exit 0, after which the archive is intact and the subscription request is in it.
        let (status, stderr) = roost.stop(signal: SIGTERM)
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("stopped"))
        #expect(!stderr.contains(alicePassword))
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = ["\(dir.path)/data/archive.sqlite",
                            "SELECT (SELECT count(*) FROM subscription_requests WHERE jid LIKE 'carol-%'), (SELECT count(*) FROM contacts WHERE jid LIKE 'mallory-evil%')"]
        let pipe = Pipe()
        sqlite.standardOutput = pipe
        try sqlite.run()
        sqlite.waitUntilExit()
        let counts = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(counts == "1|0")
        let attributes = try FileManager.default.attributesOfItem(atPath: "\(dir.path)/data/archive.sqlite")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        for c in [phone, bob, carol, mallory] { await c.disconnect() }
    }

    @Test func configErrorsAreClearAndNonZero() throws {
        let dir = try TestDirectory()
        let open = try dir.write("open.ini", "[account a@roost.test]\npassword = secret-value\n", mode: 0o644)
        let r = try RoostBinary.run(["run", "--config", open])
        #expect(r.status != 0)
        #expect(r.stderr.contains("chmod 600"))
        #expect(!r.stderr.contains("secret-value"))
        let unknown = try dir.write("unknown.ini", "[archive]\npath = \(dir.path)/a.sqlite\ncolour = blue\n")
        let u = try RoostBinary.run(["run", "--config", unknown])
        #expect(u.status != 0)
        #expect(u.stderr.contains("unknown.ini:3"))
        let empty = try dir.write("empty.ini", "[archive]\npath = \(dir.path)/a.sqlite\n")
        let e = try RoostBinary.run(["run", "--config", empty])
        #expect(e.status != 0)
        #expect(e.stderr.contains("no account"))
    }
}

/// Parses one stanza from text (for hand-made hostile stanzas).
enum XMLStreamParserHelper {
    static func parse(_ s: String) -> Element {
        let parser = XMLStreamParser()
        let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
        for case .stanza(let e) in events { return e }
        fatalError("no stanza")
    }
}
