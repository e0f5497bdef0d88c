import Foundation
import Testing
import RoostArchive
import RoostSynthetic
@testable import RoostServe
import RoostTestSupport
import RoostXMPP

/// `roost serve` in a real browser: headless Chromium driven over the DevTools protocol by
/// contrib/scripts/browser-check.py, against an archive made by the real agent (`roost run` with
/// `[serve] enabled`, Prosody, slixmpp peers from contrib/scripts/xmpp-peer.py) and against a large
/// synthetic archive served by `roost serve`.
@Suite("End to end: the web view in a browser", .serialized, .enabled(if: TestServer.isAvailable))
struct ServeEndToEndTests {
    let server: TestServer

    init() throws { server = try TestServer.require() }

    static let python = "/usr/bin/python3"
    static var scripts: String { TestServer.packageRoot + "/contrib/scripts" }

    /// Runs browser-check.py to completion; its steps by name (a failed run is a failed test, with its output).
    func browserCheck(_ arguments: [String], timeout: TimeInterval = 240) throws -> [String: [String: Any]] {
        var steps: [String: [String: Any]] = [:]
        for step in try browserCheckAll(arguments, timeout: timeout) { if let name = step["step"] as? String { steps[name] = step } }
        return steps
    }

    /// Runs browser-check.py to completion; every step in order (steps such as `inspect` come more than once).
    func browserCheckAll(_ arguments: [String], timeout: TimeInterval = 240) throws -> [[String: Any]] {
        let running = try RoostBinary.startProgram(Self.python, [Self.scripts + "/browser-check.py"] + arguments)
        running.waitForExit(timeout: timeout)
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        let steps = output.split(separator: "\n").filter { $0.hasPrefix("{\"step\"") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(status == 0 && !steps.contains { $0["step"] as? String == "failed" }, "browser-check failed (\(status)):\n\(output.suffix(4000))")
        return steps
    }

    /// A screenshot that shows something: a real PNG with many colours, not a flat fill.
    func checkScreenshot(_ step: [String: Any]?, _ name: String) {
        let shot = step?["screenshot"] as? [String: Any]
        #expect((shot?["colours"] as? Int ?? 0) > 20, "\(name) screenshot is blank: \(shot ?? [:])")
        #expect((shot?["bytes"] as? Int ?? 0) > 10_000, "\(name) screenshot is too small: \(shot ?? [:])")
    }

    func peerArguments(_ jid: JID, _ password: String) -> [String] {
        [Self.scripts + "/xmpp-peer.py", "--jid", jid.description, "--password", password, "--host", server.host,
         "--port", String(server.port), "--ca", server.caFile]
    }

    @discardableResult
    func peer(_ jid: JID, _ password: String, _ command: [String]) throws -> String {
        let running = try RoostBinary.startProgram(Self.python, peerArguments(jid, password) + command)
        running.waitForExit(timeout: 120)
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        #expect(status == 0, "xmpp-peer \(command.first ?? "") failed (\(status)):\n\(output.suffix(2000))")
        return output
    }

    func count(_ archive: String, _ query: String) -> Int {
        Int((try? ArchiveCount.sqlite(archive, query).trimmingCharacters(in: .whitespacesAndNewlines)) ?? "") ?? 0
    }

    /// alice's agent with `[serve] enabled`, online and serving, and bob registered to write to her.
    struct ServingAgent {
        let dir: TestDirectory
        let alice: JID
        let bob: JID, bobPassword: String
        let config: String
        let roost: RunningRoost
        var urlFile: String { (config as NSString).deletingLastPathComponent + "/run/roost/serve.url" }
    }

    func servingAgent() async throws -> ServingAgent {
        let dir = try TestDirectory()
        let accounts = try await server.registeredAccounts(["alice", "bob"])
        let config = try server.roostConfig(in: dir, account: accounts[0].jid.description, password: accounts[0].password,
                                            extra: "\n[serve]\nenabled = true\nport = 0\n")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        let agent = ServingAgent(dir: dir, alice: accounts[0].jid, bob: accounts[1].jid, bobPassword: accounts[1].password,
                                 config: config, roost: roost)
        try await roost.ready()
        try await roost.wait(for: .serving)
        return agent
    }

    @Test func agentArchiveListPagesSearchContextLiveAndRefusals() async throws {
        let agent = try await servingAgent()
        let (dir, alice, bob, bobPassword, roost) = (agent.dir, agent.alice, agent.bob, agent.bobPassword, agent.roost)
        defer { roost.stop(signal: SIGKILL) }
        let urlFile = agent.urlFile
        let url = try String(contentsOfFile: urlFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let token = String(url.split(separator: "=").last ?? "")
        #expect(url.hasPrefix("http://127.0.0.1:") && token.count == 64)
        #expect((try FileManager.default.attributesOfItem(atPath: urlFile)[.posixPermissions] as? Int) == 0o600)

        // Bob (slixmpp) writes 160 numbered messages, a Chinese one and one that looks like markup.
        let chinese = "明天我们在车站见面吧"
        let markup = "<script>alert('roost')</script> & <b>bold</b>"
        try peer(bob, bobPassword, ["flood", alice.description, "160", "--id-prefix", "web"])
        try peer(bob, bobPassword, ["send", alice.description, chinese, markup])
        let archive = dir.path + "/data/archive.sqlite"
        try? await waitUntil("bob's 162 messages archived", timeout: .seconds(60)) { count(archive, "SELECT count(*) FROM messages") >= 162 }
        #expect(count(archive, "SELECT count(*) FROM messages") == 162)

        let marker = "live-\(UUID().uuidString.prefix(8))"
        let live = ([Self.python] + peerArguments(bob, bobPassword) + ["send", alice.description, marker])
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let shots = dir.path + "/shots"
        let steps = try browserCheck(["--url", url, "--conversation", bob.description, "--pages", "3", "--search", "见面",
                                      "--live-command", live, "--live-text", marker, "--screenshots", shots, "--probe"])

        let list = steps["list"]
        #expect((list?["titles"] as? [String])?.contains(bob.description) == true, "\(list ?? [:])")
        #expect(list?["url_has_token"] as? Bool == false, "the token leaves the address bar after the first request")
        #expect(list?["live"] as? Bool == true)
        checkScreenshot(list, "list")

        let conversation = steps["conversation"]
        #expect(conversation?["messages"] as? Int == 50)
        #expect(conversation?["last"] as? String == markup, "the newest message, shown literally")
        #expect(conversation?["scripts"] as? [String?] == ["/static/roost.js"], "no script from a message reached the page")
        #expect(conversation?["at_bottom"] as? Bool == true && conversation?["has_older"] as? Bool == true)
        checkScreenshot(conversation, "conversation")

        let older = steps["older"]
        #expect(older?["counts"] as? [Int] == [50, 100, 150, 162], "\(older ?? [:])")
        #expect(older?["ids_unique"] as? Bool == true && older?["in_order"] as? Bool == true)
        #expect(older?["day_headings_unique"] as? Bool == true)
        checkScreenshot(older, "older")

        let keys = steps["keys"]
        #expect(keys?["selected"] as? String == keys?["first"] as? String, "j j k selects the first message")

        let search = steps["search"]
        #expect(search?["focused_by_slash"] as? Bool == true)
        #expect(search?["hits"] as? Int == 1)
        #expect((search?["marks"] as? [String])?.allSatisfy { "见面".contains($0) } == true && (search?["marks"] as? [String])?.isEmpty == false)
        #expect(search?["texts"] as? [String] == [chinese])
        checkScreenshot(search, "search")

        let context = steps["context"]
        #expect(context?["target"] as? String == context?["hit"] as? String)
        #expect(context?["text"] as? String == chinese)
        #expect(context?["on_screen"] as? Bool == true && context?["older"] as? Bool == true)
        checkScreenshot(context, "context")

        let liveStep = steps["live"]
        #expect(liveStep?["peer_status"] as? Int == 0, "\(liveStep ?? [:])")
        #expect(liveStep?["last"] as? String == marker)
        #expect(liveStep?["reloaded"] as? Bool == false)
        #expect((liveStep?["after"] as? Int ?? 0) == (liveStep?["before"] as? Int ?? -1) + 1)
        checkScreenshot(liveStep, "live")

        // Attacks reached Roost (its log says so) and were refused.
        let probe = steps["probe"]
        #expect(probe?["cookie_http_only"] as? Bool == true && probe?["cookie_same_site"] as? String == "Strict")
        #expect(probe?["cookie_readable_by_script"] as? Bool == false)
        #expect(probe?["no_cookie"] as? Int == 403)
        #expect(probe?["foreign_host"] as? Int == 421)
        #expect(probe?["wrong_token"] as? Int == 403)
        #expect(probe?["with_cookie"] as? Int == 200)
        #expect(probe?["export_without_form_token"] as? Int == 403)
        #expect(probe?["export_cross_origin"] as? Int == 403)
        #expect(probe?["export_get"] as? Int == 405)
        #expect(probe?["path_as_file"] as? Int == 404 && probe?["file_bad_id"] as? Int == 404)
        #expect((probe?["csp"] as? String)?.contains("script-src 'self'") == true)
        #expect(probe?["export"] as? Int == 200)
        #expect((probe?["export_disposition"] as? String)?.contains("\(bob.description).txt") == true)
        let exported = probe?["export_text"] as? String ?? ""
        #expect(exported.contains(chinese) && exported.contains(markup) && exported.contains("msg-160"))
        #expect(probe?["export_html"] as? Int == 200 && (probe?["export_html_disposition"] as? String)?.contains(".tar") == true, "\(probe ?? [:])")
        let members = probe?["export_html_members"] as? [String] ?? []
        #expect(members.contains { $0.hasSuffix("/index.html") } && members.contains { $0.hasSuffix("/\(bob.description).html") }, "\(members)")
        let htmlPage = probe?["export_html_page"] as? String ?? ""
        #expect(htmlPage.contains(HTMLText.escape(markup)) && !htmlPage.contains(markup), "the export page escapes the markup too")
        let log = roost.stderrSoFar
        #expect(log.contains("refused GET / from 127.0.0.1: no access token"))
        #expect(log.contains("refused GET / from 127.0.0.1: Host header 'rebound.example:"))
        #expect(log.contains("refused GET / from 127.0.0.1: wrong access token"))
        #expect(log.contains("refused POST /export from 127.0.0.1: missing or wrong form token"))
        #expect(log.contains("refused POST /export from 127.0.0.1: cross-origin form (Origin http://evil.example)"))
        #expect(!log.contains(token), "the token never reaches the log")
        #expect((steps["console"]?["problems"] as? [String])?.isEmpty == true, "\(steps["console"] ?? [:])")

        // A clean stop removes the address file.
        let (status, _) = roost.stop(signal: SIGTERM)
        #expect(status == 0)
        #expect(!FileManager.default.fileExists(atPath: urlFile))
    }

    /// What issues 12–14 brought into the archive, as the browser shows it: a room (occupants' names in their own
    /// colours, its name and subject, its joins in the presence timeline, Roost's own message on the right, a
    /// new message appearing live), OMEMO messages decrypted by the agent (slixmpp-omemo as bob), and a picture
    /// bob uploaded (XEP-0363), kept in the file store and served by id with exactly its bytes; bob's vCard name
    /// and picture and his typing in the chat-state timeline. Served by `roost serve`, a process of its own,
    /// while `roost run` writes the archive: live updates come from another process's commits.
    @Test func roomsEncryptedMessagesAndStoredFilesAsTheAgentArchivedThem() async throws {
        guard let omemoPython = ProcessInfo.processInfo.environment["ROOST_TEST_OMEMO_PYTHON"] else {
            Issue.record("ROOST_TEST_OMEMO_PYTHON is not set: run the suite with contrib/scripts/test, which makes the slixmpp-omemo virtualenv")
            return
        }
        let dir = try TestDirectory()
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        let (bobClient, bob, bobPassword) = try await server.registeredClient("bob")
        try await FilesKit.befriend(server, aliceClient, alice, bobClient, bob)
        await aliceClient.disconnect()
        await bobClient.disconnect()
        let (carolClient, carol, carolPassword) = try await server.registeredClient("carol")
        await carolClient.disconnect()
        let config = try server.roostConfig(in: dir, account: alice.description, password: alicePassword,
                                            extra: "\n[files]\nallow_private_addresses = true\n")
        let archive = dir.path + "/data/archive.sqlite"
        func startOmemo(_ who: String, _ jid: JID, _ password: String, _ arguments: [String]) throws -> RunningRoost {
            try RoostBinary.startProgram(omemoPython, ["-W", "ignore", Self.scripts + "/omemo-peer.py"] + arguments + [
                "--jid", jid.description, "--password", password, "--resource", who == "bob" ? "peer" : "phone",
                "--data", "\(dir.path)/\(who).omemo.json", "--host", server.host, "--port", String(server.port), "--ca", server.caFile])
        }
        func omemo(_ who: String, _ jid: JID, _ password: String, _ arguments: [String]) throws {
            let running = try startOmemo(who, jid, password, arguments)
            running.waitForExit(timeout: 120)
            let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
            #expect(status == 0, "omemo-peer \(arguments.first ?? "") failed (\(status)):\n\(output.suffix(2000))")
        }

        // The room: bob creates it with a subject, alice's phone bookmarks it (autojoin) under a name with markup.
        let room = "trip-\(UUID().uuidString.prefix(8).lowercased())@conference.\(server.domain)"
        let roomName = "Trip & <planners>"
        let subject = "Where do we meet? <b>not bold</b>"
        let phone = RoomPeer(server: server, jid: alice, password: alicePassword, resource: "phone")
        let bobInRoom = RoomPeer(server: server, jid: bob, password: bobPassword)
        let carolInRoom = RoomPeer(server: server, jid: carol, password: carolPassword)
        try bobInRoom.run(["muc", room, "bob", "--subject", subject, "--send", "bob opens the room"])
        try phone.run(["bookmark", room, "--autojoin", "--nick", "Alice", "--name", roomName])
        try omemo("alice", alice, alicePassword, ["setup"])

        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        try await roost.wait(for: .omemoPublished())
        // The server's temporary folder is this test's own: its preview copies can be counted, and must go at exit.
        let temporary = dir.path + "/tmp"
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let serve = try RoostBinary.start(["serve", "--config", config, "--port", "0", "--json"], environment: ["TMPDIR": temporary])
        defer { serve.stop(signal: SIGKILL) }
        try serve.waitForLog("\"url\"")
        let line = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{") })
        let url = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        try await waitFor("the room joined", roost, timeout: 60) {
            try RoostBinary.run(["rooms", "--config", config, "--json"]).jsonLines.contains {
                $0["room"] as? String == room && $0["state"] as? String == "joined"
            }
        }

        // In the room: carol (with markup and Chinese), bob again, and Roost's own message.
        let carolText = "carol's <i>answer</i> 你好 & more"
        try carolInRoom.run(["muc", room, "carol", "--send", carolText])
        try bobInRoom.run(["muc", room, "bob", "--send", "bob again"])
        let sent = try RoostBinary.run(["send", "--config", config, room, "from roost in the room"])
        #expect(sent.status == 0, "\(sent.stderr)")

        // An encrypted room (main's encrypted group chats): bob's OMEMO client makes it non-anonymous and
        // encrypts for alice's devices; Roost joins and decrypts.
        let secretRoom = "secret-\(UUID().uuidString.prefix(8).lowercased())@conference.\(server.domain)"
        let secretText = "encrypted in the room 你好 <i>"
        let bobSecret = try startOmemo("bob", bob, bobPassword, ["room", secretRoom, "bob", secretText, "--for", alice.description,
                                                                 "--prefix", "secret", "--timeout", "90", "--stay", "60"])
        defer { bobSecret.stop(signal: SIGKILL) }
        try await waitFor("bob's encrypted room", bobSecret, timeout: 60) { bobSecret.stderrSoFar.contains("\"joined\"") }
        let joined = try RoostBinary.run(["rooms", "join", "--config", config, secretRoom])
        #expect(joined.status == 0, "\(joined.stderr)")
        try await waitFor("the encrypted room message decrypted", roost, timeout: 60) {
            count(archive, "SELECT count(*) FROM messages WHERE conversation = '\(secretRoom)' AND encryption = 'omemo' AND e2e_failure IS NULL") == 1
        }
        bobSecret.stop(signal: SIGKILL)

        // bob's vCard (name and picture, announced by its hash in presence, XEP-0153), and his typing.
        let avatarFile = dir.path + "/bob-avatar.png"
        try await FilesKit.fixture("make_png.py", [avatarFile, "96", "96", "20", "160", "60"])
        let bobSession = try await XMPPPeer.start(on: server, jid: bob, password: bobPassword, resource: "desk")
        try await bobSession.call("vcard-set", ["fullname": "Robert <Bob> Example", "photo_type": "image/png",
                                                "photo_base64": try Data(contentsOf: URL(fileURLWithPath: avatarFile)).base64EncodedString()])
        try await bobSession.presence(to: try alice.with(resource: "roost"), priority: 1, photoHash: "0123456789abcdef0123456789abcdef01234567")
        try roost.waitForLog("cached the vCard of", timeout: 30)
        // To Roost's resource: it has a negative priority, and a state sent to the bare JID reaches no such resource.
        try await bobSession.call("chatstate", ["to": try alice.with(resource: "roost").description, "state": "composing"])
        await bobSession.stop()

        // With bob: two OMEMO messages (slixmpp-omemo encrypts, the agent decrypts), then a picture he uploads.
        let secrets = ["first secret <&>", "第二个秘密"]
        try omemo("bob", bob, bobPassword, ["send", alice.description] + secrets)
        let picture = dir.path + "/red.png"
        try await FilesKit.fixture("make_png.py", [picture, "320", "240", "220", "20", "20"])
        let large = dir.path + "/holiday.png"
        try await FilesKit.fixture("make_png.py", [large, "2400", "1800", "20", "40", "220"])
        for file in [picture, large] {
            try await FilesKit.peer(bob, bobPassword, ["upload", try alice.with(resource: "roost").description, file])
        }
        let kept = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "red.png" && $0["state"] as? String == "stored" }
        let pictureSHA = try await FilesKit.sha256(picture), largeSHA = try await FilesKit.sha256(large)
        #expect(kept["sha256"] as? String == pictureSHA)
        _ = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "holiday.png" && $0["state"] as? String == "stored" }
        let expected = [
            "SELECT count(*) FROM messages WHERE encryption = 'omemo' AND e2e_failure IS NULL": 2,
            "SELECT count(*) FROM chat_states WHERE state = 'composing'": 1,
            "SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body IN ('bob again', 'from roost in the room')": 2,
            "SELECT count(*) FROM messages WHERE conversation = '\(room)' AND body LIKE 'carol''s%'": 1,
        ]
        do {
            try await waitFor("everything archived", roost, timeout: 60) { expected.allSatisfy { count(archive, $0.key) >= $0.value } }
        } catch {
            Issue.record("archived: \(expected.map { "\($0.key) → \(count(archive, $0.key)) of \($0.value)" }.joined(separator: "\n"))")
            throw error
        }

        let shots = dir.path + "/shots"
        let marker = "live in the room \(UUID().uuidString.prefix(8))"
        let live = (["/usr/bin/env", "XMPP_PEER_PASSWORD=\(carolPassword)", Self.python, Self.scripts + "/xmpp-peer.py", "--jid", carol.description,
                     "--host", server.host, "--port", String(server.port), "--ca", server.caFile, "muc", room, "carol", "--send", marker])
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let steps = try browserCheckAll(["--url", url, "--inspect", roomName, "--inspect", bob.description, "--inspect", secretRoom,
                                         "--screenshots", shots,
                                         "--conversation", roomName, "--pages", "0", "--live-command", live, "--live-text", marker])
        let roomPage = try #require(steps.first { $0["entry"] as? String == roomName }, "\(steps)")
        let chat = try #require(steps.first { $0["entry"] as? String == bob.description }, "\(steps)")
        let secret = try #require(steps.first { $0["entry"] as? String == secretRoom }, "\(steps)")

        // The room, listed as a room, under its name; its details; names in one colour per occupant.
        #expect((roomPage["list_entry"] as? [String: Any])?["room"] as? Bool == true, "\(roomPage)")
        #expect(roomPage["title"] as? String == roomName)
        let sub = roomPage["sub"] as? String ?? ""
        #expect(sub.contains(room) && sub.contains("room (joined as Alice)") && sub.contains("subject “\(subject)”"), "\(sub)")
        let texts = roomPage["texts"] as? [String] ?? []
        #expect(texts.contains(carolText) && texts.contains("bob again") && texts.contains("from roost in the room"), "\(texts)")
        let names = roomPage["names"] as? [[String: Any]] ?? []
        func colour(_ nick: String) -> String? { names.first { $0["name"] as? String == nick }?["colour"] as? String }
        #expect(names.allSatisfy { $0["occupant"] as? Bool == true }, "\(names)")
        #expect(colour("bob") != nil && colour("carol") != nil, "\(names)")
        // Roost's own message is the user's: on the right, like a chat's, without a name (issue 30).
        #expect(roomPage["outgoing"] as? [String] == ["from roost in the room"] && colour("Alice") == nil, "\(roomPage["outgoing"] ?? "") \(names)")
        // One colour per occupant, also on the subject change bob made (it has no occupant id). The hue comes from
        // the nick: two at random are equal 1 in 360.
        for nick in ["bob", "carol"] {
            #expect(Set(names.filter { $0["name"] as? String == nick }.map { $0["colour"] as? String ?? "" }).count == 1,
                    "\(nick): \(names)\n\((try? ArchiveCount.sqlite(archive, "SELECT from_jid, occupant_id, body FROM messages WHERE conversation = '\(room)'")) ?? "")")
        }
        #expect(Set([colour("bob"), colour("carol")]).count > 1, "occupants are told apart by colour: \(names)")
        #expect(Set(roomPage["avatars"] as? [String] ?? []).count > 1, "occupants' avatars differ: \(roomPage["avatars"] ?? [])")
        let roomEvents = roomPage["with_presence"] as? [String] ?? []
        #expect(roomEvents.contains { $0.hasSuffix("carol joined") } && roomEvents.contains { $0.contains("carol left") }, "\(roomEvents)")
        #expect((roomPage["events"] as? [String] ?? []).allSatisfy { !$0.contains("joined") }, "presence only once switched on")
        checkScreenshot(roomPage, "room")

        // The encrypted room: bob's message decrypted, marked, under his nick in his colour.
        #expect((secret["list_entry"] as? [String: Any])?["room"] as? Bool == true && (secret["sub"] as? String)?.contains("room (joined as") == true,
                "\(secret)")
        #expect((secret["texts"] as? [String])?.contains { $0.hasPrefix(secretText + " [OMEMO") } == true, "\(secret["texts"] ?? "")")
        #expect((secret["names"] as? [[String: Any]])?.contains { $0["name"] as? String == "bob" && $0["colour"] as? String == colour("bob") } == true,
                "bob has the same colour in every room: \(secret["names"] ?? "")")

        // bob: the decrypted texts, marked as OMEMO, and the picture through /file/ with exactly its bytes.
        let chatTexts = chat["texts"] as? [String] ?? []
        for secret in secrets {
            #expect(chatTexts.contains { $0.hasPrefix(secret + " [OMEMO") }, "\(secret) decrypted and marked: \(chatTexts)")
        }
        #expect(!chatTexts.contains { $0.contains("OMEMO encrypted") }, "never the fallback body")
        #expect(chat["title"] as? String == "Robert <Bob> Example", "the vCard's name, literally")
        #expect((chat["names"] as? [[String: Any]])?.first?["name"] as? String == "Robert <Bob> Example",
                "bubbles name him as the list does (the agent stored his address as the sender: his roster item has no name): \(chat["names"] ?? "")")
        let listAvatar = (chat["list_entry"] as? [String: Any])?["avatar"] as? [String: Any]
        #expect((listAvatar?["src"] as? String)?.hasPrefix("/avatar?") == true && listAvatar?["loaded"] as? Bool == true
                && listAvatar?["width"] as? Int == 96, "bob's picture in the list: \(listAvatar ?? [:])")
        #expect((chat["with_states"] as? [String] ?? []).contains { $0.hasSuffix("Robert <Bob> Example is typing") }, "\(chat["with_states"] ?? "")")
        #expect(!chatTexts.contains { $0.contains(".png") }, "a body that is only the file's address is not repeated: \(chatTexts)")
        #expect(((chat["list_entry"] as? [String: Any])?["text"] as? String)?.contains(": (picture) holiday.png") == true,
                "the list says what the newest message is: \(chat["list_entry"] ?? "")")
        let images = chat["images"] as? [[String: Any]] ?? []
        #expect(images.count == 2, "\(chat)")
        let small = images.first { $0["alt"] as? String == "red.png" }, big = images.first { $0["alt"] as? String == "holiday.png" }
        #expect(small?["loaded"] as? Bool == true && small?["width"] as? Int == 320, "\(images)")
        #expect((small?["src"] as? String)?.hasPrefix("/preview/") == true && (small?["href"] as? String)?.hasPrefix("/file/") == true)
        #expect(small?["sha256"] as? String == pictureSHA && small?["href_sha256"] as? String == pictureSHA,
                "a small picture is shown as it is: exactly the stored bytes")
        // The 2400×1800 picture shows through a 1024-pixel copy (as the html export's thumbnail); its link opens the original.
        #expect(big?["loaded"] as? Bool == true && big?["width"] as? Int == 1024 && big?["height"] as? Int == 768, "\(images)")
        #expect(big?["sha256"] as? String != largeSHA && big?["href_sha256"] as? String == largeSHA, "\(images)")
        #expect(chat["at_end"] as? Bool == true, "the conversation stays at its newest message while its pictures load")
        checkScreenshot(chat, "chat")
        let shot = try #require((chat["screenshot"] as? [String: Any])?["path"] as? String)
        let red = Int(try await FilesKit.fixture("png_colour_count.py", [shot, "220", "20", "20"])) ?? 0
        let blue = Int(try await FilesKit.fixture("png_colour_count.py", [shot, "20", "40", "220"])) ?? 0
        #expect(red > 20_000 && blue > 20_000, "the pictures are drawn on the page (\(red) red, \(blue) blue pixels)")
        // A message carol writes while the room is open appears without a reload.
        let liveStep = steps.first { $0["step"] as? String == "live" }
        #expect(liveStep?["peer_status"] as? Int == 0 && liveStep?["last"] as? String == marker, "\(liveStep ?? [:])")
        #expect(liveStep?["reloaded"] as? Bool == false)
        #expect((steps.first { $0["step"] as? String == "console" }?["problems"] as? [String])?.isEmpty == true, "\(steps.last ?? [:])")
        // The large picture's copy was made in the server's own temporary folder, and goes with the server.
        let previewFolders = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("roost-serve-previews-") }
        #expect(previewFolders.count == 1, "\(previewFolders)")
        let copies = try previewFolders.first.map { try FileManager.default.contentsOfDirectory(atPath: temporary + "/" + $0) } ?? []
        #expect(copies.count == 1 && copies.first?.hasPrefix(largeSHA + ".") == true, "one copy, named by the picture's SHA-256: \(copies)")
        let (status, log) = serve.stop(signal: SIGTERM)
        #expect(status == 0, "\(log.suffix(2000))")
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasPrefix("roost-serve-") }
        #expect(left.isEmpty, "nothing of the server is left in its temporary folder: \(left)")
    }

    /// The copies of large pictures stay within their budget while the server runs: the least recently shown go
    /// first, a copy shown again moves to the back of the line, the newest copy stays even alone over budget, and
    /// the folder goes at the end.
    @Test func previewCopiesStayWithinTheirBudget() throws {
        let dir = try TestDirectory()
        // What a server killed with SIGKILL left (a process id no process has), and a running server's folder.
        let gone = dir.path + "/roost-serve-previews-2147483646-AbC123", running = dir.path + "/roost-serve-previews-\(getpid())-XyZ789"
        for folder in [gone, running] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            _ = FileManager.default.createFile(atPath: folder + "/copy", contents: Data(repeating: 1, count: 100))
        }
        let cache = try #require(PreviewCache(byteLimit: 10_000, parent: dir.path))
        #expect(cache.folder.hasPrefix(dir.path + "/roost-serve-previews-\(getpid())-"))
        #expect(!FileManager.default.fileExists(atPath: gone), "a folder left by a server that no longer runs is removed")
        #expect(FileManager.default.fileExists(atPath: running + "/copy"), "a running server's folder is kept")
        func copy(_ name: String, bytes: Int) -> String {
            let path = cache.folder + "/" + name
            _ = FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: bytes))
            return path
        }
        func onDisk() throws -> Set<String> { Set(try FileManager.default.contentsOfDirectory(atPath: cache.folder)) }
        for index in 0..<4 { cache.add("p\(index)", path: copy("p\(index)", bytes: 3_000)) }
        #expect(try onDisk() == ["p1", "p2", "p3"], "the oldest copy went to stay within 10,000 bytes")
        #expect(cache.bytes == 9_000 && cache.count == 3)
        #expect(cache.path(for: "p1") == cache.folder + "/p1", "p1 is shown again: now the most recently used")
        cache.add("p4", path: copy("p4", bytes: 3_000))
        #expect(try onDisk() == ["p1", "p3", "p4"], "p2, the least recently shown, went instead of p1")
        #expect(cache.path(for: "p2") == nil)
        cache.add("big", path: copy("big", bytes: 25_000))
        #expect(try onDisk() == ["big"] && cache.bytes == 25_000, "a copy larger than the budget is kept alone")
        // Many pictures shown over a long session: the folder never holds more than the budget (and the newest).
        for index in 0..<200 { cache.add("q\(index)", path: copy("q\(index)", bytes: 1_500)) }
        let sizes = try onDisk().map { (try FileManager.default.attributesOfItem(atPath: cache.folder + "/" + $0)[.size] as? Int) ?? 0 }
        #expect(sizes.reduce(0, +) <= 10_000 && sizes.count == 6, "\(sizes)")
        cache.removeAll()
        #expect(!FileManager.default.fileExists(atPath: cache.folder))
    }

    /// `--listen` on an address other machines reach: refused without --allow-remote (a clear error, exit 2, nothing
    /// served), served with it, with a warning in the log; the printed address is the loopback one, and it works.
    @Test func listeningBeyondLoopbackNeedsAllowRemoteAndWarns() async throws {
        let dir = try TestDirectory()
        let archive = dir.path + "/archive.sqlite"
        try SyntheticArchive.build(at: archive, messages: 200)
        let config = try dir.write("config.ini", "[archive]\npath = \(archive)\n")

        let refused = try RoostBinary.run(["serve", "--config", config, "--listen", "0.0.0.0", "--port", "0"])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("--listen 0.0.0.0 is not a loopback address: add --allow-remote"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("warning") && refused.stdout.isEmpty, "nothing was served: \(refused.stdout)")
        let loopback = try RoostBinary.start(["serve", "--config", config, "--listen", "127.0.0.2", "--port", "0", "--json"])
        defer { loopback.stop(signal: SIGKILL) }
        try loopback.waitForLog("\"url\"")
        let (loopbackStatus, loopbackLog) = loopback.stop(signal: SIGTERM)
        #expect(loopbackStatus == 0 && !loopbackLog.contains("anyone who can reach"), "another loopback address needs no flag and warns of nothing")

        let serve = try RoostBinary.start(["serve", "--config", config, "--listen", "0.0.0.0", "--allow-remote", "--port", "0", "--json"])
        defer { serve.stop(signal: SIGKILL) }
        try serve.waitForLog("\"url\"")
        try serve.waitForLog("serving on 0.0.0.0: anyone who can reach this address and has the token can read the whole archive")
        let line = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{") })
        let url = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        #expect(url.hasPrefix("http://127.0.0.1:"), "\(url)")
        let steps = try browserCheck(["--url", url, "--timeout", "60"])
        #expect((steps["list"]?["titles"] as? [String])?.isEmpty == false, "the web view answers: \(steps["list"] ?? [:])")
        let (status, log) = serve.stop(signal: SIGTERM)
        #expect(status == 0, "\(log.suffix(2000))")
        #expect(log.contains("WARN  serving on 0.0.0.0") && log.contains("HTTP is not encrypted"), "\(log.suffix(2000))")
    }

    /// Unread counts and "Mark read" against the real agent: bob (slixmpp) writes, the list counts his messages
    /// live, `roost read` from the command line clears them live, viewing the conversation marks nothing read, the
    /// page's button does (the archive's read mark moves, as `roost read` moves it), forms from elsewhere are
    /// refused (and logged); then bob corrects one message and retracts another, and the open page shows both in
    /// place, without a reload.
    @Test func unreadCountsMarkReadAndLiveCorrectionsAndRetractions() async throws {
        let agent = try await servingAgent()
        let (dir, alice, bob, bobPassword, config, roost) = (agent.dir, agent.alice, agent.bob, agent.bobPassword, agent.config, agent.roost)
        defer { roost.stop(signal: SIGKILL) }
        let url = try String(contentsOfFile: agent.urlFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let archive = dir.path + "/data/archive.sqlite"
        let tag = String(UUID().uuidString.prefix(6))
        try peer(bob, bobPassword, ["send", alice.description, "hello-\(tag)", "teh typo-\(tag)", "oops-\(tag)", "--id-prefix", "w\(tag)"])
        try await waitFor("bob's messages archived", roost, timeout: 60) { count(archive, "SELECT count(*) FROM messages") == 3 }

        func shell(_ argv: [String]) -> String { argv.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ") }
        let bobSays = { (text: String) in shell([Self.python] + peerArguments(bob, bobPassword) + ["send", alice.description, text]) }
        let cliRead = shell([RoostBinary.path, "read", "--config", config, bob.description])
        // One session of bob's: a correction of his second message (XEP-0308), a retraction of his third (XEP-0424).
        let commands = [
            ["cmd": "raw", "xml": "<message to='\(alice)' type='chat' id='fix\(tag)'><body>the typo-\(tag) fixed</body>"
                + "<replace xmlns='urn:xmpp:message-correct:0' id='w\(tag)-2'/></message>"],
            ["cmd": "retract", "to": alice.description, "id": "w\(tag)-3"],
            ["cmd": "ping"],
        ].map { String(decoding: try! JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }.joined(separator: "\n")
        let update = "printf '%s\\n' " + shell([commands]) + " | " + shell([Self.python] + peerArguments(bob, bobPassword) + ["session"])
        let steps = try browserCheck(["--url", url, "--conversation", bob.description, "--pages", "0", "--screenshots", dir.path + "/shots",
                                      "--list-command", bobSays("more-\(tag)"), "--list-expect", "4",
                                      "--list-command", cliRead, "--list-expect", "0",
                                      "--list-command", bobSays("again-\(tag)"), "--list-expect", "1",
                                      "--update-command", update, "--update-text", "the typo-\(tag) fixed",
                                      "--update-gone", "teh typo-\(tag)", "--update-gone", "oops-\(tag)", "--mark-read"], timeout: 400)

        // The list's counts follow bob's messages and `roost read`, live.
        let unread = steps["unread"]
        #expect(unread?["initial"] as? Int == 3, "\(unread ?? [:])")
        #expect(unread?["seen"] as? [Int] == [4, 0, 1], "\(unread ?? [:])")
        #expect(unread?["statuses"] as? [Int] == [0, 0, 0] && unread?["reloaded"] as? Bool == false, "\(unread ?? [:])")
        checkScreenshot(unread, "unread")

        // Bob's correction and retraction, in place.
        let changed = steps["update"]
        #expect(changed?["peer_status"] as? Int == 0 && changed?["arrived"] as? Bool == true, "\(changed ?? [:])")
        let goneIDs = changed?["gone_ids"] as? [String?] ?? []
        #expect(goneIDs.count == 2 && goneIDs.allSatisfy { $0 != nil }, "\(changed ?? [:])")
        #expect(changed?["text_id"] as? String == goneIDs.first ?? nil, "the corrected text is in the typo's own element: \(changed ?? [:])")
        #expect(changed?["edited"] as? [String] == [goneIDs.first ?? nil].compactMap { $0 }, "marked edited: \(changed ?? [:])")
        #expect(changed?["tombstones"] as? [String] == [goneIDs.last ?? nil].compactMap { $0 }, "the retracted message's tombstone: \(changed ?? [:])")
        #expect(changed?["before"] as? Int == changed?["after"] as? Int && changed?["ids_unique"] as? Bool == true,
                "nothing added, nothing twice: \(changed ?? [:])")
        #expect(changed?["reloaded"] as? Bool == false)
        checkScreenshot(changed, "update")

        // Viewing marked nothing; the button did, through the archive's read mark; forms from elsewhere were refused.
        let marked = steps["markread"]
        #expect(marked != nil, "the agent's log: \(roost.stderrSoFar.suffix(6000))")
        #expect(marked?["page_before"] as? Int == 1 && marked?["list_after_viewing"] as? Int == 1, "\(marked ?? [:])")
        #expect(marked?["without_form_token"] as? Int == 403 && marked?["cross_origin"] as? Int == 403 && marked?["by_get"] as? Int == 405,
                "\(marked ?? [:])")
        #expect(marked?["list_after_refusals"] as? Int == 1, "a refused form marks nothing")
        #expect(marked?["page_after"] as? Int == 0 && marked?["button_disabled"] as? Bool == true, "\(marked ?? [:])")
        #expect(marked?["url_after"] as? String == marked?["conversation_url"] as? String, "back on the conversation")
        #expect(marked?["list_after"] as? Int == 0, "\(marked ?? [:])")
        checkScreenshot(marked, "markread")
        #expect(count(archive, "SELECT count(*) FROM read_state s WHERE s.conversation = '\(bob)' AND s.read_row = "
                      + "(SELECT max(id) FROM messages m WHERE m.conversation = '\(bob)')") == 1, "the read mark is at bob's newest message")
        let status = try RoostBinary.run(["read", "--config", config, bob.description, "--json"])
        #expect(status.jsonLines.first?["was_unread"] as? Int == 0, "roost read agrees: \(status.stdout)")
        let log = roost.stderrSoFar
        #expect(log.contains("refused POST /read from 127.0.0.1: missing or wrong form token"))
        #expect(log.contains("refused POST /read from 127.0.0.1: cross-origin form (Origin http://evil.example)"))
        #expect(log.contains("serve: marked \(bob) read (account \(alice))"))
        #expect((steps["console"]?["problems"] as? [String])?.isEmpty == true, "\(steps["console"] ?? [:])")
        let (exit, _) = roost.stop(signal: SIGTERM)
        #expect(exit == 0)
    }

    /// Issue 29, item 5: a room nick is whatever its occupant chose. One that reads as query language (`z OR
    /// after:2000-01-01`) writes to alice privately; the archive holds that conversation under the nick, and its page's
    /// export — the form as drawn, through the web view's libsoup server — holds that conversation only, however much
    /// else the archive has.
    @Test func aHostileNickExportsItsOwnConversationOnly() async throws {
        let agent = try await servingAgent()
        let (dir, alice, bob, bobPassword, config, roost) = (agent.dir, agent.alice, agent.bob, agent.bobPassword, agent.config, agent.roost)
        defer { roost.stop(signal: SIGKILL) }
        let url = try String(contentsOfFile: agent.urlFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let archive = dir.path + "/data/archive.sqlite"
        let room = "hostile-\(UUID().uuidString.prefix(8).lowercased())@conference.\(server.domain)"
        let nick = "z OR after:2000-01-01"
        try peer(bob, bobPassword, ["muc", room, "bob", "--send", "the room's own message"])
        let joined = try RoostBinary.run(["rooms", "join", room, "--config", config])
        #expect(joined.status == 0, "\(joined.stderr)")
        let roostNick = try #require(try RoostBinary.run(["rooms", "--json", "--config", config]).jsonLines
            .first { $0["room"] as? String == room }?["nick"] as? String)
        try peer(bob, bobPassword, ["send", alice.description, "a chat with bob", "another chat"])
        try peer(bob, bobPassword, ["muc", room, nick, "--pm", "\(roostNick)=from the hostile nick"])
        // The attack reached Roost: the private message is archived under the nick, beside everything else.
        try await waitFor("the private message archived", roost, timeout: 60) {
            count(archive, "SELECT count(*) FROM messages WHERE conversation = '\(room)/\(nick)'") == 1
        }
        try await waitFor("bob's chats archived", roost, timeout: 60) { count(archive, "SELECT count(*) FROM messages") >= 4 }
        let total = count(archive, "SELECT count(*) FROM messages")

        let steps = try browserCheck(["--url", url, "--conversation", nick, "--export", "jsonl"])
        let export = try #require(steps["export"])
        #expect(export["status"] as? Int == 200, "\(export)")
        #expect((export["fields"] as? [String: String])?["j"] == "\(room)/\(nick)", "the page's form names the conversation: \(export)")
        let lines = (export["text"] as? String ?? "").split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let messages = lines.filter { $0["event"] as? String == "message" }
        #expect(messages.count == 1 && total >= 4, "one message of \(total): \(messages.map { $0["body"] ?? "" })")
        #expect(messages.first?["conversation"] as? String == "\(room)/\(nick)" && messages.first?["body"] as? String == "from the hostile nick")
        // The CLI's way to name a conversation for an export takes it by value too.
        let cli = try RoostBinary.run(["export", "--format", "jsonl", "--conversation", "\(room)/\(nick)", "--config", config])
        let cliMessages = cli.jsonLines.filter { $0["event"] as? String == "message" }
        #expect(cli.status == 0 && cliMessages.count == 1 && cliMessages.first?["body"] as? String == "from the hostile nick", "\(cli.stdout)")
    }

    @Test func largeArchiveThroughRoostServe() async throws {
        let dir = try TestDirectory()
        let messages = Int(ProcessInfo.processInfo.environment["ROOST_TEST_SERVE_MESSAGES"] ?? "") ?? 1_000_000
        let archive = dir.path + "/archive.sqlite"
        try SyntheticArchive.build(at: archive, messages: messages)
        let config = try dir.write("config.ini", "[archive]\npath = \(archive)\n")

        let remote = try RoostBinary.run(["serve", "--config", config, "--listen", "0.0.0.0"])
        #expect(remote.status == 2 && remote.stderr.contains("--allow-remote"), "\(remote.stderr)")

        // --open hands the browser (here an xdg-open that notes its arguments) a page that forwards to the address:
        // the token is in a 0600 file, never in a command line.
        let bin = dir.path + "/bin", opened = dir.path + "/opened"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try dir.write("bin/xdg-open", "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"\(opened).tmp\" && mv \"\(opened).tmp\" \"\(opened)\"\n", mode: 0o755)
        let path = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let serve = try RoostBinary.start(["serve", "--config", config, "--port", "0", "--json", "--open"], environment: ["PATH": path])
        defer { serve.stop(signal: SIGKILL) }
        try serve.waitForLog("\"url\"")
        let line = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{") })
        let url = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)
        let token = String(url.split(separator: "=").last ?? "")
        try await waitFor("xdg-open called", serve, timeout: 20) { FileManager.default.fileExists(atPath: opened) }
        let arguments = try String(contentsOfFile: opened, encoding: .utf8).split(separator: "\n").map(String.init)
        let forwarding = dir.path + "/run/roost/serve-open.html"
        #expect(arguments == [forwarding], "xdg-open is given the forwarding page: \(arguments)")
        #expect(!arguments.joined().contains(token), "no token on a command line")
        #expect((try FileManager.default.attributesOfItem(atPath: forwarding)[.posixPermissions] as? Int) == 0o600)

        // The browser opens that page and lands on the list (the first step), as `roost serve --open` does.
        let steps = try browserCheck(["--url", "file://" + forwarding, "--conversation", SyntheticArchive.contact(0), "--pages", "3", "--search", "中国",
                                      "--screenshots", dir.path + "/shots", "--no-script"])
        let reader = try ArchiveReader(path: archive)
        let conversations = try reader.stats().conversations.count
        #expect((steps["list"]?["titles"] as? [String])?.count == conversations)
        #expect((steps["list"]?["rooms"] as? Int ?? 0) > 0, "rooms are listed as rooms")
        #expect(steps["older"]?["counts"] as? [Int] == [50, 100, 150, 200])
        #expect(steps["older"]?["in_order"] as? Bool == true)
        let marks = steps["search"]?["marks"] as? [String] ?? []
        #expect(!marks.isEmpty && marks.allSatisfy { $0 == "中国" })
        #expect(steps["context"]?["target"] as? String == steps["context"]?["hit"] as? String)
        #expect(steps["context"]?["on_screen"] as? Bool == true)
        #expect((steps["console"]?["problems"] as? [String])?.isEmpty == true, "\(steps["console"] ?? [:])")
        for name in ["list", "conversation", "older", "search", "context"] { checkScreenshot(steps[name], name) }

        // Without JavaScript every page still reads: the conversation, its older page by the link, search by the form's address.
        let noScript = steps["noscript"]
        #expect(noScript?["newest"] as? Int == 50 && noScript?["older"] as? Int == 50 && noScript?["disjoint"] as? Bool == true,
                "\(noScript ?? [:])")
        #expect(noScript?["live_opened"] as? Bool == false, "no script ran")
        #expect((noScript?["marks"] as? [String])?.contains("中国") == true && noScript?["in_context"] as? Bool == true)
        let (status, log) = serve.stop(signal: SIGTERM)
        #expect(status == 0, "\(log.suffix(2000))")
        #expect(log.contains("stopped serving"))
        #expect(!FileManager.default.fileExists(atPath: forwarding), "the forwarding page goes when the server stops")
    }
}
