import RoostCore
import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// Issue 17 against the real servers, with slixmpp peers: SIGHUP reloads the config without losing
/// anything, adding a friend ends as `both`, -vv shows a one-shot login's XMPP exchange without secrets,
/// `roost config init` tests the login, `roost register` prints the settings it used.
@Suite("Everyday use end to end", .requires(.server))
struct EverydayEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    private func accountGroup(_ jid: JID, _ password: String) -> String {
        "[account \(jid)]\npassword = \(password)\nhost = \(server.host)\nport = \(server.port)\nca_file = \(server.caFile)\n"
    }

    private func accounts(_ config: String, environment: [String: String]) throws -> [String: String] {
        var states: [String: String] = [:]
        for line in try RoostBinary.accountStatus(config: config, environment: environment) {
            if let account = line["account"] as? String, let state = line["state"] as? String { states[account] = state }
        }
        return states
    }

    // 3. SIGHUP: accounts added, removed and changed, notify rules replaced, nothing lost, a broken config refused.
    @Test func sighupReloadsTheConfig() async throws {
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bobClient, bob, bobPassword) = try await server.registeredClient("bob")
        await bobClient.disconnect()
        let carol = try await XMPPPeer.registered(on: server, "carol", resource: "phone")
        let directory = try TestDirectory("roost-reload")
        let environment = ["XDG_RUNTIME_DIR": directory.path + "/run"]
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let head = "[general]\narchive_poll_seconds = 2\n[archive]\npath = \(directory.path)/data/archive.sqlite\n"
        let config = try directory.write("config.ini", head + accountGroup(alice, alicePassword))
        let agent = try RoostBinary.start(["run", "--config", config], environment: environment)
        defer { agent.stop(signal: SIGKILL) }
        try await waitUntil("alice online") { try accounts(config, environment: environment)[alice.description] == "online" }
        try await carol.send(to: alice, body: "before the reload")

        // Add bob, mute carol: bob starts, alice keeps running (no restart), the rules are new.
        try directory.write("config.ini", head + "[notify]\nmute = \(carol.jid.bare)\n" + accountGroup(alice, alicePassword)
                                          + accountGroup(bob, bobPassword))
        try await agent.hangUp()
        try await waitUntil("bob online after SIGHUP") { try accounts(config, environment: environment)[bob.description] == "online" }
        // What the reload did, as the user reads it (written before the SIGHUP counts as handled).
        #expect(agent.stderrSoFar.contains("\(bob): added in the config; starting"), "\(agent.stderrSoFar.suffix(4000))")
        #expect(agent.stderrSoFar.contains("notification rules and sinks reloaded"), "\(agent.stderrSoFar.suffix(4000))")
        #expect(!agent.stderrSoFar.contains("\(alice): settings changed"), "an unchanged account keeps its session")
        try await carol.send(to: bob, body: "to bob after the reload")
        try await waitUntil("bob's message archived") {
            try RoostBinary.run(["search", "--config", config, "--account", bob.description, "--json", "after the reload"],
                                environment: environment).jsonLines.count == 1
        }

        // Remove alice: her session ends cleanly; what is sent to her meanwhile waits on the server.
        try directory.write("config.ini", head + accountGroup(bob, bobPassword))
        try await agent.hangUp()
        #expect(agent.stderrSoFar.contains("\(alice): removed or disabled in the config; stopping"), "\(agent.stderrSoFar.suffix(4000))")
        try await waitUntil("alice gone") { try accounts(config, environment: environment)[alice.description] == nil }
        try await carol.send(to: alice, body: "while alice was not configured")

        // A broken config is refused; the running one stays (bob stays online: checked below, once the
        // file is valid again, since `roost status` reads it too).
        try directory.write("config.ini", head + accountGroup(bob, bobPassword) + "[notify]\nwhen = sometimes\n")
        // `roost status` cannot read this config either: the error the user is shown is what there is to wait for.
        kill(agent.pid, SIGHUP)
        try await offPool { try agent.waitForLog("reloading the config failed; keeping the running one") }
        #expect(agent.isRunning)
        #expect(!agent.stderrSoFar.contains("\(bob): removed"))

        // alice back, with a changed setting: started again, and the server archive brings what she missed.
        try directory.write("config.ini", head + accountGroup(bob, bobPassword) + accountGroup(alice, alicePassword) + "resource = desk\n")
        kill(agent.pid, SIGHUP)
        try await waitUntil("alice online again") { try accounts(config, environment: environment)[alice.description] == "online" }
        #expect(try accounts(config, environment: environment)[bob.description] == "online", "\(agent.stderrSoFar.suffix(4000))")
        #expect(agent.stderrSoFar.components(separatedBy: "\(bob): connected as").count == 2, "bob's session was never restarted")
        try await waitUntil("what alice missed archived once", timeout: .seconds(40)) {
            let found = try RoostBinary.run(["search", "--config", config, "--account", alice.description, "--json", "while alice"],
                                            environment: environment).jsonLines
            return found.count == 1
        }
        let before = try RoostBinary.run(["search", "--config", config, "--account", alice.description, "--json", "before the reload"],
                                         environment: environment)
        #expect(before.jsonLines.count == 1, "archived once across the reloads: \(before.stdout)")
        let status = try #require(try RoostBinary.accountStatus(config: config, environment: environment).first { $0["account"] as? String == alice.description })
        #expect(status["resource"] as? String == "desk", "the changed setting applies")
        let (code, log) = agent.stop(signal: SIGTERM)
        #expect(code == 0, "\(log.suffix(2000))")
        await carol.stop()
    }

    // 18. Adding a friend ends as `both`, also when no agent runs while the friend answers.
    @Test func addingAFriendEndsAsBoth() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "phone")
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let add = try roost.run(["roster", "add", bob.jid.description, "--name", "Bob", "--json"])
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.jsonLines.first?["via"] as? String == "one-shot")
        // Bob (slixmpp, its own client) accepts and asks back while nothing of Roost runs.
        _ = try await bob.presence("subscribe", from: alice)
        try await bob.presence(to: alice, type: "subscribed")
        try await bob.presence(to: alice, type: "subscribe")
        // The peer's command returns once slixmpp queued the presence; the server has handled bob's request when it
        // pushes bob's roster item for alice with the request pending. Only then does the agent start, so the
        // request is one the server holds for alice, not one still on its way while the agent logs in.
        _ = try await bob.next(timeout: .seconds(30), "bob's roster item for alice with his request pending") { event in
            guard event.kind == "roster-push", let items = event.fields["items"] as? [[String: Any]] else { return false }
            return items.contains { $0["jid"] as? String == alice.description && $0["ask"] as? String == "subscribe" }
        }
        // The server answers from the pre-approval, or the agent answers when it logs in: no request waits. No
        // resource of alice is online here, so Prosody 0.12 answers from the pre-approval without telling bob
        // (its `subscribed` is never routed, alice's item ends `both`, bob's `from` + ask): the agent's login sends
        // it again. This passed without that only while a lost logout left alice a hibernated session.
        let agent = try await roost.startAgent()
        defer { agent.stop(signal: SIGKILL) }
        do {
            _ = try await bob.presence("subscribed", from: alice, timeout: .seconds(30))
        } catch {
            // The server's view of both rosters says which side lost the approval (seen only under heavy load).
            let bobsRoster = (try? await bob.call("roster-get"))?.fields["items"].map { "\($0)" } ?? "(roster-get failed)"
            let alicesRoster = (try? roost.run(["roster", "--json"]).stdout) ?? "(roost roster failed)"
            let serverText = server.logFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            let serverTrouble = serverText.split(separator: "\n").filter { $0.contains("\twarn\t") || $0.contains("\terror\t") || $0.contains("[warning]") || $0.contains("[error]") }
            Issue.record("\(error)\nbob's roster: \(bobsRoster)\nalice's roster: \(alicesRoster)\nserver warnings and errors:\n\(serverTrouble.suffix(40).joined(separator: "\n"))\nagent log:\n\(agent.stderrSoFar.suffix(6000))")
            throw error
        }
        try await waitUntil("subscription both") { try roost.rosterEntry(bob.jid)?["subscription"] as? String == "both" }
        #expect(try roost.json(["requests"]).isEmpty)
        // A stranger's request still waits for the user.
        let stranger = try await XMPPPeer.registered(on: server, "stranger")
        try await stranger.presence(to: alice, type: "subscribe")
        try await waitUntil("the stranger's request listed") {
            try roost.json(["requests"]).contains { $0["jid"] as? String == stranger.jid.description }
        }
        #expect(!stranger.events.contains { $0.kind == "presence" && $0["kind"] == "subscribed" })
        await bob.stop()
        await stranger.stop()
    }

    // 10. -vv shows a one-shot login's XMPP exchange, with the password and SASL data redacted.
    @Test func verboseOneShotLogin() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let roost = try RoostUnderTest(server: server, account: alice, password: password)
        let quiet = try roost.run(["roster"])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(!quiet.stderr.contains("SEND"))
        let verbose = try roost.run(["roster", "-vv"])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("SEND <iq") && verbose.stderr.contains("RECV <"), "\(verbose.stderr.suffix(3000))")
        #expect(verbose.stderr.contains("[redacted]"), "the SASL exchange is shown, redacted")
        #expect(!verbose.stderr.contains(password))
        let info = try roost.run(["roster", "-v"])
        #expect(info.stderr.contains("connected as") && !info.stderr.contains("SEND"), "-v: what happens, not the exchange")
    }

    // 17. `roost config init` writes the file and tests the login.
    @Test func configInitTestsTheLogin() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let directory = try TestDirectory("roost-init")
        let path = directory.path + "/roost/config.ini"
        let options = ["--jid", alice.description, "--password-stdin", "--host", server.host, "--port", "\(server.port)", "--ca-file", server.caFile]
        let made = try RoostBinary.run(["config", "init", "--config", path] + options, stdin: password + "\n")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("logged in as \(alice)"))
        #expect(!made.stdout.contains(password) && !made.stderr.contains(password))
        let check = try RoostBinary.run(["config", "--config", path, "--check-passwords"])
        #expect(check.status == 0, "\(check.stderr)")
        let wrong = try RoostBinary.run(["config", "init", "--config", path, "--force"] + options, stdin: "wrong-password\n")
        #expect(wrong.status == 3 && wrong.stderr.contains("the test login failed"), "\(wrong.stderr)")
    }

    // 17. On a terminal `roost config init` asks: the JID, a password command or (left empty) the password
    // without echo, the host; then it tests the login. The terminal is a pseudo-terminal of Python's `pty`.
    @Test func configInitAsksOnATerminal() async throws {
        try TestRequirement.check(.tool("/usr/bin/python3"))
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let directory = try TestDirectory("roost-init-tty")
        let path = directory.path + "/config.ini"
        let result = try runOnTerminal(directory, answers: [("Your XMPP address", alice.description), ("leave empty to type the password", ""),
                                                            ("Password for", password), ("Server host", server.host)],
                                       ["config", "init", "--config", path, "--port", "\(server.port)", "--ca-file", server.caFile])
        let transcript = result.stdout + result.stderr
        #expect(result.status == 0, "\(transcript)")
        #expect(transcript.contains("logged in as \(alice)"), "\(transcript)")
        #expect(!transcript.contains(password), "the password is not echoed: \(transcript)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("[account \(alice)]") && written.contains("host = \(server.host)") && written.contains("password = "))
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// Runs roost on a pseudo-terminal (Python's `pty`), answering each prompt once it is shown; returns the whole
    /// terminal transcript as stdout and roost's exit status.
    private func runOnTerminal(_ directory: TestDirectory, answers: [(prompt: String, answer: String)],
                               _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try TestRequirement.check(.tool("/usr/bin/python3"))
        let terminal = try directory.write("terminal.py", """
            import json, os, pty, select, sys, time
            answers = json.loads(os.environ["TERMINAL_ANSWERS"])
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[1], sys.argv[1:])
            seen, position, deadline = b"", 0, time.time() + 60
            def read():
                global seen
                ready, _, _ = select.select([fd], [], [], max(0, deadline - time.time()))
                if not ready:
                    sys.stdout.write(seen.decode(errors="replace")); sys.exit(99)
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b""
                seen += chunk
                return chunk
            for prompt, answer in answers:
                while seen.find(prompt.encode(), position) < 0:
                    if not read():
                        sys.stdout.write(seen.decode(errors="replace")); sys.exit(98)
                position = seen.find(prompt.encode(), position) + len(prompt)
                os.write(fd, (answer + "\\n").encode())
            while read():
                pass
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.decode(errors="replace"))
            sys.exit(os.waitstatus_to_exitcode(status))
            """)
        var environment = ProcessInfo.processInfo.environment
        let pairs = answers.map { [$0.prompt, $0.answer] }
        environment["TERMINAL_ANSWERS"] = String(decoding: try JSONSerialization.data(withJSONObject: pairs), as: UTF8.self)
        let result = try RoostBinary.runProgram("/usr/bin/python3", [terminal, RoostBinary.path] + arguments,
                                                environment: environment, timeout: 120)
        return (result.status, result.stdout, result.stderr)
    }

    // Issue 30, 6: on a terminal `roost config init` also asks for the port and a CA file; when the system does not
    // trust the server's certificate it offers to pin the one shown, and tests the login again.
    @Test func configInitAsksForThePortAndOffersToPin() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let directory = try TestDirectory("roost-init-pin")
        let path = directory.path + "/config.ini"
        let result = try runOnTerminal(directory, answers: [
            ("Your XMPP address", alice.description), ("leave empty to type the password", ""), ("Password for", password),
            ("Server host", server.host), ("Port", "99999"), ("Port", "\(server.port)"), ("CA certificate file", path + ".missing"),
            ("CA certificate file", ""),
            ("Trust exactly this certificate", "y"),
        ], ["config", "init", "--config", path])
        let transcript = result.stdout + result.stderr
        #expect(result.status == 0, "\(transcript)")
        #expect(transcript.contains("'99999' is not a port") && transcript.contains("cannot load CA certificates from \(path).missing"),
                "\(transcript)")
        #expect(transcript.contains("the test login failed") && transcript.contains("not trusted"), "\(transcript)")
        #expect(transcript.contains("logged in as \(alice)"), "\(transcript)")
        #expect(!transcript.contains(password), "the password is not echoed: \(transcript)")
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.contains("port = \(server.port)\n") && written.contains("fingerprint = ") && !written.contains("ca_file"), "\(written)")
        let check = try RoostBinary.run(["config", "--config", path, "--check", "--json"])
        let login = (check.jsonLines.first?["accounts"] as? [[String: Any]])?.first?["check"] as? [String: Any]
        #expect(check.status == 0 && login?["certificate"] as? String == "pinned", "\(check.stdout)\(check.stderr)")
    }

    // Issue 30, 6: `roost config --check` logs in once with an existing config and says how: TLS version, the
    // certificate verified or pinned, the SASL mechanism; never the password; non-zero when the login fails.
    @Test func configCheckLogsInOnce() async throws {
        let (own, alice, password) = try await server.registeredClient("alice")
        await own.disconnect()
        let directory = try TestDirectory("roost-check")
        let head = "[archive]\npath = \(directory.path)/data/archive.sqlite\n"
        let verified = try directory.write("verified.ini", head + accountGroup(alice, password))
        let json = try RoostBinary.run(["config", "--config", verified, "--check", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let check = try #require((json.jsonLines.first?["accounts"] as? [[String: Any]])?.first?["check"] as? [String: Any], "\(json.stdout)")
        #expect(check["login"] as? String == "ok" && check["certificate"] as? String == "verified", "\(check)")
        #expect((check["tls"] as? String)?.hasPrefix("TLSv1.") == true && (check["sasl"] as? String)?.hasPrefix("SCRAM-SHA-") == true, "\(check)")
        let fingerprint = try #require(check["fingerprint"] as? String)
        let human = try RoostBinary.run(["config", "--config", verified, "--check"])
        #expect(human.status == 0 && human.stdout.contains("check:      logged in: TLSv1.")
                && human.stdout.contains("certificate verified against the trusted CAs, SASL SCRAM-SHA-"), "\(human.stdout)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/data/archive.sqlite"), "a check writes no archive")

        let pinnedGroup = "[account \(alice)]\npassword = \(password)\nhost = \(server.host)\nport = \(server.port)\nfingerprint = \(fingerprint)\n"
        let pinned = try directory.write("pinned.ini", head + pinnedGroup)
        let pinnedCheck = try RoostBinary.run(["config", "--config", pinned, "--check", "--json"])
        let pinnedResult = (pinnedCheck.jsonLines.first?["accounts"] as? [[String: Any]])?.first?["check"] as? [String: Any]
        #expect(pinnedCheck.status == 0 && pinnedResult?["certificate"] as? String == "pinned", "\(pinnedCheck.stdout)\(pinnedCheck.stderr)")

        let wrong = try directory.write("wrong.ini", head + accountGroup(alice, "not-\(password)"))
        let refused = try RoostBinary.run(["config", "--config", wrong, "--check", "--json"])
        #expect(refused.status == 3, "\(refused.stdout)\(refused.stderr)")
        let failed = (refused.jsonLines.first?["accounts"] as? [[String: Any]])?.first?["check"] as? [String: Any]
        #expect(failed?["login"] as? String == "failed", "\(refused.stdout)")
        for output in [json, human, pinnedCheck, refused] {
            #expect(!output.stdout.contains(password) && !output.stderr.contains(password), "never the password")
        }
    }

    // 16. `roost register` prints the [account] group with the connection settings it used.
    @Test func registerPrintsTheSettingsItUsed() throws {
        let directory = try TestDirectory("roost-register")
        let config = try directory.write("config.ini", "[archive]\npath = \(directory.path)/archive.sqlite\n")
        let jid = server.uniqueJID("new")
        let result = try RoostBinary.run(["register", jid.description, "--config", config, "--password-command", "echo pw-new-1",
                                          "--host", server.host, "--port", "\(server.port)", "--ca-file", server.caFile])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("[account \(jid)]\npassword_command = <the command given with --password-command>\nhost = \(server.host)\n"
                                       + "port = \(server.port)\nca_file = \(server.caFile)"), "\(result.stderr)")
        #expect(!result.stderr.contains("pw-new-1"), "a command may hold a secret: it is not repeated")
    }
}
