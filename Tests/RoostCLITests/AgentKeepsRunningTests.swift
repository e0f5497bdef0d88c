import Foundation
import RoostCore
import Testing
import RoostTestSupport
import RoostXMPP

/// Once an account has logged in, nothing ends `roost run`: a password the server stops taking, a certificate that
/// stops verifying, a password_command that hangs, a shortage of descriptors, another client with the same resource.
/// The account waits (with the cause and the next try in `roost status`), the user is told once, SIGHUP tries again
/// at once — and nothing sent meanwhile is lost.
@Suite("roost run keeps running once an account has worked", .requires(.server))
struct AgentKeepsRunningTests {
    let server: TestServer

    init() throws { server = try TestServer.require() }

    private func config(_ dir: TestDirectory, account: JID, passwordLine: String, port: UInt16? = nil, caFile: String? = nil,
                        extra: String = "") throws -> String {
        try dir.write("config.ini", """
            [general]
            archive_poll_seconds = 2
            reconnect_max_seconds = 2
            [archive]
            path = \(dir.path)/data/archive.sqlite
            \(extra)
            [account \(account)]
            \(passwordLine)
            host = \(server.host)
            port = \(port ?? server.port)
            \(caFile.map { "ca_file = \($0)" } ?? "")

            """)
    }

    /// Whether a process running exactly `argv` waits in open(2) for the other end of a named pipe.
    static func processesBlockedOnPipe(running argv: [String]) -> Bool {
        let wanted = argv.joined(separator: "\0") + "\0"
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
        return pids.contains { pid in
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                  String(decoding: cmdline, as: UTF8.self) == wanted,
                  let wchan = try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8) else { return false }
            return wchan.contains("wait_for_partner")
        }
    }

    /// The account's line of `roost status --json`.
    private func accountStatus(_ config: String) async throws -> [String: Any] {
        let result = try await offPool { try RoostBinary.run(["status", "--json", "--config", config], timeout: 30) }
        return result.jsonLines.first { $0["kind"] as? String == "account" } ?? [:]
    }

    @discardableResult
    private func waitForAccount(_ what: String, _ config: String, _ roost: RunningRoost, timeout: Duration = .seconds(60),
                                _ condition: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        try await waitUntil(what, timeout: timeout, detail: { "last status: \(last)\nroost log:\n\(roost.stderrSoFar.suffix(3000))" }) {
            // An agent that stopped answers no more: said at once, with its log.
            guard roost.isRunning else { throw WaitTimedOut(what: "\(what): roost run exited; its log ends:\n\(roost.stderrSoFar.suffix(3000))") }
            last = try await accountStatus(config)
            if condition(last) { return true }
            // Each look starts a `roost status` (Foundation's Process): not more often than needed.
            try await Task.sleep(for: .milliseconds(300))
            return false
        }
        return last
    }

    private static func occurrences(of text: String, in log: String) -> Int { log.components(separatedBy: text).count - 1 }

    private static func nextTry(_ status: [String: Any]) -> Date? {
        let parse = ISO8601DateFormatter()
        parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return (status["next_try"] as? String).flatMap(parse.date(from:))
    }

    /// The lines of the suite's mock notification log (python3-dbusmock) that contain every one of `parts`.
    private static func notifications(containing parts: String...) -> [String] {
        let path = ProcessInfo.processInfo.environment["ROOST_TEST_NOTIFY_LOG"] ?? ""
        let log = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init).filter { line in parts.allSatisfy(line.contains) }
    }

    /// The server changes a working account's password (and ends its session): the agent keeps running, the
    /// account waits with the cause and its next try, the desktop and the configured sinks are told once — not
    /// again when SIGHUP retries with the password still wrong — and once the password is back and SIGHUP
    /// sent, what a contact sent meanwhile is archived exactly once.
    @Test(.requires(.notificationLog)) func passwordChangedOnTheServerMakesTheAccountWait() async throws {
        try TestRequirement.check(.notificationLog)
        let dir = try TestDirectory()
        let (client, alice, password) = try await server.registeredClient("alice")
        await client.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        // Stopped at the end; this only covers a test that throws before.
        defer { Task { await bob.stop() } }
        let sinkLog = dir.path + "/sink.log"
        let sink = try dir.write("sink.sh", "#!/bin/sh\nprintf '%s %s\\n' \"$ROOST_EVENT\" \"$ROOST_ACCOUNT\" >> '\(sinkLog)'\n", mode: 0o700)
        let config = try config(dir, account: alice, passwordLine: "password = \(password)", caFile: server.caFile, extra: """
            [sink desktop]
            type = desktop
            [sink file]
            type = command
            command = \(sink)
            """)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready("\(alice)")

        let changed = Date()
        try server.changePassword(of: alice, to: "changed-\(UUID().uuidString.prefix(8))")
        let waiting = try await waitForAccount("alice waiting for the user", config, roost) { $0["state"] as? String == "waiting" }
        #expect((waiting["cause"] as? String)?.contains("not-authorized") == true, "\(waiting)")
        // A try after the refusal, and within the hour (not "now": on a loaded machine the status may come late).
        let next = Self.nextTry(waiting)
        #expect(next.map { $0 > changed && $0 < Date().addingTimeInterval(3700) } == true, "the next try: \(waiting)")
        #expect(roost.isRunning, "the agent must keep running: \(roost.stderrSoFar.suffix(2000))")
        // The words too, and exit status 3 (the account waits; on a loaded machine it may be trying again meanwhile).
        try await waitUntil("roost status to say alice waits for you", detail: { roost.stderrSoFar.suffix(2000).description }) {
            let status = try await offPool { try RoostBinary.run(["status", "--config", config], timeout: 30) }
            guard status.stdout.contains("\(alice): waiting for you") else {
                try await Task.sleep(for: .milliseconds(300))
                return false
            }
            #expect(status.status == 3, "\(status.stdout)")
            return true
        }
        try await waitUntil("the desktop notification") { !Self.notifications(containing: "cannot log in to \(alice)").isEmpty }
        try await waitUntil("the command sink's notification") {
            ((try? String(contentsOfFile: sinkLog, encoding: .utf8)) ?? "").contains("account \(alice)")
        }

        // A contact writes while the account cannot log in.
        let marker = "meanwhile-\(UUID().uuidString.prefix(8))"
        for i in 1...5 { try await bob.send(to: alice, body: "\(marker) \(i)") }

        // SIGHUP with the password still wrong: tried again at once, and nobody is told twice.
        let refusals = Self.occurrences(of: "\(alice): authentication failed", in: roost.stderrSoFar)
        kill(roost.pid, SIGHUP)
        try await waitUntil("another login attempt after SIGHUP", detail: { roost.stderrSoFar.suffix(2000).description }) {
            Self.occurrences(of: "\(alice): authentication failed", in: roost.stderrSoFar) > refusals
        }
        try await waitForAccount("alice waiting again", config, roost) { $0["state"] as? String == "waiting" }

        // The admin puts the password back; SIGHUP.
        try server.changePassword(of: alice, to: password)
        kill(roost.pid, SIGHUP)
        try await waitForAccount("alice online again", config, roost) { $0["state"] as? String == "online" }
        try await RoostBinary.waitForServerArchiveRead(config: config, after: Date(), timeout: .seconds(60))
        let archive = dir.path + "/data/archive.sqlite"
        for i in 1...5 {
            let copies = try ZeroLossSQL.scalar(archive, "SELECT count(*) FROM messages WHERE body = '\(marker) \(i)'")
            #expect(copies == 1, "message \(i) archived \(copies) times")
        }
        #expect(Self.notifications(containing: "cannot log in to \(alice)").count == 1, "\(Self.notifications(containing: "\(alice)"))")
        let sinkLines = ((try? String(contentsOfFile: sinkLog, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(sinkLines.filter { $0 == "account \(alice)" }.count == 1, "\(sinkLines)")
        await bob.stop()
        let (exit, log) = roost.stop(signal: SIGTERM)
        #expect(exit == 0, "\(log.suffix(2000))")
        #expect(!log.contains("every account failed"), "\(log.suffix(2000))")
    }

    /// A certificate that stops verifying, then a password_command that hangs: the account waits for the user
    /// each time (with the cause), the agent keeps running, and SIGHUP after the fix brings it back — also a SIGHUP
    /// that comes while the command still hangs.
    @Test(.requires(.tool("/usr/bin/openssl"))) func certificateAndHungPasswordCommandMakeTheAccountWait() async throws {
        try TestRequirement.check(.tool("/usr/bin/openssl"))
        let dir = try TestDirectory()
        let (client, alice, password) = try await server.registeredClient("alice")
        await client.disconnect()
        let proxy = try TCPProxy(target: server.host, port: server.port)
        defer { proxy.stop() }
        let caFile = try dir.write("ca.pem", try String(contentsOfFile: server.caFile, encoding: .utf8))
        let passwordFile = try dir.write("password", password + "\n")
        let config = try config(dir, account: alice, passwordLine: "password_command = cat \(passwordFile)", port: proxy.port, caFile: caFile)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready("\(alice)")

        // The server's certificate is no longer issued by a CA the account trusts (as when it is replaced by one
        // of another CA): the next connection refuses it.
        let other = try RoostBinary.runProgram("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                                                                     "-nodes", "-subj", "/CN=Another CA", "-days", "2",
                                                                     "-keyout", dir.path + "/other.key", "-out", caFile])
        #expect(other.status == 0, "\(other.stderr)")
        proxy.cut()
        let untrusted = try await waitForAccount("alice waiting after the certificate check", config, roost, timeout: .seconds(180)) {
            $0["state"] as? String == "waiting"
        }
        #expect((untrusted["cause"] as? String)?.contains("not trusted") == true, "\(untrusted)")
        #expect(Self.nextTry(untrusted) != nil && roost.isRunning, "\(untrusted)")

        // The CA is back, but the password_command now hangs (it reads a pipe nobody writes): SIGHUP tries again.
        _ = try dir.write("ca.pem", try String(contentsOfFile: server.caFile, encoding: .utf8))
        try FileManager.default.removeItem(atPath: passwordFile)
        #expect(mkfifo(passwordFile, 0o600) == 0)
        let retries = Self.occurrences(of: "\(alice): trying again now", in: roost.stderrSoFar)
        kill(roost.pid, SIGHUP)
        try await waitUntil("alice trying again after SIGHUP", detail: { roost.stderrSoFar.suffix(2000).description }) {
            Self.occurrences(of: "\(alice): trying again now", in: roost.stderrSoFar) > retries
        }
        // The command is hung only once it waits in open(2) for a writer to the pipe (the kernel's wait_for_partner):
        // replacing the file before would let it read the password at once.
        try await waitUntil("the password_command to hang on the pipe", detail: { roost.stderrSoFar.suffix(2000).description }) {
            Self.processesBlockedOnPipe(running: ["cat", passwordFile])
        }

        // While it hangs, the user fixes it and reloads: the attempt under way is not cut short (the command has its
        // 30 s), but when it fails the next one starts at once instead of after the backoff.
        try FileManager.default.removeItem(atPath: passwordFile)
        _ = try dir.write("password", password + "\n")
        let stillHung = !roost.stderrSoFar.contains("did not finish within 30 s")
        kill(roost.pid, SIGHUP)
        try await waitForAccount("alice online again", config, roost, timeout: .seconds(120)) { $0["state"] as? String == "online" }
        // The hung command made the account wait for the user (the form of that log line: " — " and what happens next).
        let log = roost.stderrSoFar
        let hung = log.split(separator: "\n").first { $0.contains("did not finish within 30 s") }.map(String.init) ?? ""
        #expect(hung.contains("password_command of account \(alice)") && hung.contains(" — "), "\(log.suffix(3000))")
        if stillHung {
            // The SIGHUP came while the command hung (as it does unless the machine is slower than 30 s): the next
            // attempt started at once.
            #expect(log.contains("\(alice): an attempt is under way; if it fails, trying again at once"), "\(log.suffix(3000))")
            #expect(hung.contains(" — trying again now (SIGHUP came during this attempt)"), "\(log.suffix(3000))")
        } else {
            #expect(hung.contains("Roost keeps running and tries again in"), "\(log.suffix(3000))")
        }
        let (exit, finalLog) = roost.stop(signal: SIGTERM)
        #expect(exit == 0, "\(finalLog.suffix(2000))")
        #expect(!finalLog.contains(password), "the password must not be logged")
    }

    enum TrustSource: String, CaseIterable, Sendable {
        /// `ca_file`: read when each connection's TLS context is made.
        case caFile
        /// The system's CA folder (`SSL_CERT_DIR`), which OpenSSL reads certificate by certificate while it checks.
        case systemFolder
    }

    /// The agent runs out of descriptors (a low RLIMIT_NOFILE set from outside with prlimit, every descriptor below
    /// it in use but one). A message that arrives meanwhile is archived, and its desktop notification is not shown
    /// (GLib would abort the process making the D-Bus call's main contexts). Then the connection drops: the new socket
    /// takes the one descriptor freed, and the CA certificates cannot be read ("Too many open files"). That is no
    /// config problem: the agent keeps running, retries with backoff, and reconnects once descriptors are free.
    @Test(.requires(.tool("/usr/bin/prlimit"), .tool("/usr/bin/openssl"), .notificationLog), arguments: TrustSource.allCases)
    func descriptorShortageAtAReconnectIsRetried(_ trust: TrustSource) async throws {
        try TestRequirement.check(.tool("/usr/bin/prlimit"), .tool("/usr/bin/openssl"), .notificationLog)
        let dir = try TestDirectory()
        let (client, alice, password) = try await server.registeredClient("alice")
        await client.disconnect()
        let bob = try await XMPPPeer.registered(on: server, "bob")
        // Stopped at the end; this only covers a test that throws before.
        defer { Task { await bob.stop() } }
        let proxy = try TCPProxy(target: server.host, port: server.port)
        defer { proxy.stop() }
        var environment: [String: String] = [:]
        let config: String
        switch trust {
        case .caFile:
            config = try self.config(dir, account: alice, passwordLine: "password = \(password)", port: proxy.port, caFile: server.caFile)
        case .systemFolder:
            let folder = dir.path + "/certs"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            _ = try dir.write("certs/test-ca.pem", try String(contentsOfFile: server.caFile, encoding: .utf8))
            let rehash = try RoostBinary.runProgram("/usr/bin/openssl", ["rehash", folder])
            #expect(rehash.status == 0, "\(rehash.stderr)")
            environment = ["SSL_CERT_DIR": folder, "SSL_CERT_FILE": dir.path + "/no-bundle.pem"]
            config = try self.config(dir, account: alice, passwordLine: "password = \(password)", port: proxy.port)
        }
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], environment: environment)
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready("\(alice)")
        let logins = Self.occurrences(of: "\(alice): connected as", in: roost.stderrSoFar)

        // No descriptor is free only as long as each step needs: libdispatch's worker-pool monitor opens
        // /proc/TID/stat every second while work is queued, and crashes the process when it cannot
        // (DISPATCH_CLIENT_CRASH, SIGILL) — on a loaded machine a long shortage ends any Swift program so, whatever
        // Roost does. What the agent must meet waits in the proxy until the limit is set.
        let original = try Self.softDescriptorLimit(of: roost.pid)
        let archive = dir.path + "/data/archive.sqlite"
        let marker = "no-descriptor-\(UUID().uuidString.prefix(8))"
        // One descriptor is left: not enough for GLib's D-Bus call, which needs several at once.
        try await proxy.hold()
        try await bob.send(to: try alice.with(resource: "roost"), body: marker)
        try Self.exhaustDescriptors(of: roost.pid, leaving: 1)
        try await proxy.release()
        try await ZeroLossRig.waitForLog(roost, "desktop notification failed: not shown: Too many open files")
        try Self.setSoftDescriptorLimit(of: roost.pid, to: original)
        #expect(roost.isRunning, "the agent must keep running: \(roost.stderrSoFar.suffix(3000))")
        try await waitUntil("the message archived", detail: { roost.stderrSoFar.suffix(3000).description }) {
            try ZeroLossSQL.scalar(archive, "SELECT count(*) FROM messages WHERE body = '\(marker)'") == 1
        }

        // The connection drops; the next one opens its socket and then waits in the proxy, before its TLS step. Then
        // no descriptor is free, and the TLS step needs one to read the CA certificates.
        try await proxy.hold()
        let connects = Self.occurrences(of: "\(alice): connected to ", in: roost.stderrSoFar)
        proxy.cut()
        try await waitUntil("a new connection, held in the proxy", detail: { roost.stderrSoFar.suffix(3000).description }) {
            Self.occurrences(of: "\(alice): connected to ", in: roost.stderrSoFar) > connects
        }
        try Self.exhaustDescriptors(of: roost.pid)
        try await proxy.release()
        try await waitUntil("the reconnect to fail for want of descriptors", detail: { roost.stderrSoFar.suffix(3000).description }) {
            roost.stderrSoFar.split(separator: "\n").contains { $0.contains("Too many open files") && $0.contains("retrying in") }
        }
        try Self.setSoftDescriptorLimit(of: roost.pid, to: original)
        #expect(roost.isRunning, "the agent must keep running: \(roost.stderrSoFar.suffix(3000))")
        try await waitUntil("alice to reconnect once descriptors are free", detail: { roost.stderrSoFar.suffix(3000).description }) {
            Self.occurrences(of: "\(alice): connected as", in: roost.stderrSoFar) > logins
        }
        await bob.stop()
        let (exit, log) = roost.stop(signal: SIGTERM)
        #expect(exit == 0, "\(log.suffix(2000))")
        #expect(!log.contains("every account failed") && !log.contains("waiting for you"), "\(log.suffix(2000))")
    }

    /// Sets the soft descriptor limit just above the lowest free descriptor(s): everything below is in use, so only
    /// `spare` more can be opened until a descriptor is closed.
    static func exhaustDescriptors(of pid: pid_t, leaving spare: Int = 0) throws {
        let limit = lowestFreeDescriptor(of: pid) + spare
        try setSoftDescriptorLimit(of: pid, to: limit)
        #expect(lowestFreeDescriptor(of: pid) >= limit - spare, "a descriptor below the limit was freed meanwhile")
    }

    static func lowestFreeDescriptor(of pid: pid_t) -> Int {
        var fd = 0
        while FileManager.default.fileExists(atPath: "/proc/\(pid)/fd/\(fd)") { fd += 1 }
        return fd
    }

    static func softDescriptorLimit(of pid: pid_t) throws -> Int {
        let result = try RoostBinary.runProgram("/usr/bin/prlimit", ["--pid", String(pid), "--nofile", "--raw", "--noheadings", "--output", "SOFT"])
        guard result.status == 0, let value = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw WaitTimedOut(what: "prlimit to read the descriptor limit: \(result.stdout) \(result.stderr)")
        }
        return value
    }

    static func setSoftDescriptorLimit(of pid: pid_t, to limit: Int) throws {
        let result = try RoostBinary.runProgram("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=\(limit):"])
        guard result.status == 0 else { throw WaitTimedOut(what: "prlimit to set the descriptor limit to \(limit): \(result.stderr)") }
    }

    /// Two agents with the same config (a laptop and a server) on one account: each login replaces the other's
    /// session. After a few rounds the one replaced stops reconnecting and says why (in `roost status` and the
    /// log), the other stays online, and neither records its own comings and goings as presence. SIGHUP makes
    /// the waiting one try again (and then the other is the one that stops).
    @Test func twoAgentsOnOneAccountStopFighting() async throws {
        let (client, alice, password) = try await server.registeredClient("alice")
        await client.disconnect()
        let firstDir = try TestDirectory(), secondDir = try TestDirectory()
        let firstConfig = try config(firstDir, account: alice, passwordLine: "password = \(password)", caFile: server.caFile)
        let secondConfig = try config(secondDir, account: alice, passwordLine: "password = \(password)", caFile: server.caFile)
        let first = try RoostBinary.start(["run", "--config", firstConfig, "-v"])
        defer { first.stop(signal: SIGKILL) }
        try await first.ready("\(alice)")
        let second = try RoostBinary.start(["run", "--config", secondConfig, "-v"])
        defer { second.stop(signal: SIGKILL) }

        // The first one started is replaced first, and so is the first to be replaced three times.
        let stopped = try await waitForAccount("the first agent to stop reconnecting", firstConfig, first, timeout: .seconds(240)) {
            $0["state"] as? String == "waiting"
        }
        #expect((stopped["cause"] as? String)?.contains("the same resource") == true, "\(stopped)")
        #expect(stopped["next_try"] is NSNull, "it waits for SIGHUP only: \(stopped)")
        #expect(first.stderrSoFar.contains("replaced Roost, 3 times in a row"), "\(first.stderrSoFar.suffix(2000))")
        try await waitForAccount("the second agent online", secondConfig, second) { $0["state"] as? String == "online" }
        let logins = Self.occurrences(of: "connected as", in: first.stderrSoFar + second.stderrSoFar)
        #expect(logins <= 7, "\(logins) logins: they took turns more than three times each")
        // Watched on purpose: the fight is over, nobody logs in again.
        try await ZeroLossRig.observe(for: .seconds(5))
        #expect(Self.occurrences(of: "connected as", in: first.stderrSoFar + second.stderrSoFar) == logins)
        #expect(first.isRunning && second.isRunning)

        // SIGHUP: the waiting one logs in again, replacing the other, which had already been replaced twice.
        kill(first.pid, SIGHUP)
        try await waitForAccount("the first agent online after SIGHUP", firstConfig, first) { $0["state"] as? String == "online" }
        try await waitForAccount("the second agent to stop reconnecting", secondConfig, second, timeout: .seconds(180)) {
            $0["state"] as? String == "waiting"
        }

        for dir in [firstDir, secondDir] {
            let own = try ZeroLossSQL.scalar(dir.path + "/data/archive.sqlite",
                                             "SELECT count(*) FROM presence_log WHERE contact = '\(alice)' AND resource = 'roost'")
            #expect(own == 0, "\(own) presences of Roost's own resource recorded in \(dir.path)")
        }
        #expect(first.stop(signal: SIGTERM).status == 0)
        #expect(second.stop(signal: SIGTERM).status == 0)
    }
}

/// Reading the config can meet a shortage too (a unit started while the machine has no descriptor, memory or disk to
/// spare): that is no config problem, so never exit status 78, which stops systemd from starting roost again.
@Suite("A shortage while reading the config")
struct ConfigReadShortageTests {
    /// `roost config` under every descriptor limit from 3 up (`ulimit -n` in a shell that reports how it ended): below
    /// 16 Roost refuses to start, saying so (exit 70) — the Swift runtime's libdispatch makes descriptors of its own at
    /// moments no code of ours chooses and traps when it cannot, so running nearer the edge would be a crash some of
    /// the time; from 16 it works. No limit makes it exit 78, none ends it by a signal. At 3 the dynamic loader cannot
    /// open roost's libraries: its own exit 127, before roost.
    @Test func noDescriptorLimitMakesTheConfigWrong() throws {
        let dir = try TestDirectory()
        let config = try dir.write("config.ini", "[archive]\npath = \(dir.path)/data/archive.sqlite\n[account alice@example.org]\npassword = x\n")
        for limit in 3...24 {
            // The limit holds in the subshell only: the outer shell still has descriptors to say how roost ended.
            let result = try RoostBinary.runProgram("/bin/sh", ["-c", "(ulimit -c 0; ulimit -n \(limit); exec \"$0\" config --config \"$1\"); echo \"exit $?\"",
                                                                RoostBinary.path, config], timeout: 30)
            let exit = result.stdout.split(separator: "\n").last { $0.hasPrefix("exit ") }.flatMap { Int32($0.dropFirst(5)) } ?? -1
            if exit == 127 && result.stderr.contains("error while loading shared libraries") { continue }
            if limit < 16 {
                #expect(exit == 70 && result.stderr.contains("may have only \(limit) open files") && result.stderr.contains("needs at least 16"),
                        "limit \(limit): exit \(exit): \(result.stderr)")
            } else {
                #expect(exit == 0, "limit \(limit): exit \(exit): \(result.stderr)")
            }
        }
    }

    /// The archive's folder on a full filesystem (a tmpfs without a free inode, in a mount namespace of its own):
    /// `roost config`'s check that it can write there meets ENOSPC, a shortage — exit 70, never 78 (the
    /// write-probe's verdict once read as "not a directory Roost can write").
    @Test func aFullDiskUnderTheArchiveIsNoConfigProblem() throws {
        let dir = try TestDirectory()
        let full = dir.path + "/full"
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        let config = try dir.write("config.ini", "[archive]\npath = \(full)/archive.sqlite\n[account alice@example.org]\npassword = x\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config)
        let namespace = geteuid() == 0 ? ["--mount"] : ["--user", "--map-root-user", "--mount"]
        // The tmpfs's one free inode goes to a filler: the next file made there fails with ENOSPC.
        let script = "mount -t tmpfs -o size=64k,nr_inodes=2 tmpfs \"$0\" && : > \"$0/filler\" && (: > \"$0/probe\") 2>/dev/null && echo \"not full\"; "
            + "\"$1\" config --config \"$2\"; echo \"exit $?\""
        let result = try RoostBinary.runProgram("/usr/bin/unshare", namespace + ["/bin/sh", "-c", script, full, RoostBinary.path, config], timeout: 60)
        #expect(!result.stdout.contains("not full"), "the tmpfs was not full: \(result.stdout)")
        let exit = result.stdout.split(separator: "\n").last { $0.hasPrefix("exit ") }.flatMap { Int32($0.dropFirst(5)) } ?? -1
        #expect(result.stderr.contains("No space left on device"), "the check did not meet the full disk: \(result.stderr)")
        #expect(exit == 70, "exit \(exit): \(result.stderr)")
    }
}
