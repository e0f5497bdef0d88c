public import Foundation
public import RoostXMPP

/// The XMPP server started by `contrib/scripts/prosody-test-server` or `contrib/scripts/ejabberd-test-server`,
/// as its env file describes it.
///
/// Tests find it through the environment (`ROOST_TEST_*`, exported by `contrib/scripts/test`) or, when run
/// by hand after `prosody-test-server start`, through the env file in `ROOST_TEST_SERVER_DIR`,
/// `ROOST_PROSODY_DIR` or `contrib/prosody/run/`.
public struct TestServer: Sendable {
    public enum Kind: String, Sendable {
        case prosody, ejabberd

        /// The script that starts and stops a server of this kind, and the variable naming its run directory.
        var script: String { TestServer.packageRoot + "/contrib/scripts/\(rawValue)-test-server" }
        var directoryVariable: String { self == .prosody ? "ROOST_PROSODY_DIR" : "ROOST_EJABBERD_DIR" }
        var resumeTimeoutVariable: String { self == .prosody ? "ROOST_PROSODY_SMACKS_HIBERNATION" : "ROOST_EJABBERD_RESUME_TIMEOUT" }
    }

    public let kind: Kind
    public let domain: String
    public let host: String
    public let port: UInt16
    public let directTLSPort: UInt16?
    public let caFile: String
    /// An executable running prosodyctl / ejabberdctl for this server (`register USER HOST PASSWORD` works on both).
    public let serverctl: String?
    public let runDirectory: String?
    /// The server's log file.
    public let logFile: String?
    /// A host of this server with TLS capped at 1.2, where SCRAM-*-PLUS is offered with tls-unique.
    public let tls12Domain: String?
    /// A host whose accounts store SCRAM-SHA-256 (Prosody) or SCRAM-SHA-512 (ejabberd) keys, TLS capped at 1.2.
    public let sha256Domain: String?
    public let sha512Domain: String?
    /// A host served with `domain`'s certificate, which does not name it.
    public let wrongHost: String?
    /// The server's cap on offline messages per account (ejabberd; nil when effectively unlimited).
    public let offlineLimit: Int?

    public static let shared: TestServer? = load()

    /// True when the suite must not skip end-to-end tests (CI): a missing server is then a failure.
    public static var isRequired: Bool { TestRequirement.requireAll }
    public static var isAvailable: Bool { TestRequirement.enabled([.server]) }

    public static var packageRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    static func load(directory: String? = nil) -> TestServer? {
        var env = ProcessInfo.processInfo.environment
        if directory != nil { env = [:] }
        if env["ROOST_TEST_PORT"] == nil {
            let dir = directory ?? env["ROOST_TEST_SERVER_DIR"] ?? env["ROOST_PROSODY_DIR"] ?? packageRoot + "/contrib/prosody/run"
            if let text = try? String(contentsOfFile: dir + "/env", encoding: .utf8) {
                for line in text.split(separator: "\n") {
                    var l = line.trimmingCharacters(in: .whitespaces)
                    if l.hasPrefix("export ") { l.removeFirst(7) }
                    guard let eq = l.firstIndex(of: "=") else { continue }
                    var value = String(l[l.index(after: eq)...])
                    if value.count >= 2, (value.hasPrefix("'") && value.hasSuffix("'")) || (value.hasPrefix("\"") && value.hasSuffix("\"")) {
                        value = String(value.dropFirst().dropLast())
                    }
                    env[String(l[..<eq])] = value
                }
            }
        }
        guard let portText = env["ROOST_TEST_PORT"], let port = UInt16(portText), let ca = env["ROOST_TEST_CA_FILE"] else { return nil }
        return TestServer(kind: env["ROOST_TEST_SERVER_KIND"].flatMap(Kind.init(rawValue:)) ?? .prosody,
                          domain: env["ROOST_TEST_DOMAIN"] ?? "roost.test", host: env["ROOST_TEST_HOST"] ?? "127.0.0.1", port: port,
                          directTLSPort: env["ROOST_TEST_DIRECT_TLS_PORT"].flatMap { UInt16($0) }, caFile: ca,
                          serverctl: env["ROOST_TEST_SERVERCTL"], runDirectory: directory ?? env["ROOST_TEST_SERVER_DIR"],
                          logFile: env["ROOST_TEST_SERVER_LOG"],
                          tls12Domain: env["ROOST_TEST_TLS12_DOMAIN"], sha256Domain: env["ROOST_TEST_SHA256_DOMAIN"],
                          sha512Domain: env["ROOST_TEST_SHA512_DOMAIN"], wrongHost: env["ROOST_TEST_WRONG_HOST"],
                          offlineLimit: env["ROOST_TEST_OFFLINE_MAX"].flatMap { Int($0) })
    }

    public static func require() throws -> TestServer {
        guard let shared else { throw TestServerMissing() }
        return shared
    }

    /// A fresh, unique account name on the test domain (each test registers its own, so tests run in parallel).
    public func uniqueJID(_ prefix: String = "t", domain: String? = nil) -> JID {
        let suffix = UUID().uuidString.lowercased().prefix(12)
        return try! JID("\(prefix)-\(suffix)@\(domain ?? self.domain)")
    }

    public func configuration(for jid: JID, password: String, resource: String = "roost", tls: TLSMode = .starttls) -> ClientConfiguration {
        ClientConfiguration(jid: jid, password: password, host: host, port: tls == .direct ? (directTLSPort ?? port) : port, tlsMode: tls,
                            caFile: caFile, resource: resource, connectTimeout: .seconds(10), requestTimeout: .seconds(20),
                            keepaliveInterval: .seconds(30))
    }

    /// Registers a new account in-band (on `domain`, default the main one) and returns a connected client for it.
    public func registeredClient(_ prefix: String = "t", password: String = "pw-\(UUID().uuidString.prefix(8))",
                                 resource: String = "roost", domain: String? = nil) async throws -> (XMPPClient, JID, String) {
        let jid = uniqueJID(prefix, domain: domain)
        let client = XMPPClient(configuration: configuration(for: jid, password: password, resource: resource))
        _ = try await client.registerAccount()
        return (client, jid, password)
    }

    /// Fresh accounts for a test's parties (Roost's own and its peers'), registered in-band; no session is kept.
    public func registeredAccounts(_ prefixes: [String]) async throws -> [(jid: JID, password: String)] {
        var accounts: [(jid: JID, password: String)] = []
        for prefix in prefixes {
            let (client, jid, password) = try await registeredClient(prefix)
            await client.disconnect()
            accounts.append((jid, password))
        }
        return accounts
    }
}

public struct TestServerMissing: Error, CustomStringConvertible {
    public var description: String {
        "no test XMPP server: run the suite with contrib/scripts/test, or start one with `contrib/scripts/prosody-test-server start`"
    }
}

extension TestServer {
    /// Sets the account's password on the server, as its admin would, and ends the account's sessions, so its clients
    /// must log in again: Prosody closes them itself when a password changes (`<reset/>`, "Password changed"); ejabberd
    /// is told to (`kick_user`). Through the server's control program (prosodyctl shell, ejabberdctl with
    /// mod_admin_extra).
    public func changePassword(of jid: JID, to password: String) throws {
        guard let ctl = serverctl else { throw ServerCommandFailed(command: "serverctl", output: "ROOST_TEST_SERVERCTL is not set") }
        let user = jid.localpart ?? "", host = jid.domain
        let commands: [[String]] = switch kind {
        case .prosody: [["shell", "user:password(\"\(jid.bare)\", \"\(password)\")"]]
        case .ejabberd: [["change_password", user, host, password], ["kick_user", user, host]]
        }
        for arguments in commands {
            let result = try RoostBinary.runProgram(ctl, arguments, timeout: 60)
            // prosodyctl shell exits 0 with "OK: …" or 1 with the error; ejabberdctl exits non-zero on failure.
            guard result.status == 0 else {
                throw ServerCommandFailed(command: arguments.first ?? "", output: result.stdout + result.stderr)
            }
        }
    }
}

public struct ServerCommandFailed: Error, CustomStringConvertible {
    public let command: String
    public let output: String
    public var description: String { "the server's control program failed (\(command)): \(output.suffix(2000))" }
}
