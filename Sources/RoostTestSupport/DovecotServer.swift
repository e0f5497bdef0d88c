public import Foundation

/// The suite's private Dovecot (IMAP on 127.0.0.1), started and stopped by contrib/scripts/test through
/// contrib/scripts/dovecot-test-server: a real mail server reading what Roost writes as Maildir.
///
///     let dovecot = try DovecotServer.require()             // a suite marked .requires(.dovecot)
///     let imap = try dovecot.addUser(maildir: dir.path + "/Mail")
///     let watch = try imap.watch(for: ["BODY", marker])     // selected in INBOX when it returns
///     …                                                     // something writes the mail into Mail/new
///     let mail = try watch.messages()                       // what the client was told, fetched
///     let all = try imap.fetch()                            // every message of INBOX, headers decoded
///
/// A Maildir's sub-folders (an export's `--split conversation`) are the user's IMAP folders (`folders()`, then
/// `fetch(mailbox:)`). Dovecot keeps its indexes in its run directory: it writes nothing into the Maildir except what
/// IMAP asks (a flag renames the file in cur/; new mail moves from new/ to cur/ when a session sees it).
public struct DovecotServer: Sendable {
    public let host: String
    public let port: Int
    /// contrib/scripts/dovecot-test-server, with `ROOST_DOVECOT_DIR` for its run directory.
    let script: String
    let directory: String
    /// Dovecot's log (logins, errors: what to show when a test fails).
    public let logFile: String

    /// The running one: from the environment contrib/scripts/test exports, else the env file of a server started by
    /// hand (`ROOST_DOVECOT_DIR`, default contrib/dovecot/run/test).
    public static let shared: DovecotServer? = load()

    public static func require() throws -> DovecotServer {
        guard let shared else { throw RequirementMissing(missing: [TestRequirement.dovecot.description]) }
        return shared
    }

    static func load() -> DovecotServer? {
        var env = ProcessInfo.processInfo.environment
        if env["ROOST_TEST_DOVECOT_PORT"] == nil {
            let dir = env["ROOST_DOVECOT_DIR"] ?? TestServer.packageRoot + "/contrib/dovecot/run/test"
            for line in ((try? String(contentsOfFile: dir + "/env", encoding: .utf8)) ?? "").split(separator: "\n") {
                guard line.hasPrefix("export "), let eq = line.firstIndex(of: "=") else { continue }
                var value = String(line[line.index(after: eq)...])
                if value.count >= 2 && value.hasPrefix("'") && value.hasSuffix("'") { value = String(value.dropFirst().dropLast()) }
                env[String(line.dropFirst(7)[..<eq])] = value
            }
        }
        guard let port = env["ROOST_TEST_DOVECOT_PORT"].flatMap({ Int($0) }), let directory = env["ROOST_DOVECOT_DIR"] else { return nil }
        return DovecotServer(host: env["ROOST_TEST_DOVECOT_HOST"] ?? "127.0.0.1", port: port,
                             script: env["ROOST_TEST_DOVECOT_SCRIPT"] ?? TestServer.packageRoot + "/contrib/scripts/dovecot-test-server",
                             directory: directory, logFile: env["ROOST_TEST_DOVECOT_LOG"] ?? directory + "/dovecot.log")
    }

    /// Adds a user (a fresh name unless given) whose INBOX is the Maildir at `maildir` (an absolute path; it need not
    /// exist yet) and returns an IMAP client logged in as them.
    public func addUser(maildir: String, name: String = "u" + UUID().uuidString.prefix(8).lowercased()) throws -> IMAPProbe {
        let password = "pw-" + UUID().uuidString.prefix(12)
        var environment = ProcessInfo.processInfo.environment
        environment["ROOST_DOVECOT_DIR"] = directory
        let result = try RoostBinary.runProgram(script, ["adduser", name, password, maildir], environment: environment)
        guard result.status == 0 else { throw ScriptFailed(command: "dovecot-test-server adduser", output: result.stdout + result.stderr) }
        return IMAPProbe(server: self, user: name, password: password)
    }

    /// The end of Dovecot's log, for a failure's message.
    public var logTail: String { String(((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "").suffix(3000)) }
}

/// An IMAP client logged in to the suite's Dovecot as one user: each call is one session of Python's imaplib
/// (contrib/scripts/imap-probe.py), run to completion with a deadline. Blocking: call from `offPool` in async code.
///
/// `search` is a list of IMAP SEARCH keys, as a client sends them: `["ALL"]`, `["SUBJECT", "Chat with"]`,
/// `["BODY", "明天"]` (only the last key may hold non-ASCII text: it goes as a UTF-8 literal with CHARSET UTF-8).
public struct IMAPProbe: Sendable {
    public let server: DovecotServer
    public let user: String
    public let password: String

    static let script = TestServer.packageRoot + "/contrib/scripts/imap-probe.py"

    /// LIST: the user's folders (INBOX, and a Maildir's sub-folders as `a/b`).
    public func folders() throws -> [String] {
        try run(["list"], as: Folders.self).folders.map(\.name)
    }

    /// SELECT `mailbox`, SEARCH, FETCH each message found (flags, headers, the text part, attachments).
    public func fetch(_ search: [String] = ["ALL"], mailbox: String = "INBOX") throws -> [IMAPMessage] {
        try run(["fetch", "--mailbox", mailbox, "--search", Self.json(search)], as: Fetched.self).messages
    }

    /// STORE +FLAGS / -FLAGS (e.g. `\Seen`, `\Flagged`) on the messages `search` finds; returns them as fetched after.
    public func store(_ search: [String], add: [String] = [], remove: [String] = [], mailbox: String = "INBOX") throws -> [IMAPMessage] {
        var arguments = ["store", "--mailbox", mailbox, "--search", Self.json(search)]
        if !add.isEmpty { arguments += ["--add"] + add }
        if !remove.isEmpty { arguments += ["--remove"] + remove }
        return try run(arguments, as: Fetched.self).messages
    }

    /// A session that SELECTs `mailbox` now and keeps asking the server (NOOP in the selected session, as a client
    /// in IDLE is told) until `search` finds `count` messages, or `timeout` passes. Returns once the mailbox is
    /// selected, so whatever the test does next happens to an already open session.
    public func watch(for search: [String], count: Int = 1, mailbox: String = "INBOX", timeout: TimeInterval = 30) throws -> IMAPWatch {
        let process = try RoostBinary.startProgram("/usr/bin/python3", [Self.script] + connection
            + ["wait", "--mailbox", mailbox, "--search", Self.json(search), "--count", String(count), "--timeout", String(timeout)])
        try process.waitForLog("\"event\": \"selected\"", timeout: 30)
        return IMAPWatch(process: process, timeout: timeout, server: server)
    }

    var connection: [String] {
        ["--host", server.host, "--port", String(server.port), "--user", user, "--password", password]
    }

    private func run<T: Decodable>(_ arguments: [String], as type: T.Type) throws -> T {
        let result = try RoostBinary.runProgram("/usr/bin/python3", [Self.script] + connection + arguments, timeout: 60)
        return try Self.decode(result.stdout + result.stderr, status: result.status, server: server)
    }

    static func decode<T: Decodable>(_ output: String, status: Int32, server: DovecotServer) throws -> T {
        let last = output.split(separator: "\n").last.map(String.init) ?? ""
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard status == 0, let value = try? decoder.decode(T.self, from: Data(last.utf8)) else {
            throw IMAPFailed(output: output, dovecotLog: server.logTail)
        }
        return value
    }

    static func json(_ search: [String]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: search), as: UTF8.self)
    }

    struct Folders: Decodable { struct Folder: Decodable { let name: String }; let folders: [Folder] }
    struct Fetched: Decodable { let messages: [IMAPMessage] }
}

/// A waiting session of `IMAPProbe.watch`.
public final class IMAPWatch: @unchecked Sendable {
    let process: RunningRoost
    let timeout: TimeInterval
    let server: DovecotServer

    init(process: RunningRoost, timeout: TimeInterval, server: DovecotServer) {
        self.process = process
        self.timeout = timeout
        self.server = server
    }

    /// Waits for the session to end: the messages its search found, fetched in that same session; throws (with the
    /// probe's and Dovecot's words) when they did not appear in time.
    public func messages() throws -> [IMAPMessage] {
        process.waitForExit(timeout: timeout + 30)
        let (status, output) = process.stop(signal: SIGKILL)
        return (try IMAPProbe.decode(output, status: status, server: server) as IMAPProbe.Fetched).messages
    }
}

/// One message as an IMAP client fetched it; headers decoded as a mail client shows them (RFC 2047).
public struct IMAPMessage: Decodable, Sendable {
    public struct Attachment: Decodable, Sendable {
        public let name: String?
        public let type: String
        public let size: Int
        /// Lowercase hex SHA-256 of the decoded bytes.
        public let sha256: String
    }
    public let uid: Int
    public let flags: [String]
    /// RFC822.SIZE: the size Dovecot reports (CRLF line ends).
    public let size: Int
    /// INTERNALDATE as the server gives it (`06-Dec-2026 23:07:44 +0000`): for a Maildir, the file's modification time;
    /// the arrival time mail apps sort and date their lists by.
    public let internalDate: String
    public let from: String?
    public let to: String?
    public let subject: String?
    /// The Date header as written.
    public let date: String?
    public let messageId: String?
    public let inReplyTo: String?
    public let references: String?
    /// The text/plain part, decoded (lines end in CRLF, as IMAP serves them).
    public let body: String?
    public let attachments: [Attachment]
    /// What Python's email parser found wrong in the message (empty for a well-formed one).
    public let defects: [String]
}

public struct IMAPFailed: Error, CustomStringConvertible {
    public let output: String
    public let dovecotLog: String
    public var description: String { "imap-probe failed:\n\(output.suffix(4000))\nDovecot's log ends:\n\(dovecotLog)" }
}
