import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Issue 28: Roost's own jsonl export is lossless for everything Roost archives. A real agent (`roost run` on the
/// test server) archives what slixmpp peers do — chat, normal and headline messages, a correction, a retraction,
/// reactions, a reply, a file, a burst of chat states, carbons of the user's phone, a room with its subject,
/// timeline, reactions and a moderated message, a private message in the room, presence and friend requests —
/// then `roost export` → `roost import` into a new archive → `roost export` must give the same bytes.
@Suite("End to end: jsonl export, import and export again", .requires(.server))
struct ExportRoundTripEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    @Test func everythingAnAgentArchivedSurvivesExportImportExport() async throws {
        let dir = try TestDirectory()
        let accounts = try await server.registeredAccounts(["alice", "carol"])
        let (alice, alicePassword) = (accounts[0].jid, accounts[0].password)
        let carol = RoomPeer(server: server, jid: accounts[1].jid, password: accounts[1].password)
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "laptop")
        let phone = try await XMPPPeer.start(on: server, jid: alice, password: alicePassword, resource: "phone")
        try await phone.call("carbons")
        let m = UUID().uuidString.prefix(8).lowercased()
        let room = "roundtrip-\(m)@conference.\(server.domain)"
        try carol.run(["muc", room, "carol", "--subject", "round trips", "--send", "first in the room \(m)"])
        func config(_ name: String, archive: String) throws -> String {
            try dir.write(name, """
                [general]
                archive_poll_seconds = 2
                [archive]
                path = \(dir.path)/\(archive)/archive.sqlite
                [files]
                download = all
                allow_private_addresses = true
                [account \(alice)]
                password = \(alicePassword)
                host = \(server.host)
                port = \(server.port)
                ca_file = \(server.caFile)
                nick = Alice
                rooms = \(room)

                """)
            return dir.path + "/" + name
        }
        let first = try config("config.ini", archive: "data")
        let archive = dir.path + "/data/archive.sqlite"
        func count(_ sql: String) -> Int {
            Int((try? ArchiveCount.sqlite(archive, sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? "") ?? -1
        }
        func roost(_ arguments: [String], config: String) throws -> RoostBinary.Result { try RoostBinary.run(arguments + ["--config", config]) }

        let agent = try RoostBinary.start(["run", "--config", first, "-v"])
        defer { agent.stop(signal: SIGKILL) }
        try agent.waitForReady()
        try await waitFor("in the room", agent) {
            try roost(["rooms", "--json"], config: first).jsonLines.first { $0["room"] as? String == room }?["state"] as? String == "joined"
        }

        // Friends: alice adds bob, bob agrees and asks back (answered by the agent), then shows his presence.
        #expect(try roost(["roster", "add", bob.jid.description, "--name", "Bob"], config: first).status == 0)
        _ = try await bob.presence("subscribe", from: alice, timeout: .seconds(30))
        try await bob.presence(to: alice, type: "subscribed")
        try await bob.presence(to: alice, type: "subscribe")
        try await bob.presence(show: "away", status: "on the train \(m)")
        try await waitFor("bob's presence and the requests", agent) {
            count("SELECT count(*) FROM presence_log WHERE status = 'on the train \(m)'") == 1
                && count("SELECT count(*) FROM subscription_requests") >= 2
        }

        // A conversation with bob: every message type, a correction, a retraction, reactions, a reply, a file. To
        // Roost's own resource: a headline to the bare JID would reach no resource of priority -1.
        let roostJID = try alice.with(resource: "roost")
        try await bob.send(to: roostJID, body: "hello \(m)", id: "b1-\(m)", chatState: "active")
        try await bob.send(to: roostJID, body: "a normal message \(m)", type: "normal", id: "b2-\(m)")
        try await bob.send(to: roostJID, body: "a headline \(m)", type: "headline", id: "b3-\(m)")
        try await bob.send(to: roostJID, body: "teh typo \(m)", id: "b4-\(m)")
        try await bob.call("raw", ["xml": "<message to='\(roostJID)' type='chat' id='b4c-\(m)'><body>the typo fixed \(m)</body>"
                                   + "<replace xmlns='urn:xmpp:message-correct:0' id='b4-\(m)'/></message>"])
        try await bob.send(to: roostJID, body: "taken back \(m)", id: "b5-\(m)")
        try await bob.call("retract", ["to": roostJID.description, "id": "b5-\(m)"])
        try await bob.call("react", ["to": roostJID.description, "id": "b1-\(m)", "reactions": ["👍", "🎉"]])
        try await bob.call("reply", ["to": roostJID.description, "reply_id": "b1-\(m)", "quote": "hello \(m)", "body": "an answer \(m)",
                                     "message_id": "b6-\(m)"])
        try await phone.send(to: bob.jid, body: "from the phone \(m)", id: "p1-\(m)")
        try await phone.call("react", ["to": bob.jid.description, "id": "b6-\(m)", "reactions": ["😂"]])
        #expect(try roost(["send", bob.jid.description, "from roost \(m)"], config: first).status == 0)
        // Chat states in one burst: several reach Roost within one millisecond, told apart by their ids.
        let burst = (1...60).map { "<message to='\(roostJID)' type='chat' id='cs\($0)-\(m)'><composing xmlns='http://jabber.org/protocol/chatstates'/></message>" }
        try await bob.call("raw", ["xml": burst.joined()])
        let picture = dir.path + "/picture.png"
        try Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
            .write(to: URL(fileURLWithPath: picture))
        let upload = try RoostBinary.runProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py",
            "--jid", bob.jid.description + "/upload", "--host", server.host, "--port", String(server.port), "--ca", server.caFile,
            "upload", roostJID.description, picture, "--body", "a picture \(m)"], environment: ProcessInfo.processInfo.environment
            .merging(["XMPP_PEER_PASSWORD": bob.password]) { $1 }, timeout: 90)
        #expect(upload.status == 0, "\(upload.stderr)")

        // The room: messages, a reaction and a moderated (retracted) message, and a private message to Alice.
        try carol.run(["muc", room, "carol", "--send", "in the room \(m)", "--send", "to retract \(m)", "--pm", "Alice=a private word \(m)"])
        try await waitFor("the room's messages", agent) {
            count("SELECT count(*) FROM messages WHERE body IN ('in the room \(m)', 'to retract \(m)', 'a private word \(m)')") == 3
        }
        let kept = try ArchiveCount.sqlite(archive, "SELECT stanza_id FROM messages WHERE body = 'in the room \(m)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let gone = try ArchiveCount.sqlite(archive, "SELECT stanza_id FROM messages WHERE body = 'to retract \(m)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try carol.run(["muc", room, "carol", "--react", "\(kept)=🎉", "--retract", gone])

        try await waitFor("everything archived", agent, timeout: 120) {
            count("SELECT count(*) FROM messages WHERE body LIKE '%\(m)%'") >= 10
                && count("SELECT count(*) FROM message_revisions") >= 2
                && count("SELECT count(*) FROM messages WHERE retracted = 1") == 2
                && count("SELECT count(*) FROM reactions") >= 3
                && count("SELECT count(*) FROM attachments WHERE state = 'stored'") == 1
                && count("SELECT count(*) FROM chat_states WHERE message_id LIKE 'cs%'") == 60
        }
        try await RoostBinary.waitForServerArchiveRead(config: first, after: Date(), timeout: .seconds(60))
        #expect(agent.stop(signal: SIGTERM).status == 0)
        await bob.stop()
        await phone.stop()

        // What makes the round trip hard is there: chat states of one millisecond, a private conversation in a room.
        #expect(count("""
            SELECT count(*) FROM (SELECT 1 FROM chat_states GROUP BY conversation, from_jid, state, timestamp HAVING count(*) > 1)
            """) > 0, "the burst gave no two chat states of one millisecond")
        #expect(count("SELECT count(*) FROM messages WHERE conversation = '\(room)/carol'") == 1)

        // Export, import into a new archive, export again: the same bytes, the same files.
        let exported = try roost(["export", "--format", "jsonl", "-o", dir.path + "/a/backup.jsonl"], config: first)
        #expect(exported.status == 0, "\(exported.stderr)")
        let second = try config("config2.ini", archive: "data2")
        let imported = try roost(["import", dir.path + "/a/backup.jsonl", "--json"], config: second)
        #expect(imported.status == 0, "\(imported.stdout)\(imported.stderr)")
        let again = try roost(["export", "--format", "jsonl", "-o", dir.path + "/b/backup.jsonl"], config: second)
        #expect(again.status == 0, "\(again.stderr)")
        let a = try String(contentsOfFile: dir.path + "/a/backup.jsonl", encoding: .utf8)
        let b = try String(contentsOfFile: dir.path + "/b/backup.jsonl", encoding: .utf8)
        let (aLines, bLines) = (a.split(separator: "\n"), b.split(separator: "\n"))
        let differing = zip(aLines, bLines).filter { $0 != $1 }.prefix(3).map { "\($0.0)\n  became\n\($0.1)" }
        #expect(a == b, "\(aLines.count) lines, then \(bLines.count); first differences:\n\(differing.joined(separator: "\n\n"))")
        let files = { (root: String) in (FileManager.default.subpaths(atPath: root) ?? []).filter { !$0.hasSuffix("/") }.sorted() }
        let aFiles = files(dir.path + "/a/backup.jsonl_files"), bFiles = files(dir.path + "/b/backup.jsonl_files")
        #expect(!aFiles.isEmpty && aFiles == bFiles)
        for file in aFiles {
            #expect(FileManager.default.contentsEqual(atPath: dir.path + "/a/backup.jsonl_files/" + file,
                                                      andPath: dir.path + "/b/backup.jsonl_files/" + file), "\(file)")
        }

        // ... and the export holds every kind of record the agent archived.
        let events = aLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let messages = events.filter { $0["event"] as? String == "message" }
        #expect(Set(messages.compactMap { $0["type"] as? String }) == ["chat", "normal", "headline", "groupchat"])
        #expect(messages.contains { ($0["revisions"] as? [Any])?.isEmpty == false })
        #expect(messages.filter { $0["retracted"] as? Bool == true }.count == 2)
        #expect(messages.contains { ($0["reactions"] as? [Any])?.isEmpty == false && $0["type"] as? String == "groupchat" })
        #expect(messages.contains { ($0["reactions"] as? [Any])?.isEmpty == false && $0["type"] as? String == "chat" })
        #expect(messages.contains { $0["reply_to"] as? String == "b1-\(m)" })
        #expect(messages.contains { (($0["attachments"] as? [[String: Any]])?.first?["state"] as? String) == "stored" })
        #expect(messages.contains { $0["conversation"] as? String == "\(room)/carol" && $0["sender_name"] as? String == "carol" })
        #expect(messages.contains { $0["source"] as? String == "carbon" && $0["direction"] as? String == "out" })
        #expect(events.filter { $0["event"] as? String == "chat_state" }.count == count("SELECT count(*) FROM chat_states"))
        #expect(events.contains { $0["event"] as? String == "presence" && $0["room_event"] != nil })
        #expect(events.contains { $0["event"] as? String == "presence" && $0["status"] as? String == "on the train \(m)" })
        #expect(events.contains { $0["event"] as? String == "subscription" })
        #expect(events.contains { $0["event"] as? String == "contact" && $0["name"] as? String == "Bob" })
    }
}
