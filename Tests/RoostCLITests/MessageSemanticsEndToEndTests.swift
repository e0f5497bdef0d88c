import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Reactions (XEP-0444), replies (XEP-0461 with a XEP-0428 fallback quote), retractions (XEP-0424), receipts
/// (XEP-0184), chat markers (XEP-0333) and the read state, as a real conversation carries them: bob and the user's
/// phone are slixmpp peers using slixmpp's own plugins; Roost sees bob's stanzas as carbons and the phone's as
/// sent carbons, and reads them all again from the server archive.
@Suite("End to end: reactions, replies, retractions, receipts and read state", .requires(.server))
struct MessageSemanticsEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    private func log(_ config: String, _ jid: JID) throws -> [[String: Any]] {
        try RoostBinary.run(["log", "--config", config, "--json", jid.description]).jsonLines
    }

    private func row(_ config: String, _ jid: JID, messageID: String) throws -> [String: Any]? {
        try log(config, jid).first { $0["message_id"] as? String == messageID }
    }

    private func reactions(_ row: [String: Any]?) -> Set<String> {
        Set((row?["current_reactions"] as? [[String: Any]] ?? []).map { "\($0["emoji"] ?? "?") \($0["from"] ?? "?")" })
    }

    private func search(_ config: String, _ query: String...) throws -> RoostBinary.Result {
        try RoostBinary.run(["search", "--config", config, "--json", "--limit", "0"] + query)
    }

    private func unread(_ config: String, _ jid: JID) throws -> Int {
        let lines = try RoostBinary.run(["status", "--config", config, "--json"]).jsonLines
        return lines.first { $0["kind"] as? String == "unread" && $0["conversation"] as? String == jid.description }?["unread"] as? Int ?? 0
    }

    @Test func reactionsRepliesRetractionsReceiptsAndReadState() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let phone = try await XMPPPeer.start(on: server, jid: alice, password: alicePassword, resource: "phone")
        try await phone.call("carbons")
        try await phone.presence(priority: 1)
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "laptop")
        let mallory = try await XMPPPeer.registered(on: server, "mallory")
        let bobJID = bob.jid

        let config = try server.roostConfig(in: dir, account: alice.description, password: alicePassword)
        let archive = "\(dir.path)/data/archive.sqlite"
        var roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()

        // A conversation: bob writes, the user asks from the phone, bob writes something he will take back.
        try await bob.send(to: alice, body: "hello there, how are you", id: "bob-1")
        try await phone.send(to: bobJID, body: "what time is the meeting tomorrow", id: "phone-1")
        try await bob.send(to: alice, body: "oops wrong chat secretword", id: "bob-2")
        try await waitUntil("three messages with bob") { try log(config, bobJID).count == 3 }

        // Reactions: bob's set changes (👍 → 👍❤️), a reaction he adds and removes, the user's own from the phone.
        // The first carries a fallback body, which must not become a message.
        try await bob.call("react", ["to": alice.description, "id": "bob-1", "reactions": ["👍"], "body": "👍"])
        try await bob.call("react", ["to": alice.description, "id": "phone-1", "reactions": ["🎉"]])
        try await bob.call("react", ["to": alice.description, "id": "phone-1", "reactions": [String]()])
        try await bob.call("react", ["to": alice.description, "id": "bob-1", "reactions": ["👍", "❤️"]])
        // (Archived before the phone reacts: reactions are shown in the order Roost got them.)
        try await waitUntil("bob's second set") { reactions(try row(config, bobJID, messageID: "bob-1")) == ["👍 \(bobJID)", "❤️ \(bobJID)"] }
        try await phone.call("react", ["to": bobJID.description, "id": "bob-1", "reactions": ["😂"]])
        let expected: Set<String> = ["👍 \(bobJID)", "❤️ \(bobJID)", "😂 me"]
        try await waitUntil("bob-1's final reactions", detail: { "\((try? row(config, bobJID, messageID: "bob-1")) ?? [:])" }) {
            reactions(try row(config, bobJID, messageID: "bob-1")) == expected
        }
        try await waitUntil("the reaction to phone-1 removed") {
            try Int(ArchiveCount.sqlite(archive, "SELECT count(*) FROM reactions WHERE target = 'phone-1'")
                .trimmingCharacters(in: .whitespacesAndNewlines)) == 2
        }
        #expect(reactions(try row(config, bobJID, messageID: "phone-1")).isEmpty)
        #expect(try log(config, bobJID).count == 3, "a reaction's fallback body is no message")
        #expect(try search(config, "has:reaction").jsonLines.map { $0["message_id"] as? String } == ["bob-1"])
        #expect(try search(config, "reaction:❤️").jsonLines.count == 1)
        #expect(try search(config, "reaction:🎉").status == 1, "a removed reaction is not found")
        let human = try RoostBinary.run(["log", "--config", config, bobJID.description]).stdout
        #expect(human.contains("👍 \(bobJID)") && human.contains("😂 me"), "\(human)")

        // A reply quoting the phone's question: the target is resolved, the quote is not the reply's text.
        try await bob.call("reply", ["to": alice.description, "reply_id": "phone-1", "reply_to": "\(alice)/phone",
                                     "quote": "what time is the meeting tomorrow", "body": "at noon, room 4", "message_id": "bob-3"])
        try await waitUntil("bob's reply") { try row(config, bobJID, messageID: "bob-3") != nil }
        let question = try row(config, bobJID, messageID: "phone-1")
        let reply = try row(config, bobJID, messageID: "bob-3")
        #expect(reply?["body"] as? String == "at noon, room 4")
        #expect(reply?["reply_to"] as? String == "phone-1" && reply?["reply_to_jid"] as? String == "\(alice)/phone", "\(reply ?? [:])")
        let context = reply?["reply"] as? [String: Any]
        #expect(context?["archive_id"] as? Int == question?["id"] as? Int && question?["id"] != nil)
        #expect(context?["body"] as? String == "what time is the meeting tomorrow")
        #expect(try search(config, "meeting").jsonLines.map { $0["message_id"] as? String } == ["phone-1"],
                "the fallback quote is not searched as the reply")
        #expect(try search(config, "is:reply").jsonLines.count == 1)
        #expect(try RoostBinary.run(["log", "--config", config, bobJID.description]).stdout.contains("↪ "))

        // A retraction of bob's message by someone else changes nothing (it reached Roost: it is recorded)...
        try await mallory.call("retract", ["to": alice.description, "id": "bob-2"])
        try await waitUntil("mallory's retraction to reach Roost") {
            try ArchiveCount.sqlite(archive, "SELECT count(*) FROM retractions WHERE from_jid LIKE 'mallory-%'")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        #expect(try search(config, "secretword").jsonLines.count == 1)
        // ...nor does one from the user's phone of a message bob sent (it reaches Roost as a sent carbon: refused, logged).
        try await phone.call("retract", ["to": bobJID.description, "id": "bob-2"])
        try await waitUntil("the phone's retraction refused") {
            try ArchiveCount.sqlite(archive, "SELECT count(*) FROM retractions WHERE status = 'refused' AND target = 'bob-2'")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        try roost.waitForLog("ignored: retraction of bob-2")
        #expect(try search(config, "secretword").jsonLines.count == 1)
        // ...bob's own takes the text out of search and leaves a tombstone.
        try await bob.call("retract", ["to": alice.description, "id": "bob-2"])
        try await waitUntil("bob-2 retracted") { try row(config, bobJID, messageID: "bob-2")?["retracted_by"] is String }
        let retracted = try row(config, bobJID, messageID: "bob-2")
        #expect(retracted?["retracted_by"] as? String == "\(bobJID)/laptop" && retracted?["retracted_at"] is String)
        #expect(retracted?["body"] is NSNull)
        #expect(try search(config, "secretword").status == 1)
        #expect(try search(config, "is:retracted").jsonLines.count == 1)
        // Named as everywhere (issue 30, 10): the contact by name (here none, so the bare JID), never with a resource.
        #expect(try RoostBinary.run(["log", "--config", config, bobJID.description]).stdout.contains("message retracted (by \(bobJID), at "))
        #expect(try ZeroLossSQL.withStanzas(archive, "SELECT count(*) FROM messages WHERE roost_stanza(raw) LIKE '%secretword%' OR body LIKE '%secretword%'") == 0)
        #expect(try log(config, bobJID).count == 4, "a retraction's fallback body is no message")

        // Read state: after the user's own question, bob's reply is unread (the retracted message does not count)...
        #expect(try unread(config, bobJID) == 1)
        #expect(try search(config, "is:unread").jsonLines.map { $0["message_id"] as? String } == ["bob-3"])
        // ...until the phone shows it: its displayed marker reaches Roost as a carbon.
        try await phone.call("marker", ["to": bobJID.description, "id": "bob-3", "marker": "displayed"])
        try await waitUntil("the phone's displayed marker to clear the conversation") { try unread(config, bobJID) == 0 }
        #expect(try search(config, "is:unread").status == 1)

        // Receipts and markers of bob for a message Roost sends: delivered, then read.
        let sent = try RoostBinary.run(["send", "--config", config, "--json", bobJID.description, "see you there"]).jsonLines.first
        let sentID = try #require(sent?["id"] as? String)
        let arrived = try await bob.message { $0["body"] == "see you there" }
        #expect(arrived["xml"]?.contains("urn:xmpp:receipts") == true && arrived["xml"]?.contains("markable") == true,
                "Roost asks for receipts and markers")
        let unconfirmed = try #require(try row(config, bobJID, messageID: sentID))
        #expect(unconfirmed["receipt"] == nil, "no receipt yet: \(unconfirmed)")
        try await bob.call("receipt", ["to": alice.description, "id": sentID])
        try await waitUntil("the receipt") { try row(config, bobJID, messageID: sentID)?["receipt"] as? String == "delivered" }
        #expect(try RoostBinary.run(["log", "--config", config, bobJID.description]).stdout.contains("see you there ✓"))
        try await bob.call("marker", ["to": alice.description, "id": sentID, "marker": "displayed"])
        try await waitUntil("bob's displayed marker") { try row(config, bobJID, messageID: sentID)?["receipt"] as? String == "read" }
        #expect(try RoostBinary.run(["log", "--config", config, bobJID.description]).stdout.contains("see you there ✓✓"))

        // `roost read`: locally, then with a displayed marker that the contact and the user's other clients get.
        try await bob.send(to: alice, body: "one more thing", id: "bob-4")
        try await waitUntil("bob-4 unread") { try unread(config, bobJID) == 1 }
        let statusText = try RoostBinary.run(["status", "--config", config]).stdout
        #expect(statusText.contains("unread: 1 (1 from \(bobJID))"), "\(statusText)")
        #expect(try RoostBinary.run(["read", "--config", config, bobJID.description]).status == 0)
        #expect(try unread(config, bobJID) == 0)
        try await bob.send(to: alice, body: "and another", id: "bob-5")
        try await waitUntil("bob-5 unread") { try unread(config, bobJID) == 1 }
        let marked = try RoostBinary.run(["read", "--config", config, "--json", "--send", "--all"])
        #expect(marked.status == 0, "\(marked.stderr)")
        #expect(marked.jsonLines.first?["marker_sent"] as? Bool == true && marked.jsonLines.first?["via"] as? String == "agent")
        #expect(try unread(config, bobJID) == 0)
        let toBob = try await bob.message { $0["xml"]?.contains("displayed") == true && $0["xml"]?.contains("bob-5") == true }
        #expect(toBob["xml"]?.contains("urn:xmpp:chat-markers:0") == true)
        _ = try await phone.message { $0["carbon"] == "sent" && $0["xml"]?.contains("displayed") == true && $0["xml"]?.contains("bob-5") == true }

        // Everything again from the server archive: nothing is stored twice.
        let counts = "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM reactions), (SELECT count(*) FROM retractions)"
        let before = try ArchiveCount.sqlite(archive, counts)
        try await RoostBinary.waitForServerArchiveRead(config: config, after: Date())
        #expect(try ArchiveCount.sqlite(archive, counts) == before)
        #expect(before.trimmingCharacters(in: .whitespacesAndNewlines) == "7|5|3", "messages|reactions|retractions: \(before)")

        // Styled text (XEP-0393), stored verbatim.
        let styledText = "*bold* and _slanted_ ~struck~ `co*de*`\n> quoted *line*\n```\n*not bold*\n```"
        try await bob.send(to: alice, body: styledText, id: "bob-6")
        try await waitUntil("the styled message") { try row(config, bobJID, messageID: "bob-6")?["body"] as? String == styledText }

        // The exports show the conversation the same way, without the retracted text.
        let html = try RoostBinary.run(["export", "--config", config, "-f", "html", "-o", "\(dir.path)/site", "--utc"])
        #expect(html.status == 0, "\(html.stderr)")
        let page = try String(contentsOfFile: "\(dir.path)/site/\(bobJID).html", encoding: .utf8)
        #expect(page.contains("<div class=\"reactions\">👍 \(bobJID)  ❤️ \(bobJID)  😂 me</div>"), "reactions in the order given")
        #expect(page.contains("class=\"reply\" href=\"#m\(question?["id"] as? Int ?? -1)\""), "the reply links to the message it answers")
        #expect(page.contains("message retracted (by \(bobJID), at"))
        #expect(page.contains("class=\"tick read\""))
        #expect(!page.contains("secretword"))
        // In headless Chromium the styling is real markup in the DOM, and the page renders.
        let dump = try await FilesKit.run("/usr/bin/chromium", [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(dir.path)/chromium", "--virtual-time-budget=3000", "--dump-dom",
            "file://\(dir.path)/site/\(bobJID).html",
        ], timeout: 90)
        #expect(dump.status == 0)
        #expect(dump.output.contains("<strong>*bold*</strong>") && dump.output.contains("<em>_slanted_</em>")
                && dump.output.contains("<s>~struck~</s>") && dump.output.contains("<code>`co*de*`</code>"), "\(dump.output.suffix(3000))")
        #expect(dump.output.contains("<blockquote>quoted <strong>*line*</strong></blockquote>"))
        #expect(dump.output.contains("<pre>```\n*not bold*\n```</pre>"))
        let shot = "\(dir.path)/page.png"
        let screenshot = try await FilesKit.run("/usr/bin/chromium", [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(dir.path)/chromium", "--window-size=900,1600", "--virtual-time-budget=3000", "--screenshot=\(shot)",
            "file://\(dir.path)/site/\(bobJID).html",
        ], timeout: 90)
        #expect(screenshot.status == 0)
        #expect(((try? Data(contentsOf: URL(fileURLWithPath: shot)))?.count ?? 0) > 10_000)
        let markdown = try RoostBinary.run(["export", "--config", config, "-f", "md", "with:\(bobJID)"])
        #expect(markdown.stdout.contains("😂 me") && markdown.stdout.contains("↪ ") && !markdown.stdout.contains("secretword"), "\(markdown.stdout)")

        // While Roost is down, bob reacts and retracts: both come from the server archive only.
        _ = roost.stop(signal: SIGTERM)
        try await bob.call("react", ["to": alice.description, "id": "bob-4", "reactions": ["🙏"]])
        try await bob.call("retract", ["to": alice.description, "id": "bob-5"])
        roost = try RoostBinary.start(["run", "--config", config, "-v"])
        try await roost.ready()
        try await waitUntil("the reaction from the archive") { reactions(try row(config, bobJID, messageID: "bob-4")) == ["🙏 \(bobJID)"] }
        try await waitUntil("the retraction from the archive") { try row(config, bobJID, messageID: "bob-5")?["retracted_by"] is String }
        #expect(try ArchiveCount.sqlite(archive, "SELECT source FROM reactions WHERE target = 'bob-4'")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "mam")
        #expect(try log(config, bobJID).count == 8)
        let (status, stderr) = roost.stop(signal: SIGTERM)
        #expect(status == 0, "\(stderr)")
    }

    /// In a room (Prosody gives no occupant ids: the nick decides), a retraction by another occupant is refused and
    /// logged; the sender's own removes the text; an occupant's reaction is stored by the room's stanza-id.
    @Test func inARoomOnlyTheSenderRetracts() async throws {
        let s = try await RoomsEndToEndTests().setUp(server)
        let room = s.room("semantics")
        try s.bob.run(["muc", room, "bob", "--send", "hi"])
        try s.phone.run(["bookmark", room, "--autojoin", "--nick", "Alice"])
        let roost = try RoostBinary.start(["run", "--config", s.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await waitFor("joined", roost) { s.state(of: room) == "joined" }
        try s.bob.run(["muc", room, "bob", "--send", "bob's room secret zebra"])
        try await waitFor("bob's message", roost) { s.count("SELECT count(*) FROM messages WHERE body LIKE '%zebra%'") == 1 }
        let id = try s.sql("SELECT stanza_id FROM messages WHERE body LIKE '%zebra%'")
        #expect(!id.isEmpty)
        try s.carol.run(["muc", room, "carol", "--retract", id, "--react", "\(id)=👍"])
        try await waitFor("carol's retraction refused", roost) {
            s.count("SELECT count(*) FROM retractions WHERE status = 'refused' AND from_jid = '\(room)/carol'") == 1
        }
        try roost.waitForLog("ignored: retraction of \(id) in \(room)")
        try await waitFor("carol's reaction", roost) { s.count("SELECT count(*) FROM reactions WHERE message_row IS NOT NULL") == 1 }
        #expect(try s.roost(["search", "--json", "zebra"]).jsonLines.count == 1)
        try s.bob.run(["muc", room, "bob", "--retract", id])
        try await waitFor("bob's retraction", roost) { s.count("SELECT count(*) FROM messages WHERE retracted = 1") == 1 }
        #expect(try s.roost(["search", "zebra"]).status == 1)
        let row = try s.roost(["log", "--json", room]).jsonLines.first { $0["retracted_by"] is String }
        #expect(row?["retracted_by"] as? String == "\(room)/bob")
        #expect(reactions(row) == ["👍 carol"])
        #expect(try s.roost(["search", "--json", "has:reaction", "in:\(room)"]).jsonLines.count == 1)
    }
}
