import RoostCore
import Foundation
import RoostTestSupport
import RoostXMPP

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

    func startAgent() async throws -> RunningRoost {
        let agent = try RoostBinary.start(["run", "--config", config, "-v"], environment: environment)
        try await agent.ready()
        return agent
    }


    /// Checks `body` every 0.3 s until it returns true; throws after `timeout` (for synchronous callers;
    /// async tests use `waitUntil`).
    func eventually(_ what: String, timeout: TimeInterval = 20, _ body: () throws -> Bool) throws {
        try waitUntilBlocking(what, timeout: .seconds(timeout), every: .milliseconds(300), body)
    }

    func rosterEntry(_ jid: JID) throws -> [String: Any]? {
        try json(["roster"]).first { $0["jid"] as? String == jid.description }
    }
}
