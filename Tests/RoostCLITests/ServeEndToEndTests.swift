import Foundation
import Testing
import RoostArchive
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
        let running = try RoostBinary.startProgram(Self.python, [Self.scripts + "/browser-check.py"] + arguments)
        let deadline = Date().addingTimeInterval(timeout)
        while running.isRunning && Date() < deadline { usleep(100_000) }
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        var steps: [String: [String: Any]] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("{\"step\"") {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let step = object["step"] as? String {
                steps[step] = object
            }
        }
        #expect(status == 0 && steps["failed"] == nil, "browser-check failed (\(status)):\n\(output.suffix(4000))")
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
        let deadline = Date().addingTimeInterval(120)
        while running.isRunning && Date() < deadline { usleep(50_000) }
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        #expect(status == 0, "xmpp-peer \(command.first ?? "") failed (\(status)):\n\(output.suffix(2000))")
        return output
    }

    func count(_ archive: String, _ query: String) -> Int {
        Int((try? ArchiveCount.sqlite(archive, query).trimmingCharacters(in: .whitespacesAndNewlines)) ?? "") ?? 0
    }

    @Test func agentArchiveListPagesSearchContextLiveAndRefusals() async throws {
        let dir = try TestDirectory()
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bobClient, bob, bobPassword) = try await server.registeredClient("bob")
        await bobClient.disconnect()
        let config = try server.roostConfig(in: dir, account: alice.description, password: alicePassword,
                                            extra: "\n[serve]\nenabled = true\nport = 0\n")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try roost.waitForLog("online")
        try roost.waitForLog("serve: web view at")
        let urlFile = (config as NSString).deletingLastPathComponent + "/run/roost/serve.url"
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
        let deadline = Date().addingTimeInterval(60)
        while count(archive, "SELECT count(*) FROM messages") < 162 && Date() < deadline { try await Task.sleep(for: .milliseconds(200)) }
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

    @Test func largeArchiveThroughRoostServe() async throws {
        let dir = try TestDirectory()
        let messages = Int(ProcessInfo.processInfo.environment["ROOST_TEST_SERVE_MESSAGES"] ?? "") ?? 200_000
        let archive = dir.path + "/archive.sqlite"
        try SyntheticArchive.build(at: archive, messages: messages)
        let config = try dir.write("config.ini", "[archive]\npath = \(archive)\n")

        let remote = try RoostBinary.run(["serve", "--config", config, "--listen", "0.0.0.0"])
        #expect(remote.status == 2 && remote.stderr.contains("--allow-remote"), "\(remote.stderr)")

        let serve = try RoostBinary.start(["serve", "--config", config, "--port", "0", "--json"])
        defer { serve.stop(signal: SIGKILL) }
        try serve.waitForLog("\"url\"")
        let line = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{") })
        let url = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["url"] as? String)

        let steps = try browserCheck(["--url", url, "--conversation", SyntheticArchive.contact(0), "--pages", "3", "--search", "中国",
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
    }
}
