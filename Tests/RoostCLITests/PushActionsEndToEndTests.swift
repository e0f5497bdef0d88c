import Foundation
import Testing
import RoostAgent
import RoostTestSupport
import RoostXMPP

/// Pushes that answer back (issue 32, 3): an ntfy sink with `public_url` gives its pushes Mark read and Accept/Deny
/// buttons (ntfy `http` actions), whose links `roost serve` acts on once. A loopback HTTP server stands in for ntfy
/// and records each push; the test reads the links from the push's `Actions` header and calls them as the phone would.
@Suite("End to end: push buttons acted on through roost serve", .requires(.server))
struct PushActionsEndToEndTests {
    /// A POST (or another method) to `url`: the status, the `X-Roost-Push-Refused` count and the body.
    private func call(_ url: String, method: String = "POST") throws -> (status: Int, refused: Int, body: String) {
        let script = """
            import sys, urllib.request, urllib.error
            request = urllib.request.Request(sys.argv[1], data=b"" if sys.argv[2] == "POST" else None, method=sys.argv[2])
            try:
                answer = urllib.request.urlopen(request, timeout=30)
            except urllib.error.HTTPError as error:
                answer = error
            print(answer.status if hasattr(answer, "status") else answer.code)
            print(answer.headers.get("X-Roost-Push-Refused", "-1"))
            print(answer.read().decode())
            """
        let result = try RoostBinary.runProgram("/usr/bin/python3", ["-c", script, url, method])
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return (Int(lines.first ?? "") ?? -1, Int(lines.dropFirst().first ?? "") ?? -1, lines.dropFirst(2).joined(separator: "\n"))
    }

    /// The buttons of the pushes recorded so far whose body contains `text`: label → link.
    private func buttons(_ log: String, containing text: String) -> [String: String] {
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        for line in lines.reversed() {
            guard let push = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  (push["body"] as? String)?.contains(text) == true,
                  let actions = (push["headers"] as? [String: String])?["Actions"] else { continue }
            var found: [String: String] = [:]
            for action in actions.components(separatedBy: "; ") {
                let fields = action.components(separatedBy: ", ")
                if fields.count >= 4, fields[0] == "http", fields[3] == "method=POST" { found[fields[1]] = fields[2] }
            }
            return found
        }
        return [:]
    }

    /// bob writes to alice's agent; the push of his message has a Mark read link at `address`, which is pressed
    /// once: bob receives the displayed marker. Returns the link (spent).
    private func pressMarkRead(from bob: XMPPPeer, to alice: JID, pushLog: String, address: String, log: RunningRoost) async throws -> String {
        let marker = "push-\(UUID().uuidString.prefix(8).lowercased())"
        try await bob.send(to: try alice.with(resource: "roost"), body: "\(marker) question", id: "\(marker)-1")
        try await waitUntil("the push of bob's message with Mark read") { buttons(pushLog, containing: marker)["Mark read"] != nil }
        let markRead = try #require(buttons(pushLog, containing: marker)["Mark read"])
        #expect(markRead.hasPrefix(address + "/act/"), "\(markRead)")
        let first = try call(markRead)
        #expect(first.status == 200, "\(first)\n\(log.stderrSoFar.suffix(2000))")
        let displayed = try await bob.message { $0["xml"]?.contains("displayed") == true && $0["xml"]?.contains("\(marker)-1") == true }
        #expect(displayed["from"].flatMap(JID.init(parsing:))?.bare == alice)
        return markRead
    }

    /// Notify always, at once, to an ntfy sink at the stand-in's port whose buttons act through `publicURL`.
    private static func sinks(_ ntfyPort: Int, _ publicURL: String) -> String {
        """
        [notify]
        when = always
        coalesce_seconds = 0
        [sink phone]
        type = webhook
        format = ntfy
        url = http://127.0.0.1:\(ntfyPort)/roost-topic
        public_url = \(publicURL)

        """
    }

    /// A loopback HTTP server standing in for ntfy, recording each push to `log`: the process and its port.
    private func standInForNtfy(recordingTo log: String) async throws -> (RunningRoost, Int) {
        let ntfy = try RoostBinary.startProgram("/usr/bin/python3", [TestServer.packageRoot + "/Tests/RoostNotifyTests/Fixtures/webhook_server.py",
                                                                     log, "0"])
        try await waitUntil("the stand-in for ntfy to print its port", timeout: .seconds(20)) { ntfy.stderrSoFar.contains("\n") }
        return (ntfy, try #require(Int(ntfy.stderrSoFar.split(separator: "\n").first ?? "")))
    }

    @Test func markReadAndAcceptActOnceAndForgedOrExpiredLinksAreRefused() async throws {
        try TestRequirement.check(.server)
        let server = try TestServer.require()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let carol = try await XMPPPeer.registered(on: server, "carol")
        let pushLog = dir.path + "/pushes.jsonl"
        let (ntfy, ntfyPort) = try await standInForNtfy(recordingTo: pushLog)
        defer { ntfy.stop(signal: SIGKILL) }
        func writeConfig(publicURL: String) throws -> String {
            try server.roostConfig(in: dir, account: alice.description, password: password, extra: Self.sinks(ntfyPort, publicURL))
        }
        // roost serve needs the archive roost run makes, and the sink the address serve listens on: the agent starts
        // with a placeholder, and reloads its sinks (SIGHUP) once serve's port is known.
        let config = try writeConfig(publicURL: "http://127.0.0.1:9")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let serve = try RoostBinary.start(["serve", "--config", config, "--port", "0", "--json", "-v"])
        defer { serve.stop(signal: SIGKILL) }
        try serve.waitForLog("\"address\"")
        let line = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{") })
        let printed = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["address"] as? String)
        let address = printed.hasSuffix("/") ? String(printed.dropLast()) : printed
        _ = try writeConfig(publicURL: address)
        try await roost.hangUp()

        // A message: its push has a Mark read button; the phone presses it.
        let markRead = try await pressMarkRead(from: bob, to: alice, pushLog: pushLog, address: address, log: serve)

        // The same link again, a forged one, an expired one, a GET: refused, each counted.
        let again = try call(markRead)
        #expect(again.status == 409 && again.refused == 1, "\(again)")
        // One character of the signature changed (not the last: in base64 its low bits may carry nothing).
        var characters = Array(markRead)
        let at = characters.count - 10
        characters[at] = characters[at] == "A" ? "B" : "A"
        let forged = String(characters)
        let forgedAnswer = try call(forged)
        #expect(forgedAnswer.status == 403 && forgedAnswer.refused == 2, "\(forgedAnswer)")
        let tokens = PushActionTokens(directory: dir.path + "/data")
        let expired = try #require(tokens.sign(.read, account: alice.description, target: bob.jid.description, lifetime: -1000))
        let expiredAnswer = try call(address + "/act/" + expired)
        #expect(expiredAnswer.status == 410 && expiredAnswer.refused == 3, "\(expiredAnswer)")
        let fresh = try #require(tokens.sign(.read, account: alice.description, target: bob.jid.description))
        let get = try call(address + "/act/" + fresh, method: "GET")
        #expect(get.status == 405 && get.refused == 4, "\(get)")
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path + "/data/push-actions.key")[.posixPermissions] as? Int
        #expect(mode == 0o600)

        // A contact request: Accept on the push approves it on the server.
        try await carol.presence(to: alice, type: "subscribe", status: "hi from carol")
        try await waitUntil("the push of carol's request with Accept") { buttons(pushLog, containing: carol.jid.description)["Accept"] != nil }
        let accept = try #require(buttons(pushLog, containing: carol.jid.description)["Accept"])
        #expect(buttons(pushLog, containing: carol.jid.description)["Deny"] != nil)
        let accepted = try call(accept)
        #expect(accepted.status == 200, "\(accepted)")
        let answer = try await carol.presence("subscribed", from: alice)
        #expect(answer["from"].flatMap(JID.init(parsing:))?.bare == alice)
        #expect(try call(accept).status == 409)

        // Without roost run a valid link does nothing and is not spent (503, not counted); a forged one is still refused.
        roost.stop(signal: SIGTERM)
        let waiting = try #require(tokens.sign(.read, account: alice.description, target: bob.jid.description))
        let down = try call(address + "/act/" + waiting)
        #expect(down.status == 503 && down.refused == 5, "\(down)")
        #expect(tokens.check(waiting).map(\.action) == .success(.read))
        #expect(tokens.spend(try tokens.check(waiting).get()).map(\.action) == .success(.read), "the 503 did not spend it")
        #expect(try call(forged).status == 403)
        await bob.stop()
        await carol.stop()
    }

    /// The same buttons served by the agent's own listener (`[serve] enabled` in `roost run`), no `roost serve`:
    /// Mark read acts once, through the same code, and the second press is refused and counted.
    @Test func theAgentsOwnListenerActsOnPushButtons() async throws {
        try TestRequirement.check(.server)
        let server = try TestServer.require()
        let dir = try TestDirectory()
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        let pushLog = dir.path + "/pushes.jsonl"
        let (ntfy, ntfyPort) = try await standInForNtfy(recordingTo: pushLog)
        defer { ntfy.stop(signal: SIGKILL) }
        func writeConfig(publicURL: String, port: Int) throws -> String {
            try server.roostConfig(in: dir, account: alice.description, password: password,
                                   extra: Self.sinks(ntfyPort, publicURL) + "[serve]\nenabled = true\nport = \(port)\n")
        }
        // The listener's port is known once it serves: the sink's public_url is set then, and the sinks reloaded.
        let config = try writeConfig(publicURL: "http://127.0.0.1:9", port: 0)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let urlFile = (config as NSString).deletingLastPathComponent + "/run/roost/serve.url"
        try await waitUntil("the agent's listener to write its address") { FileManager.default.fileExists(atPath: urlFile) }
        let served = try #require(URL(string: try String(contentsOfFile: urlFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let port = try #require(served.port)
        let address = "http://127.0.0.1:\(port)"
        _ = try writeConfig(publicURL: address, port: port)
        kill(roost.pid, SIGHUP)
        try roost.waitForLog("notification rules and sinks reloaded")

        let markRead = try await pressMarkRead(from: bob, to: alice, pushLog: pushLog, address: address, log: roost)
        let again = try call(markRead)
        #expect(again.status == 409 && again.refused == 1, "\(again)")
        await bob.stop()
    }
}
