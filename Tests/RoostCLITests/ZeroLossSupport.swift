import Foundation
import RoostCore
import Testing
import RoostArchive
import RoostTestSupport
import RoostXMPP

/// Sizes of the fault tests. The suite runs a shorter honest run of each fault (the whole suite must fit in
/// 15 minutes on two cores); `contrib/scripts/soak --tests` sets ROOST_TEST_SOAK=1 and runs them at soak size,
/// as before a release (docs/zero-loss.md).
enum FaultSize {
    static let soak = ProcessInfo.processInfo.environment["ROOST_TEST_SOAK"] == "1"

    static func pick(suite: Int, soak soakSize: Int) -> Int { soak ? soakSize : suite }
}

/// What the zero-loss suites share: a private server with alice (Roost's account) and bob (the sender),
/// floods by an independent client, and waits on conditions (the archive's rows, `roost status`).
struct ZeroLossRig {
    let prosody: PrivateServer
    let dir: TestDirectory
    let config: String
    let alice: JID
    let bob: JID
    let bobPassword: String
    let archive: String
    var server: TestServer { prosody.server }
    var roostJID: JID { try! alice.with(resource: "roost") }
}

extension ZeroLossRig {
    /// A private server (its own, since the tests flood or restart it), alice registered for Roost, bob
    /// for the sender, and a config for `roost run`.
    static func make(hibernationSeconds: Int = 120, keepaliveSeconds: Int = 10, pollSeconds: Int = 2, general: String = "",
                     archiveDirectory: String? = nil, port: UInt16? = nil) async throws -> ZeroLossRig {
        let prosody = try PrivateServer(hibernationSeconds: hibernationSeconds)
        let server = prosody.server
        let (aliceClient, alice, password) = try await server.registeredClient("alice")
        await aliceClient.disconnect()
        let (bobClient, bob, bobPassword) = try await server.registeredClient("bob")
        await bobClient.disconnect()
        let dir = try TestDirectory()
        let archive = "\(archiveDirectory ?? dir.path + "/data")/archive.sqlite"
        let config = try dir.write("config.ini", """
            [general]
            archive_poll_seconds = \(pollSeconds)
            keepalive_seconds = \(keepaliveSeconds)
            reconnect_max_seconds = 2
            \(general)
            [archive]
            path = \(archive)
            [account \(alice)]
            password = \(password)
            host = \(server.host)
            port = \(port ?? server.port)
            ca_file = \(server.caFile)

            """)
        return ZeroLossRig(prosody: prosody, dir: dir, config: config, alice: alice, bob: bob, bobPassword: bobPassword, archive: archive)
    }

    /// The same rig with Roost connecting through a relay on `port`.
    func connecting(through port: UInt16) throws -> ZeroLossRig {
        let text = try String(contentsOfFile: config, encoding: .utf8)
            .replacingOccurrences(of: "port = \(server.port)", with: "port = \(port)")
        try dir.write("config.ini", text)
        return self
    }

    /// Waits until the agent completed a read of the server archive that started after now (two reads end
    /// after now: the second began after the first ended): a late duplicate (resend, archive copy) would have
    /// arrived by then.
    func settleAfterAnArchiveRead() async throws {
        // Generous: after a fault the first read may page through thousands of messages (ejabberd pages slowly).
        try await RoostBinary.waitForServerArchiveRead(config: config, after: Date(), timeout: .seconds(300))
    }

    /// The flood's message numbers not in the archive, as ranges ("12-40, 77"), for a failure's message.
    static func missingRanges(_ archive: String, prefix: String, count: Int) -> String {
        let stored = (try? ArchiveCount.sqlite(archive, "SELECT substr(message_id, \(prefix.count + 2)) FROM messages WHERE message_id LIKE '\(prefix)-%'")) ?? ""
        let have = Set(stored.split(separator: "\n").compactMap { Int($0) })
        var ranges: [String] = []
        var start: Int?
        for i in 1...(count + 1) {
            if i <= count && !have.contains(i) { start = start ?? i; continue }
            if let s = start { ranges.append(s == i - 1 ? "\(s)" : "\(s)-\(i - 1)"); start = nil }
        }
        return ranges.isEmpty ? "none" : ranges.joined(separator: ", ")
    }

    static func expectFloodExactlyOnce(_ archive: String, prefix: String, messages: Int, chatStates: Int, log: String, padding: String = "") throws {
        let rows = try ZeroLossSQL.count(archive, "messages WHERE message_id LIKE '\(prefix)-%' AND message_id NOT LIKE '\(prefix)-cs-%'")
        let distinct = try ZeroLossSQL.scalar(archive, """
            SELECT count(DISTINCT message_id) FROM messages WHERE message_id LIKE '\(prefix)-%' AND message_id NOT LIKE '\(prefix)-cs-%'
            """)
        let rightBodies = try ZeroLossSQL.scalar(archive, """
            SELECT count(*) FROM messages WHERE message_id LIKE '\(prefix)-%' AND message_id NOT LIKE '\(prefix)-cs-%'
            AND body = 'msg-' || substr(message_id, \(prefix.count + 2)) || '\(padding)'
            """)
        #expect(rows == messages, "\(rows) rows for \(messages) messages (\(prefix)); log:\n\(log.suffix(3000))")
        #expect(distinct == messages)
        #expect(rightBodies == messages)
        if chatStates > 0 {
            let states = try ZeroLossSQL.count(archive, "chat_states WHERE message_id LIKE '\(prefix)-cs-%'")
            let distinctStates = try ZeroLossSQL.scalar(archive, "SELECT count(DISTINCT message_id) FROM chat_states WHERE message_id LIKE '\(prefix)-cs-%'")
            #expect(states == chatStates && distinctStates == chatStates, "\(states) chat states for \(chatStates)")
        }
    }

    func currentStatus() async throws -> [String: Any] {
        let result = try await offPool { try RoostBinary.run(["status", "--config", config, "--json"], timeout: 30) }
        var merged: [String: Any] = [:]
        for line in result.jsonLines {
            for (key, value) in line where merged[key] == nil || line["kind"] as? String == "account" { merged[key] = value }
        }
        return merged
    }

    @discardableResult
    func waitForStatus(_ what: String, timeout: Duration = .seconds(60),
                       _ condition: @escaping ([String: Any]) -> Bool) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        try await waitUntil(what, timeout: timeout, every: .milliseconds(200), detail: { "last status: \(last)" }) {
            last = try await currentStatus()
            return condition(last)
        }
        return last
    }

    static func waitForLog(_ roost: RunningRoost, _ text: String, timeout: Duration = .seconds(60)) async throws {
        try await waitUntil("'\(text)' in roost's log", timeout: timeout, detail: { roost.stderrSoFar.suffix(3000).description }) {
            roost.stderrSoFar.contains(text)
        }
    }

    /// Watches for a while on purpose (an absence of errors is asserted afterwards).
    static func observe(for duration: Duration) async throws { try await Task.sleep(for: duration) }

    /// Connections in `log` beyond `expected`, less those that a keepalive the server did not answer in time explains
    /// (it has half of `keepalive_seconds`: on a loaded machine the shared test server may be that slow, which says
    /// nothing about the fault a test checks; a counter error ends the stream with an error, never with a silence).
    static func reconnectsNotForAKeepalive(in log: some StringProtocol, expected: Int) -> Int {
        let connections = log.components(separatedBy: "connected as").count - 1
        let unanswered = log.components(separatedBy: "timed out waiting for the server to answer a keepalive").count - 1
        return max(connections - expected - unanswered, 0)
    }
}

// MARK: - Test support for the fault tests

/// SIGKILLs `pid` the moment `condition` holds for `archive`: true when it was killed, false when the process ended
/// first or `seconds` passed. The archive is read in-process (a read-only connection, opened once the file exists)
/// every 2 ms on a thread of its own: a sqlite3 process per look was once too slow to see an import between its
/// first and its last commit, and on a cooperative pool busy with other tests the watch could be late by a whole
/// import. `condition` runs inside one read transaction; an error (no schema yet) counts as not yet.
func killWhen(_ pid: pid_t, archive: String, within seconds: TimeInterval,
              _ condition: @escaping @Sendable (Database) throws(SQLiteError) -> Bool) async throws -> Bool {
    try await killWhen(pid, within: seconds, every: 2_000) { () -> (() -> Bool)? in
        guard FileManager.default.fileExists(atPath: archive), let database = try? Database(path: archive, mode: .readOnly) else {
            return nil
        }
        return { (try? database.read { () throws(SQLiteError) -> Bool in try condition(database) }) == true }
    }
}

/// The loop of `killWhen`: `watch` makes the check on the watching thread (nil: not yet, asked again; a connection it
/// opens is that thread's own), which runs every `microseconds` until it holds (the process is SIGKILLed: true), the
/// process ends or `seconds` pass (false). Also for conditions on other files (the mail mirror's Maildir).
func killWhen(_ pid: pid_t, within seconds: TimeInterval, every microseconds: UInt32,
              _ watch: @escaping @Sendable () -> (() -> Bool)?) async throws -> Bool {
    try await offPool {
        let deadline = Date().addingTimeInterval(seconds)
        var check: (() -> Bool)?
        while Date() < deadline {
            if check == nil { check = watch() }
            if check?() == true {
                kill(pid, SIGKILL)
                return true
            }
            if !FileManager.default.fileExists(atPath: "/proc/\(pid)") { return false }
            usleep(microseconds)
        }
        return false
    }
}

enum ZeroLossSQL {
    /// What `PRAGMA integrity_check` says of the archive, through the sqlite3 shell ("ok" when it is sound).
    static func integrity(_ archive: String) throws -> String {
        try ArchiveCount.sqlite(archive, "PRAGMA integrity_check").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func scalar(_ archive: String, _ sql: String) throws -> Int {
        let text = try ArchiveCount.sqlite(archive, sql).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = Int(text) else { throw SQLFailed(sql: sql, output: text) }
        return value
    }

    /// Like `scalar`, on a connection of Roost's own: there `roost_stanza(raw)` reads a stored stanza, which the
    /// sqlite3 shell sees only as a zstd frame (`StoredStanza`, SchemaV12).
    static func withStanzas(_ archive: String, _ sql: String) throws -> Int {
        let database = try Database(path: archive, mode: .readOnly)
        return Int(try database.cached(sql).scalarInt() ?? 0)
    }

    static func count(_ archive: String, _ from: String) throws -> Int {
        guard FileManager.default.fileExists(atPath: archive) else { return 0 }
        return try scalar(archive, "SELECT count(*) FROM \(from)")
    }

    struct SQLFailed: Error, CustomStringConvertible {
        let sql: String
        let output: String
        var description: String { "sqlite3 failed on \(sql): \(output)" }
    }
}

/// bob floods through contrib/scripts/xmpp-peer.py (slixmpp), which waits for the server's acks.
struct PeerFlood {
    let process: RunningRoost

    init(_ rig: ZeroLossRig, to: JID, count: Int, prefix: String, chatstateEvery: Int = 0,
         bodyPadding: String = "", perSecond: Int = 0, timeoutSeconds: Int = 300) throws {
        var arguments = [TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py", "--jid", "\(rig.bob)/flood-\(prefix)",
                         "--password", rig.bobPassword, "--host", rig.server.host, "--port", String(rig.server.port),
                         "--ca", rig.server.caFile, "--timeout", String(timeoutSeconds),
                         "flood", to.description, String(count), "--id-prefix", prefix]
        if chatstateEvery > 0 { arguments += ["--chatstate-every", String(chatstateEvery)] }
        if !bodyPadding.isEmpty { arguments += ["--body-suffix", bodyPadding] }
        if perSecond > 0 { arguments += ["--rate", String(perSecond)] }
        process = try RoostBinary.startProgram("/usr/bin/python3", arguments)
    }

    /// Waits until the peer has sent everything and the server acknowledged it.
    func finish(timeout: Duration = .seconds(300)) async throws {
        try await waitUntil("the flood to be acknowledged by the server", timeout: timeout,
                            detail: { process.stderrSoFar.suffix(2000).description }) { !process.isRunning }
        let (status, log) = process.stop(signal: SIGTERM, timeout: 5)
        guard status == 0 else { throw WaitTimedOut(what: "a successful flood (exit \(status)):\n\(log.suffix(2000))") }
    }
}

/// bob, online with slixmpp, printing what he receives (to count deliveries).
struct XMPPPeerProcess {
    let process: RunningRoost

    init(_ rig: ZeroLossRig, listening: Bool) async throws {
        process = try RoostBinary.startProgram("/usr/bin/python3", [
            TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py", "--jid", "\(rig.bob)/listener", "--password", rig.bobPassword,
            "--host", rig.server.host, "--port", String(rig.server.port), "--ca", rig.server.caFile, "listen", "600"])
        try await waitUntil("bob online", timeout: .seconds(30)) { process.stderrSoFar.contains("\"event\": \"listening\"") }
    }

    func received(body: String) -> Int {
        process.stderrSoFar.split(separator: "\n").filter { $0.contains("\"event\": \"message\"") && $0.contains("\"body\": \"\(body)\"") }.count
    }
}

/// A second writer holding the archive's write lock (`BEGIN IMMEDIATE` … `COMMIT`), as `sqlite3` would.
struct LockHolder {
    let process: RunningRoost

    /// Holds the archive's write lock (`BEGIN IMMEDIATE`) for `seconds`, or until `release()`.
    init(archive: String, seconds: Double) throws {
        let script = """
            import signal, sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
            c.execute("BEGIN IMMEDIATE")
            released = []
            signal.signal(signal.SIGUSR1, lambda *_: released.append(1))
            print("locked", file=sys.stderr, flush=True)
            deadline = time.monotonic() + float(sys.argv[2])
            while not released and time.monotonic() < deadline:
                time.sleep(0.05)
            c.execute("COMMIT")
            print("released", file=sys.stderr, flush=True)
            """
        process = try RoostBinary.startProgram("/usr/bin/python3", ["-c", script, archive, String(seconds)])
        try process.waitForLog("locked", timeout: 30)
    }

    /// Commits the lock holder's empty transaction now; returns once the lock is gone.
    func release() async throws {
        kill(process.pid, SIGUSR1)
        try await waitUntil("the lock holder to release the archive", timeout: .seconds(60)) { process.stderrSoFar.contains("released") }
    }
}

/// A small tmpfs for the archive, so the test can fill the disk (needs root, as CI runs; otherwise the test
/// fails saying so — it never skips).
final class TmpfsMount: @unchecked Sendable {
    let path: String

    struct CannotMount: Error, CustomStringConvertible {
        let output: String
        var description: String { "this test mounts a tmpfs to fill the archive's disk and needs root (CI runs as root): \(output)" }
    }

    init(sizeMegabytes: Int) throws {
        path = NSTemporaryDirectory() + "roost-tmpfs-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let result = try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(sizeMegabytes)m,mode=0700", "tmpfs", path])
        guard result.status == 0 else { throw CannotMount(output: result.output) }
        try FileManager.default.createDirectory(atPath: path + "/data", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes a file that leaves about `kilobytes` free.
    func fill(_ file: String, leavingKilobytes kilobytes: Int) throws {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { throw CannotMount(output: "statvfs failed") }
        let free = Int(info.f_bavail) * Int(info.f_frsize)
        let size = max(0, free - kilobytes * 1024)
        _ = FileManager.default.createFile(atPath: file, contents: Data(count: size))
    }

    func unmount() {
        _ = try? Self.run("/usr/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: path)
    }

    static func run(_ program: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try RoostBinary.runProgram(program, arguments, timeout: 300)
        return (result.status, result.stdout + result.stderr)
    }
}

enum ResidentMemory {
    /// VmRSS of a process, in KiB.
    static func kilobytes(of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else {
            throw ZeroLossSQL.SQLFailed(sql: "VmRSS", output: status)
        }
        return value
    }
}

/// A jsonl file in `roost export` format with `count` messages, for the import-during-a-flood test; `raw` adds
/// each message's stanza (for the stored-stanza migration test).
enum ImportFile {
    /// `originIds`: every even message also carries an origin-id (so the archive holds both kinds of dedup key).
    static func write(_ path: String, account: String, count: Int, prefix: String, raw: Bool = false, originIds: Bool = false) throws {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let base: Int64 = 1_700_000_000_000
        var chunk = ""
        for i in 1...count {
            let peer = "friend\(i % 50)@example.org"
            chunk += """
                {"version":1,"event":"message","account":"\(account)","conversation":"\(peer)","direction":"in","type":"chat","from":"\(peer)/phone","to":"\(account)/roost","timestamp":"\(ExportTime.utc(base + Int64(i) * 1000))","received_at":"\(ExportTime.utc(base + Int64(i) * 1000))","body":"imported \(i)","message_id":"\(prefix)-\(i)"\(originIds && i % 2 == 0 ? ",\"origin_id\":\"\(prefix)-o\(i)\"" : ""),"source":"import"\(raw ? stanza(i, peer, account, prefix) : "")}

                """
            if i % 5000 == 0 {
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        try handle.write(contentsOf: Data(chunk.utf8))
    }

    private static func stanza(_ i: Int, _ peer: String, _ account: String, _ prefix: String) -> String {
        #","raw":"<message xmlns=\"jabber:client\" from=\"\#(peer)/phone\" to=\"\#(account)/roost\" type=\"chat\" "#
            + #"id=\"\#(prefix)-\#(i)\"><body>imported \#(i)</body><markable xmlns=\"urn:xmpp:chat-markers:0\"/></message>""#
    }
}

enum ExportTime {
    static func utc(_ ms: Int64) -> String {
        ISO8601DateFormatter.withMilliseconds.string(from: Date(timeIntervalSince1970: TimeInterval(ms) / 1000))
    }
}

extension ISO8601DateFormatter {
    nonisolated(unsafe) static let withMilliseconds: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
}
