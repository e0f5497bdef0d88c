import Foundation
import RoostCore
import Testing
import RoostTestSupport
import RoostXMPP

/// The conversation every real client has with the world, and what is checked afterwards (see `RealClientsTier`).
final class Scenario: @unchecked Sendable {
    let server: TestServer
    let dir: TestDirectory
    let alice: (jid: JID, password: String)
    let bob: XMPPPeer
    let carol: XMPPPeer
    let bobPassword: String
    let room: String
    let client: any RealClient
    var said: [Said] = []
    var roost: RunningRoost?
    var config: String { dir.path + "/config.ini" }
    var archive: String { dir.path + "/data/archive.sqlite" }
    /// The nick the user has in the room, in Roost and in the client (the bookmark's).
    let nick = "Alice"

    /// The time zones the imports run in (issue 28): the client's own is one of them.
    static let importZones = ["Asia/Tokyo", "Europe/Berlin", "America/New_York"]
    /// How far a client's own stamp may be from the server's (whole seconds, delivery, a loaded machine).
    static let timeTolerance: Int64 = 5_000

    private init(server: TestServer, dir: TestDirectory, alice: (JID, String), bob: XMPPPeer, bobPassword: String, carol: XMPPPeer,
                 room: String, client: any RealClient) {
        self.server = server
        self.dir = dir
        self.alice = alice
        self.bob = bob
        self.bobPassword = bobPassword
        self.carol = carol
        self.room = room
        self.client = client
    }

    static func run(client name: String, timeZone: String) async throws {
        try TestRequirement.check(.server)
        for tool in RealClientsTier.tools { try TestRequirement.check(.tool(tool)) }
        let server = try TestServer.require()
        let dir = try TestDirectory("roost-\(name)")
        let accounts = try await server.registeredAccounts(["alice", "bob", "carol"])
        let bob = try await XMPPPeer.start(on: server, jid: accounts[1].jid, password: accounts[1].password)
        let carol = try await XMPPPeer.start(on: server, jid: accounts[2].jid, password: accounts[2].password)
        let machine = try ClientMachine(in: dir, name: name, timeZone: timeZone)
        let account = ClientAccount(jid: accounts[0].jid.description, password: accounts[0].password, domain: server.domain,
                                    host: server.host, port: server.port, caFile: server.caFile)
        let client: any RealClient = switch name {
        case "profanity": ProfanityClient(machine: machine, account: account, socket: dir.path + "/tmux")
        case "finch": FinchClient(machine: machine, account: account, socket: dir.path + "/tmux")
        case "poezio": PoezioClient(machine: machine, account: account, socket: dir.path + "/tmux")
        default: GajimClient(machine: machine, account: account)
        }
        let room = "team-\(UUID().uuidString.prefix(8).lowercased())@conference.\(server.domain)"
        let scenario = Scenario(server: server, dir: dir, alice: accounts[0], bob: bob, bobPassword: accounts[1].password, carol: carol,
                                room: room, client: client)
        defer {
            scenario.roost?.stop(signal: SIGKILL)
        }
        do {
            try await scenario.converse()
        } catch {
            Issue.record("\(name): \(error)\n\(client.describe())\nroost log:\n\(scenario.roost?.stderrSoFar.suffix(3000) ?? "")")
            try? await client.quit()
            await bob.stop()
            await carol.stop()
            return
        }
        await bob.stop()
        await carol.stop()
        // Blocking work (sqlite3, roost import) off the cooperative pool: the whole suite shares its two threads.
        try await offPool {
            try scenario.checkLiveArchive()
            try scenario.checkImports()
            try scenario.keepFixture()
        }
    }

    // MARK: The conversation

    private func marker(_ label: String) -> String { label }

    private func record(_ message: Said) { said.append(message) }

    private func startRoost() async throws {
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        self.roost = roost
        try await waitUntil("Roost in \(room)", timeout: .seconds(120), detail: { roost.stderrSoFar.suffix(3000).description }) {
            let (config, room) = (self.config, self.room)
            return try await offPool {
                try RoostBinary.run(["rooms", "--json", "--config", config]).jsonLines
                    .contains { $0["room"] as? String == room && $0["state"] as? String == "joined" }
            }
        }
    }

    /// Waits until Roost has archived `count` messages whose text contains `marker` (the current text).
    private func archived(_ marker: String, _ count: Int = 1, edited: Bool = false) async throws {
        let escaped = marker.replacingOccurrences(of: "'", with: "''")
        try await waitUntil("Roost to archive \(marker)\(edited ? " (edited)" : "")", timeout: .seconds(120),
                            detail: { self.roost?.stderrSoFar.suffix(3000).description ?? "" }) {
            let archive = self.archive
            let found = try await offPool {
                try sqliteJSON(archive, "SELECT count(*) AS n FROM messages WHERE body LIKE '%\(escaped)%' \(edited ? "AND edited = 1" : "")")
                    .first?["n"] as? Int ?? 0
            }
            return found >= count
        }
    }

    /// bob or carol heard a message whose text contains `text` from the account (chat, room or private).
    @discardableResult
    private func heard(by peer: XMPPPeer, _ text: String) async throws -> XMPPPeer.Event {
        try await peer.message(timeout: .seconds(120)) { ($0["body"] ?? "").contains(text) }
    }

    /// The peer joins the room (created on the first join), with no history, and waits for its own presence.
    private static func join(_ peer: XMPPPeer, _ room: String, nick: String) async throws {
        try await peer.call("raw", ["xml": "<presence to='\(room)/\(nick)'><x xmlns='http://jabber.org/protocol/muc'><history maxstanzas='0'/></x></presence>"])
        _ = try await peer.next(timeout: .seconds(30), "\(nick)'s own presence in \(room)") {
            $0.kind == "presence" && $0["from"] == "\(room)/\(nick)"
        }
    }

    /// One-shot commands of contrib/scripts/xmpp-peer.py (bookmarks, uploads) as `jid`.
    private func peerCommand(_ jid: JID, _ password: String, resource: String, _ arguments: [String]) async throws -> [[String: Any]] {
        let server = self.server
        let result = try await offPool { try RoostBinary.runProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py",
            "--jid", jid.bare.description, "--host", server.host, "--port", String(server.port), "--ca", server.caFile,
            "--resource", resource] + arguments, environment: ProcessInfo.processInfo.environment.merging(["XMPP_PEER_PASSWORD": password]) { $1 },
            timeout: 90) }
        guard result.status == 0 else { throw ClientFailure("xmpp-peer \(arguments.first ?? ""): \(result.stderr.suffix(2000))") }
        return result.jsonLines
    }

    private func converse() async throws {
        let roomJID = try JID(room)
        // The room: bob made it, carol is there; the user's bookmark (Roost and Gajim join from it).
        try await Self.join(bob, room, nick: "Bob")
        try await Self.join(carol, room, nick: "Carol")
        _ = try await peerCommand(alice.jid, alice.password, resource: "phone", ["bookmark", room, "--autojoin", "--nick", nick])
        try dir.write("config.ini", """
            [general]
            archive_poll_seconds = 2
            reconnect_max_seconds = 2
            room_ping_seconds = 10
            [archive]
            path = \(archive)
            [files]
            download = all
            allow_private_addresses = true
            [account \(alice.jid)]
            password = \(alice.password)
            host = \(server.host)
            port = \(server.port)
            ca_file = \(server.caFile)

            """)
        try await startRoost()

        // Said before the client came: it may get it as the room's history.
        let r0 = "r0 before you came — 来る前に"
        try await carol.send(to: roomJID, body: r0, type: "groupchat")
        try await archived("r0 ")
        record(Said(marker: "r0", conversation: room, kind: "groupchat", direction: "in", nick: "Carol", body: r0, beforeJoin: true))

        try await client.start()
        try await client.joinRoom(room, nick: nick)
        // The client is in when the room tells its owner (bob sees real JIDs) that Alice is there from its session too.
        let session = "\(alice.jid)/\(client.resource)"
        _ = try await bob.next(timeout: .seconds(180), "\(client.name) in the room") {
            $0.kind == "presence" && $0["from"] == "\(self.room)/\(self.nick)" && ($0["xml"] ?? "").contains(session)
        }
        let r1 = "r1 welcome, 欢迎 🎉"
        try await bob.send(to: roomJID, body: r1, type: "groupchat")
        try await client.waitForHistory("r1 ")
        record(Said(marker: "r1", conversation: room, kind: "groupchat", direction: "in", nick: "Bob", body: r1))

        // One to one.
        let c1 = "c1 Hello from Bob 👋"
        try await bob.send(to: alice.jid, body: c1)
        try await client.waitForHistory("c1 ")
        record(Said(marker: "c1", conversation: bob.jid.description, kind: "chat", direction: "in", body: c1))

        let c2 = "c2 你好，世界 🎉 *bold* _it_ `code` <b>tag</b> & \"quotes\" 'single' 안녕 こんにちは"
        try await client.sendChat(to: bob.jid.description, c2)
        try await heard(by: bob, "c2 ")
        var c2Said = Said(marker: "c2", conversation: bob.jid.description, kind: "chat", direction: "out", body: c2)
        if client.abilities.contains(.correct) {
            let fixed = c2 + " (edited)"
            try await client.correctChat(to: bob.jid.description, from: c2, fixed)
            try await heard(by: bob, fixed)
            c2Said.first = c2
            c2Said.body = fixed
            try await archived("c2 ", edited: true)
        } else {
            try await archived("c2 ")
        }
        record(c2Said)

        // bob corrects a typo (XEP-0308).
        let c3 = "c3 teh typo", c3Fixed = "c3 the typo"
        let typoID = "typo-\(UUID().uuidString.prefix(8))"
        try await bob.send(to: alice.jid, body: c3, id: typoID)
        try await bob.call("raw", ["xml": "<message to='\(alice.jid)' type='chat' id='fix-\(typoID)'><body>\(c3Fixed)</body><replace xmlns='urn:xmpp:message-correct:0' id='\(typoID)'/></message>"])
        // The correction raises nothing a client shows as new (Gajim's remote control is silent about it): c4, from the
        // same sender on the same path, shows that the client has handled it.
        try await archived(c3Fixed, edited: true)
        record(Said(marker: "c3", conversation: bob.jid.description, kind: "chat", direction: "in", body: c3Fixed, first: c3))

        let c4 = "c4 three lines:\nsecond line, 第二行\n  indented third"
        try await bob.send(to: alice.jid, body: c4)
        try await client.waitForHistory("c4 ")
        record(Said(marker: "c4", conversation: bob.jid.description, kind: "chat", direction: "in", body: c4))

        let filler = "Lorem ipsum dolor sit amet, 中文文本 and emoji 🚀, consectetur adipiscing elit."
        let c5 = "c5 long: " + Array(repeating: filler, count: 16).joined(separator: " ")
        try await client.sendChat(to: bob.jid.description, c5)
        try await heard(by: bob, "c5 ")
        try await archived("c5 ")
        record(Said(marker: "c5", conversation: bob.jid.description, kind: "chat", direction: "out", body: c5))

        if client.abilities.contains(.multiLine) {
            let c6 = "c6 first line\nsecond line ✓"
            try await client.sendChat(to: bob.jid.description, c6)
            try await heard(by: bob, "c6 ")
            try await archived("c6 ")
            record(Said(marker: "c6", conversation: bob.jid.description, kind: "chat", direction: "out", body: c6))
        }

        // The room.
        let r2 = "r2 早上好 everyone, *bold* & <i>"
        try await client.sendRoom(room, r2)
        try await heard(by: bob, "r2 ")
        var r2Said = Said(marker: "r2", conversation: room, kind: "groupchat", direction: "out", nick: nick, body: r2)
        if client.abilities.contains(.correct) {
            let fixed = r2 + " (edited)"
            try await client.correctRoom(room, from: r2, fixed)
            try await heard(by: bob, fixed)
            r2Said.first = r2
            r2Said.body = fixed
            try await archived("r2 ", edited: true)
        } else {
            try await archived("r2 ")
        }
        record(r2Said)
        let r3 = "r3 carol replies ☕"
        try await carol.send(to: roomJID, body: r3, type: "groupchat")
        try await client.waitForHistory("r3 ")
        try await archived("r3 ")
        record(Said(marker: "r3", conversation: room, kind: "groupchat", direction: "in", nick: "Carol", body: r3))

        // Private messages in the room: bob to the user's nick, the user to carol's.
        let p1 = "p1 psst, just between us"
        try await bob.send(to: try JID("\(room)/\(nick)"), body: p1)
        try await client.waitForHistory("p1 ")
        try await archived("p1 ")
        record(Said(marker: "p1", conversation: "\(room)/Bob", kind: "chat", direction: "in", body: p1))
        let p2 = "p2 hi Carol, privately 🤫"
        try await client.sendPrivate(room: room, nick: "Carol", p2)
        try await heard(by: carol, "p2 ")
        try await archived("p2 ")
        record(Said(marker: "p2", conversation: "\(room)/Carol", kind: "chat", direction: "out", body: p2))

        // Files: bob shares a picture (an upload link with XEP-0066); a client that can, sends one.
        let picture = try dir.write("f1-\(UUID().uuidString.prefix(6)).png", "", mode: 0o644)
        try Data(Self.png).write(to: URL(fileURLWithPath: picture))
        let sent = try await peerCommand(bob.jid, bobPassword, resource: "uploader", ["upload", alice.jid.description, picture])
        guard let url = sent.first(where: { $0["event"] as? String == "sent" })?["url"] as? String else {
            throw ClientFailure("bob's upload printed no URL: \(sent)")
        }
        try await client.waitForHistory((url as NSString).lastPathComponent)
        try await archived(url)
        record(Said(marker: "f1", conversation: bob.jid.description, kind: "chat", direction: "in", body: url, file: true))
        if client.abilities.contains(.sendFile) {
            let mine = try client.machine.write("f2-\(UUID().uuidString.prefix(6)).txt", "f2 a file from \(client.name)\n", mode: 0o644)
            try await client.sendFile(to: bob.jid.description, path: mine)
            let link = try await bob.message(timeout: .seconds(120)) { ($0["body"] ?? "").contains((mine as NSString).lastPathComponent) }
            let body = link["body"] ?? ""
            try await archived(body)
            record(Said(marker: "f2", conversation: bob.jid.description, kind: "chat", direction: "out", body: body, file: true))
        }

        // An OMEMO message (slixmpp-omemo as bob): Roost is one of the account's devices and reads it; the client has no
        // keys for it and keeps a placeholder.
        let o1 = "o1 an encrypted secret 秘密"
        try await omemoSend(o1)
        try await archived("o1 ")
        try await client.waitForHistory("OMEMO")
        record(Said(marker: "o1", conversation: bob.jid.description, kind: "chat", direction: "in", body: o1, encrypted: true))

        // Catch-up: Roost is down while the others talk; the server's archives give it back.
        let stopped = roost?.stop(signal: SIGTERM)
        #expect(stopped?.status == 0, "roost run did not stop cleanly: \(stopped?.stderr.suffix(2000) ?? "")")
        let k1 = "k1 while Roost was away"
        try await bob.send(to: alice.jid, body: k1)
        try await client.waitForHistory("k1 ")
        record(Said(marker: "k1", conversation: bob.jid.description, kind: "chat", direction: "in", body: k1))
        let k2 = "k2 sent while Roost was away ✈"
        try await client.sendChat(to: bob.jid.description, k2)
        try await heard(by: bob, "k2 ")
        record(Said(marker: "k2", conversation: bob.jid.description, kind: "chat", direction: "out", body: k2))
        let k3 = "k3 the room went on"
        try await carol.send(to: roomJID, body: k3, type: "groupchat")
        try await client.waitForHistory("k3 ")
        record(Said(marker: "k3", conversation: room, kind: "groupchat", direction: "in", nick: "Carol", body: k3))
        try await startRoost()
        for marker in ["k1 ", "k2 ", "k3 "] { try await archived(marker) }

        try await client.quit()
        let last = roost?.stop(signal: SIGTERM)
        #expect(last?.status == 0, "roost run did not stop cleanly: \(last?.stderr.suffix(2000) ?? "")")
    }

    /// bob's OMEMO device (slixmpp-omemo, the suite's virtualenv) sends one encrypted message to the account.
    private func omemoSend(_ text: String) async throws {
        guard let python = ProcessInfo.processInfo.environment["ROOST_TEST_OMEMO_PYTHON"], !python.isEmpty else {
            throw ClientFailure("ROOST_TEST_OMEMO_PYTHON is not set: run the suite with contrib/scripts/test (it makes the slixmpp-omemo virtualenv)")
        }
        let (alice, bob, bobPassword, server, dir) = (self.alice, self.bob, self.bobPassword, self.server, self.dir)
        let result = try await offPool { try RoostBinary.runProgram(python, ["-W", "ignore", TestServer.packageRoot + "/contrib/scripts/omemo-peer.py", "send",
            alice.jid.description, text, "--jid", bob.jid.description, "--password", bobPassword, "--resource", "omemo",
            "--data", dir.path + "/bob-omemo.json", "--host", server.host, "--port", String(server.port), "--ca", server.caFile],
            timeout: 120) }
        guard result.status == 0 else { throw ClientFailure("omemo-peer send: \(result.stderr.suffix(2000))") }
    }

    /// A 1×1 PNG.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0xF8, 0xCF, 0xC0, 0xF0, 0x1F, 0x00, 0x05, 0x00, 0x01, 0xFF, 0x89, 0x99, 0x3D, 0x1D, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]
}
