import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Issue 17 on a live account: one agent with two accounts on the test server, contacts that are slixmpp
/// clients, the CLI binary as the user runs it. What the fixture archive of `EverydayCLITests` shows without a
/// server is shown here with the roster, vCards, notifications and archive the server really produces.
@Suite("Everyday use end to end: names, accounts, follow, activity, requests, lossless jsonl",
       .requires(.server, .tool("/usr/bin/gdbus"), .tool("/usr/bin/dbus-daemon")))
struct EverydayNamesEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server, .tool("/usr/bin/gdbus"), .tool("/usr/bin/dbus-daemon"))
        server = try TestServer.require()
    }

    @Test func aDayWithTwoAccounts() async throws {
        let marker = "m\(UUID().uuidString.prefix(6).lowercased())"
        let notifications = try await PrivateNotificationServer()
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (daveClient, dave, davePassword) = try await server.registeredClient("dave")
        await daveClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "phone")
        let bobby = try await XMPPPeer.registered(on: server, "bob", resource: "laptop")
        let carol = try await XMPPPeer.registered(on: server, "carol")
        try await bob.call("auto-accept")
        try await bobby.call("auto-accept")
        // Bob's own vCard nickname: the roster name the user gives him wins over it.
        try await bob.call("vcard-set", ["fullname": "Robert Vcard", "nickname": "Nick \(marker)"])

        // 2. Comments after values (` #`, ` ;`), as the README shows them, are comments: the CA file and the
        // notify rule below work only if they are.
        let directory = try TestDirectory("roost-day")
        let run = directory.path + "/run"
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let environment = ["XDG_RUNTIME_DIR": run, "DBUS_SESSION_BUS_ADDRESS": notifications.address]
        func group(_ jid: JID, _ password: String) -> String {
            "[account \(jid)]\npassword = \(password)\nhost = \(server.host)   # the test server\nport = \(server.port)\n"
                + "ca_file = \(server.caFile)   # the test CA\n"
        }
        let config = try directory.write("config.ini", """
            [general]
            archive_poll_seconds = 2
            [archive]
            path = \(directory.path)/data/archive.sqlite   ; where it lives
            [notify]
            when = always   # also while the user is at the desk

            """ + group(alice, alicePassword) + group(dave, davePassword))
        func roost(_ arguments: [String], stdin: String? = nil) throws -> RoostBinary.Result {
            try RoostBinary.run(arguments + ["--config", config], environment: environment, stdin: stdin)
        }
        func states() throws -> [String: String] {
            var found: [String: String] = [:]
            for line in try RoostBinary.accountStatus(config: config, environment: environment) {
                if let account = line["account"] as? String, let state = line["state"] as? String { found[account] = state }
            }
            return found
        }
        #expect(try roost(["config"]).status == 0)
        // The default level: no -v. It must still say what it archived (11).
        let agent = try RoostBinary.start(["run", "--config", config], environment: environment)
        defer { agent.stop(signal: SIGKILL) }
        try await waitUntil("both accounts online", timeout: .seconds(40), detail: { agent.stderrSoFar }) {
            let now = try states()
            return now[alice.description] == "online" && now[dave.description] == "online"
        }

        // Alice adds both of bob's accounts under names of her own.
        for (who, name) in [(bob.jid, "Rob \(marker)"), (bobby.jid, "Roberta")] {
            let added = try roost(["roster", "add", who.description, "--name", name, "--account", alice.description, "--json"])
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.jsonLines.first?["via"] as? String == "agent")
        }
        try await waitUntil("bob approved alice") {
            try roost(["roster", "--json", "--account", alice.description]).jsonLines.contains {
                $0["jid"] as? String == bob.jid.description && ["to", "both"].contains($0["subscription"] as? String ?? "")
            }
        }

        // 7. `roost log NAME --follow` prints what the agent archives while it runs.
        let follow = try RoostBinary.start(["log", "Rob \(marker)", "--follow", "--account", alice.description, "--config", config],
                                           environment: environment)
        defer { follow.stop(signal: SIGKILL) }

        // Bob's presence, a chat state and messages to both accounts (to Roost's resource: with priority -1 and
        // no other client online, ejabberd would keep messages to the bare JID offline, for the catch-up).
        let aliceRoost = try alice.with(resource: "roost"), daveRoost = try dave.with(resource: "roost")
        try await bob.presence(show: "away", status: "lunch \(marker)")
        try await bob.call("chatstate", ["to": aliceRoost.description, "state": "composing"])
        try await bob.send(to: aliceRoost, body: "first \(marker) for alice")
        try await bob.send(to: daveRoost, body: "first \(marker) for dave")
        try follow.waitForLog("first \(marker) for alice")
        #expect(!follow.stderrSoFar.contains("for dave"), "--follow keeps to one conversation of one account")

        // 4. The notification names bob as alice's roster has him, not by his vCard nickname.
        try await waitUntil("the notification of bob's message", detail: { notifications.calls }) {
            notifications.calls.contains("first \(marker) for alice")
        }
        #expect(notifications.calls.contains("Rob \(marker)"), "\(notifications.calls)")
        #expect(!notifications.calls.contains("Nick \(marker)"))

        // 6. With two accounts, each hit says which account it is in.
        try await waitUntil("both messages archived") { try roost(["count", marker]).stdout == "2\n" }
        let both = try roost(["search", marker])
        #expect(both.status == 0, "\(both.stderr)")
        let aliceLine = try #require(both.lines.first { $0.contains("for alice") })
        let daveLine = try #require(both.lines.first { $0.contains("for dave") })
        #expect(aliceLine.contains("[\(alice)] Rob \(marker) → me: "), "\(aliceLine)")
        #expect(daveLine.contains("[\(dave)] \(bob.jid) → me: "), "dave has no name for bob: \(daveLine)")
        // 7. Each line starts with a short id that `roost show` and `log --around` take.
        let shortID = try #require(aliceLine.split(separator: " ").first.map(String.init))
        let shown = try roost(["show", shortID])
        #expect(shown.status == 0 && shown.stdout.contains("first \(marker) for alice"), "\(shown.stdout)\(shown.stderr)")
        let around = try roost(["log", "Rob \(marker)", "--around", shortID, "-n", "1", "--states", "--account", alice.description])
        #expect(around.stdout.contains("first \(marker) for alice"), "\(around.stdout)\(around.stderr)")

        // 4. A new roster name applies to what was stored before; the stored name stays as history.
        let renamed = try roost(["roster", "rename", "Rob \(marker)", "Robert", "--account", alice.description])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        try await waitUntil("the new name in the log") {
            try roost(["log", "Robert", "--account", alice.description]).stdout.contains("Robert")
        }
        let log = try roost(["log", "Robert", "--account", alice.description])
        #expect(log.stdout.contains("first \(marker) for alice") && !log.stdout.contains("Rob \(marker)"), "\(log.stdout)")
        let json = try #require(try roost(["search", "--json", marker, "alice"]).jsonLines.first)
        #expect(json["sender_name"] as? String == "Rob \(marker)", "the stored name: \(json)")
        #expect(json["sender_display_name"] as? String == "Robert", "\(json)")
        let exported = try roost(["export", "--format", "txt", "with:Robert", "--account", alice.description])
        #expect(exported.stdout.contains("Robert") && !exported.stdout.contains("Rob \(marker)"), "\(exported.stdout)")

        // 5. Names and unique JID prefixes in commands and filters; an ambiguous one lists the candidates.
        let sent = try roost(["send", "Robert", "hi \(marker) by name", "--account", alice.description])
        #expect(sent.status == 0, "\(sent.stderr)")
        let got = try await bob.message { $0["body"] == "hi \(marker) by name" }
        #expect(got["from"].flatMap(JID.init(parsing:))?.bare == alice)
        let prefix = String(bobby.jid.description.prefix(9))
        let bySuffix = try roost(["send", prefix, "hi \(marker) by prefix", "--account", alice.description])
        #expect(bySuffix.status == 0, "\(bySuffix.stderr)")
        _ = try await bobby.message { $0["body"] == "hi \(marker) by prefix" }
        let ambiguous = try roost(["send", "Rob", "never \(marker)", "--account", alice.description])
        #expect(ambiguous.status == 2, "\(ambiguous.stdout)\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("Robert (\(bob.jid))") && ambiguous.stderr.contains("Roberta (\(bobby.jid))"), "\(ambiguous.stderr)")
        let query = try roost(["search", "with:Rob", "--account", alice.description])
        #expect(query.status == 2 && query.stderr.contains("Roberta (\(bobby.jid))"), "\(query.stderr)")
        // bob talks with both accounts: `log` does not merge them, and says so.
        let merged = try roost(["log", bob.jid.description])
        #expect(merged.status == 2 && merged.stderr.contains(alice.description) && merged.stderr.contains(dave.description), "\(merged.stderr)")

        // 6. --account for status and stats; an unknown one is an error.
        let status = try roost(["status", "--json", "--account", dave.description]).jsonLines.filter { $0["kind"] as? String == "account" }
        #expect(status.count == 1 && status.first?["account"] as? String == dave.description, "\(status)")
        let stats = try roost(["stats", "--json", "--account", dave.description]).jsonLines
        #expect(stats.filter { $0["kind"] as? String == "account" }.map { $0["account"] as? String } == [dave.description], "\(stats)")
        for command in [["status"], ["stats"], ["search", marker], ["send", "Robert", "x"]] {
            let unknown = try roost(command + ["--account", "ghost@\(server.domain)"])
            #expect(unknown.status == 2 && unknown.stderr.contains("no account ghost@\(server.domain)"), "\(command): \(unknown.stderr)")
        }

        // 14. A request arrives with its own time; accepting one that never came is an error.
        let asked = Date().addingTimeInterval(-1)
        try await carol.presence(to: alice, type: "subscribe", status: "carol here \(marker)")
        try await waitUntil("carol's request listed") {
            try roost(["requests", "--json", "--account", alice.description]).jsonLines.contains { $0["jid"] as? String == carol.jid.description }
        }
        let request = try #require(try roost(["requests", "--json", "--account", alice.description]).jsonLines.first {
            $0["jid"] as? String == carol.jid.description
        })
        let received = try #require((request["received"] as? String).flatMap { ISO8601DateFormatter.withMilliseconds.date(from: $0) })
        #expect(received >= asked && received <= Date().addingTimeInterval(1), "the time it came, not a login's: \(request)")
        let ghost = try roost(["requests", "accept", "ghost@\(server.domain)", "--account", alice.description])
        #expect(ghost.status == 1 && ghost.stderr.contains("roost roster add ghost@\(server.domain)"), "\(ghost.stderr)")
        let roster = try roost(["roster", "--json", "--account", alice.description]).jsonLines
        #expect(!roster.contains { ($0["jid"] as? String ?? "").hasPrefix("ghost@") }, "no roster entry for a request that never came")
        // Bob's presence came while alice was subscribed: last seen is a real sighting.
        let presence = try roost(["presence", "Robert", "--json", "--account", alice.description]).jsonLines.first
        #expect(presence?["last_seen"] is String, "\(String(describing: presence))")

        // 11. At the default level, what was archived is summed up at most once a minute.
        try agent.waitForLog("in the last minute", timeout: 90)
        let summary = agent.stderrSoFar.split(separator: "\n").filter { $0.contains("in the last minute") }
        #expect(summary.first?.contains("archived ") == true && summary.count <= 2, "\(summary)")
        #expect(!agent.stderrSoFar.contains("first \(marker)"), "no line per message at the default level")

        // 15. jsonl carries every kind of record `stats` counts: export, import into a new archive, same figures.
        let (code, _) = agent.stop(signal: SIGTERM)
        #expect(code == 0)
        follow.stop(signal: SIGTERM)
        let before = try roost(["stats", "--json"])
        let export = try roost(["export", "--format", "jsonl", "-o", directory.path + "/all.jsonl"])
        #expect(export.status == 0, "\(export.stderr)")
        let lines = try String(contentsOfFile: directory.path + "/all.jsonl", encoding: .utf8)
        for kind in ["message", "chat_state", "presence", "subscription"] {
            #expect(lines.contains("\"event\":\"\(kind)\""), "jsonl has \(kind) records")
        }
        let copy = try directory.write("copy.ini", (try String(contentsOfFile: config, encoding: .utf8))
            .replacingOccurrences(of: "/data/archive.sqlite", with: "/copy/archive.sqlite"))
        let imported = try RoostBinary.run(["import", directory.path + "/all.jsonl", "--config", copy], environment: environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        let after = try RoostBinary.run(["stats", "--json", "--config", copy], environment: environment)
        func figures(_ result: RoostBinary.Result) -> [String] {
            result.jsonLines.map { line in
                line.filter { $0.key != "size_bytes" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            }
        }
        let counts = try #require(before.jsonLines.first)
        #expect((counts["chat_states"] as? Int ?? 0) > 0 && (counts["presence_events"] as? Int ?? 0) > 0
                && (counts["subscription_events"] as? Int ?? 0) > 0, "the archive holds every kind: \(counts)")
        #expect(figures(before) == figures(after), "stats before and after the round trip:\n\(before.stdout)\n---\n\(after.stdout)")
        // docs/export.md: exporting the imported archive again gives the same bytes.
        let again = try RoostBinary.run(["export", "--format", "jsonl", "-o", directory.path + "/again.jsonl", "--config", copy],
                                        environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try String(contentsOfFile: directory.path + "/again.jsonl", encoding: .utf8) == lines, "the same bytes after the round trip")
        for peer in [bob, bobby, carol] { await peer.stop() }
    }

    /// "Every README example must actually work": the examples of README's "Friends, profile and control" that
    /// act on the server run here, as written (bob@example.org is bob's JID; `bob` and `carol` are the start of
    /// the peers' JIDs), in order, through a running agent, and each must succeed and do what it says.
    /// (`register` and `passwd` need a terminal for the password; `EverydayEndToEndTests` runs `register`.)
    @Test func readmeFriendsExamplesRunAgainstTheServer() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "phone")
        let carol = try await XMPPPeer.registered(on: server, "carol")
        try await bob.call("auto-accept")
        try await bob.call("vcard-set", ["fullname": "Robert Example", "nickname": "Bob"])
        try await carol.call("auto-accept")
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let folder = roost.directory.path
        try Data("%PDF-1.4\n% a report\n".utf8).write(to: URL(fileURLWithPath: folder + "/report.pdf"))
        for picture in ["me.png", "holiday.png"] {
            try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: UInt8(7), count: 64))
                .write(to: URL(fileURLWithPath: folder + "/" + picture))
        }
        let agent = try await roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }
        try await carol.presence(to: alice, type: "subscribe", status: "it's carol")
        try await waitUntil("carol's request archived") { try roost.run(["requests"]).status == 0 }

        let acting: Set<String> = ["status", "roster", "requests", "send", "vcard", "presence"]
        let readme = try DocExamplesTests.readme().filter { example in
            let words = DocExamplesTests.words(example.text)
            return words.count > 1 && acting.contains(words[1]) && !example.text.contains("ROOM")
        }
        #expect(readme.count >= 12, "the README's friends examples: \(readme)")
        for example in readme {
            let arguments = DocExamplesTests.words(example.text).dropFirst().map { word in
                word == "bob@example.org" ? bob.jid.description : word.hasPrefix("~/") ? folder + word.dropFirst() : word
            }
            let result = try RoostBinary.run(arguments + ["--config", roost.config], environment: roost.environment, directory: folder)
            #expect(result.status == 0, "\(example): `roost \(arguments.joined(separator: " "))` exited \(result.status): \(result.stderr)")
        }

        // What they said they would do.
        let entry = try #require(try roost.rosterEntry(bob.jid))
        #expect(entry["name"] as? String == "Bobby" && entry["groups"] as? [String] == ["Friends"], "\(entry)")
        try await waitUntil("bob and alice are friends both ways") { try roost.rosterEntry(bob.jid)?["subscription"] as? String == "both" }
        _ = try await carol.presence("subscribed", from: alice)
        try await waitUntil("carol added and approved") { try roost.rosterEntry(carol.jid)?["subscription"] as? String == "both" }
        _ = try await bob.message { $0["body"] == "see you at 5" }
        _ = try await bob.message { ($0["body"] ?? "").hasSuffix("report.pdf") }
        _ = try await bob.message { ($0["body"] ?? "").contains("from the beach") }
        let own2 = try roost.json(["vcard", "show", alice.description, "--refresh"]).first
        #expect(own2?["nickname"] as? String == "Me" && own2?["fullname"] as? String == "Me Myself", "\(String(describing: own2))")
        await bob.stop()
        await carol.stop()
    }
}
