import Foundation
import Testing
import RoostAgent
import RoostTestSupport
import RoostXMPP

/// The control socket of a real `roost run`: private, single-owner, robust against garbage.
@Suite("Control socket of roost run", .requires(.server))
struct ControlSocketEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    @Test func refusesSecondAgentAnswersGarbageAndReplacesStaleSocket() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let agent = try await roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }

        var info = stat()
        #expect(stat(roost.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(roost.directory.path + "/run/roost", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)

        let second = try roost.run(["run"])
        #expect(second.status == 1)
        #expect(second.stderr.contains("already running"))
        #expect(agent.isRunning)

        let client = try #require(ControlClient.connect(path: roost.socketPath))
        func ask(_ line: String) throws -> [String: Any] {
            let answer = try #require(client.exchange(Data(line.utf8)))
            return try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
        }
        func errorMessage(_ answer: [String: Any]) -> String {
            let error = answer["error"] as? [String: Any]
            return error?["message"] as? String ?? ""
        }
        let garbage = try ask("this is not json")
        #expect(garbage["ok"] as? Bool == false)
        #expect((garbage["error"] as? [String: Any])?["kind"] as? String == "bad-request")
        let unknown = try ask(#"{"id":"x1","command":"launch.rockets"}"#)
        #expect(unknown["id"] as? String == "x1")
        #expect(errorMessage(unknown).contains("unknown command"))
        let missing = try ask(#"{"id":2,"command":"message.send","arguments":{"to":"bob@roost.test"}}"#)
        #expect(missing["id"] as? Int == 2)
        #expect(errorMessage(missing).contains("body"))
        let other = try ask(#"{"id":3,"command":"roster.list","account":"nobody@roost.test"}"#)
        #expect((other["error"] as? [String: Any])?["kind"] as? String == "unknown-account")
        let ping = try ask(#"{"id":4,"command":"ping"}"#)
        #expect(ping["ok"] as? Bool == true)
        let list = try ask(#"{"id":5,"command":"roster.list"}"#)
        #expect(list["ok"] as? Bool == true)
        #expect((list["result"] as? [String: Any])?["items"] is [Any])

        // A request over the size cap is refused and the connection closed; the agent lives on.
        let huge = try #require(ControlClient.connect(path: roost.socketPath))
        let big = #"{"command":"ping","pad":""# + String(repeating: "x", count: ControlProtocol.maxRequestBytes + 10) + #""}"#
        let tooLarge = try #require(huge.exchange(Data(big.utf8)))
        #expect(String(decoding: tooLarge, as: UTF8.self).contains("too-large"))
        #expect(try roost.run(["status"]).status == 0)

        // Killed without cleanup, the agent leaves its socket; the next one removes it and starts.
        agent.stop(signal: SIGKILL)
        #expect(FileManager.default.fileExists(atPath: roost.socketPath))
        let next = try await roost.startAgent()
        defer { next.stop(signal: SIGKILL) }
        #expect(try roost.run(["status"]).status == 0)
    }
}
