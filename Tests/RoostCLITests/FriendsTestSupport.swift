import Foundation
import RoostTestSupport
import RoostXMPP

/// A test user's own XMPP client that behaves like a real one: it fetched its roster (Prosody delivers
/// subscription requests and roster pushes only to such resources) and is available at priority 1.
struct FriendsPeer {
    let client: XMPPClient
    let jid: JID
    let password: String
    let events: EventCollector

    static func make(_ server: TestServer, _ prefix: String) async throws -> FriendsPeer {
        let (client, jid, password) = try await server.registeredClient(prefix, resource: "phone")
        let events = EventCollector(client)
        _ = try await client.request(Roster.getRequest())
        try client.send(Presence(priority: 1))
        return FriendsPeer(client: client, jid: jid, password: password, events: events)
    }

    func waitForPresence(_ type: Presence.Kind, from: JID, timeout: Duration = .seconds(15)) async throws -> Presence {
        Presence(try await events.waitForStanza(timeout: timeout) { e in
            e.name == "presence" && Presence(e).type == type && Presence(e).from?.bare == from.bare
        })
    }
}

/// Runs the built binary with a per-test runtime folder, so each test's agent has its own control socket.
struct RoostUnderTest {
    let directory: TestDirectory
    let config: String

    var environment: [String: String] { ["XDG_RUNTIME_DIR": directory.path + "/run"] }
    var socketPath: String { directory.path + "/run/roost/control.sock" }

    init(server: TestServer, account: JID, password: String) throws {
        directory = try TestDirectory("roost-friends")
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        config = try server.roostConfig(in: directory, account: account.description, password: password)
    }

    func run(_ arguments: [String], stdin: String? = nil) throws -> RoostBinary.Result {
        try RoostBinary.run(arguments + ["--config", config], environment: environment, stdin: stdin)
    }

    func json(_ arguments: [String]) throws -> [[String: Any]] {
        try run(arguments + ["--json"]).jsonLines
    }

    func startAgent() throws -> RunningRoost {
        let agent = try RoostBinary.start(["run", "--config", config, "-v"], environment: environment)
        try agent.waitForLog("online")
        try agent.waitForLog("control socket")
        return agent
    }

    /// Polls `body` until it returns true or the deadline passes.
    func eventually(_ what: String, timeout: TimeInterval = 20, _ body: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try body() { return }
            Thread.sleep(forTimeInterval: 0.3)
        }
        throw FriendsTimeout(what: what)
    }

    func rosterEntry(_ jid: JID) throws -> [String: Any]? {
        try json(["roster"]).first { $0["jid"] as? String == jid.description }
    }
}

struct FriendsTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}
