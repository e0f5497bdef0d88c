import Foundation
import RoostCore
import RoostTestSupport
import RoostXMPP

/// What the file tests share: the fixture scripts, the independent XMPP peer (slixmpp), a file host that
/// logs its requests, and waiting for attachment states through `roost files --json`.
enum FilesKit {
    static let fixtures = TestServer.packageRoot + "/Tests/RoostCLITests/Fixtures/"
    static let python = ProcessInfo.processInfo.environment["ROOST_TEST_PYTHON"] ?? "/usr/bin/python3"
    static let peerScript = TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py"

    /// `run` off the pool.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], timeout: TimeInterval = 60) async throws -> (status: Int32, output: String) {
        try await offPool { try runBlocking(program, arguments, timeout: timeout) }
    }

    /// `roost ARGS`, off the pool.
    static func roost(_ arguments: [String], timeout: TimeInterval = 60) async throws -> RoostBinary.Result {
        try await offPool { try RoostBinary.run(arguments, timeout: timeout) }
    }

    /// Runs a program to completion (with a deadline) and returns its status and standard output.
    static func runBlocking(_ program: String, _ arguments: [String], timeout: TimeInterval = 60) throws -> (status: Int32, output: String) {
        let result = try RoostBinary.runProgram(program, arguments, timeout: timeout)
        if result.status != 0 && result.stdout.isEmpty { return (result.status, result.stderr) }
        return (result.status, result.stdout)
    }

    /// A fixture script's output (it must succeed).
    @discardableResult
    static func fixture(_ script: String, _ arguments: [String]) async throws -> String {
        let (status, output) = try await run(python, [fixtures + script] + arguments)
        guard status == 0 else { throw FixtureFailed(what: "\(script) \(arguments.joined(separator: " ")): \(output)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs the slixmpp peer as `jid` and returns its JSON lines.
    @discardableResult
    static func peer(_ jid: JID, _ password: String, _ arguments: [String], timeout: TimeInterval = 60) async throws -> [[String: Any]] {
        let (status, output) = try await run(python, [peerScript, "--jid", jid.description, "--password", password] + arguments, timeout: timeout)
        let lines = jsonLines(output)
        guard status == 0 else { throw FixtureFailed(what: "xmpp-peer \(arguments.first ?? ""): \(output)") }
        return lines
    }

    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func write(_ path: String, _ data: Data) throws {
        try data.write(to: URL(fileURLWithPath: path))
    }

    static func sha256(_ path: String) async throws -> String {
        String(try await run("/usr/bin/sha256sum", [path]).output.prefix(64))
    }

    /// Polls `roost files --json` until a row satisfies `predicate`.
    static func waitForFile(config: String, timeout: TimeInterval = 40, where predicate: ([String: Any]) -> Bool) async throws -> [String: Any] {
        var rows: [[String: Any]] = []
        var found: [String: Any]?
        try await waitUntil("an attachment row as expected", timeout: .milliseconds(Int(timeout * 1000)), every: .milliseconds(250),
                            detail: { "rows: \(rows)" }) {
            rows = try await roost(["files", "--config", config, "--json"]).jsonLines
            found = rows.first(where: predicate)
            return found != nil
        }
        return found!
    }

    /// Makes `alice` and `bob` contacts both ways (roster items with subscription both). The waits are
    /// generous: the whole suite shares one Prosody, which other tests flood.
    static func befriend(_ server: TestServer, _ alice: XMPPClient, _ aliceJID: JID, _ bob: XMPPClient, _ bobJID: JID) async throws {
        let wait = Duration.seconds(60)
        let aliceEvents = EventCollector(alice)
        let bobEvents = EventCollector(bob)
        for client in [alice, bob] { _ = try await client.request(Roster.getRequest()) }
        try alice.send(Presence(type: .subscribe, to: bobJID))
        _ = try await bobEvents.waitForStanza(timeout: wait) { $0.name == "presence" && Presence($0).type == .subscribe }
        try bob.send(Presence(type: .subscribed, to: aliceJID))
        try bob.send(Presence(type: .subscribe, to: aliceJID))
        _ = try await aliceEvents.waitForStanza(timeout: wait) { $0.name == "presence" && Presence($0).type == .subscribe }
        try alice.send(Presence(type: .subscribed, to: bobJID))
        _ = try await aliceEvents.waitForStanza(timeout: wait) { element in
            element.name == "iq" && Roster.items(in: IQ(element)).contains { $0.jid == bobJID && $0.subscription == .both }
        }
    }
}

struct FixtureFailed: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

/// `file_server.py` in the background: the port it listens on and the requests it got.
final class FileHost {
    let process: RunningRoost
    let port: Int
    let root: String

    init(root: String, bind: String = "127.0.0.1", port: Int = 0, tls: Bool = false) throws {
        self.root = root
        var arguments = [FilesKit.fixtures + "file_server.py", "--root", root, "--bind", bind, "--port", String(port)]
        if tls, let ca = TestServer.shared?.caFile {
            let certs = (ca as NSString).deletingLastPathComponent
            arguments += ["--tls", certs + "/server.crt", certs + "/server.key"]
        }
        process = try RoostBinary.startProgram(FilesKit.python, arguments)
        try process.waitForLog("listening", timeout: 60)
        guard let line = FilesKit.jsonLines(process.stderrSoFar).first(where: { $0["event"] as? String == "listening" }),
              let found = line["port"] as? Int else { throw FixtureFailed(what: "file server: \(process.stderrSoFar)") }
        self.port = found
    }

    deinit { process.stop(signal: SIGKILL) }

    var requests: [[String: Any]] { FilesKit.jsonLines(process.stderrSoFar).filter { $0["event"] as? String == "request" } }
    /// Every line it printed (requests, transfers done).
    var events: [[String: Any]] { FilesKit.jsonLines(process.stderrSoFar) }
}
