public import Foundation
public import RoostXMPP

/// The Prosody instance started by `contrib/scripts/prosody-test-server`, as its env file describes it.
///
/// Tests find it through the environment (`ROOST_TEST_*`, exported by `contrib/scripts/test`) or, when run
/// by hand after `prosody-test-server start`, through `contrib/prosody/run/env`.
public struct TestServer: Sendable {
    public let domain: String
    public let host: String
    public let port: UInt16
    public let directTLSPort: UInt16?
    public let caFile: String
    public let prosodyctl: String?
    public let runDirectory: String?

    public static let shared: TestServer? = load()

    /// True when the suite must not skip end-to-end tests (CI): a missing server is then a failure.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["ROOST_TEST_REQUIRE_SERVER"] == "1" }
    public static var isAvailable: Bool { shared != nil || isRequired }

    public static var packageRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    static func load(directory: String? = nil) -> TestServer? {
        var env = ProcessInfo.processInfo.environment
        if directory != nil { env = [:] }
        if env["ROOST_TEST_PORT"] == nil {
            let dir = directory ?? env["ROOST_PROSODY_DIR"] ?? packageRoot + "/contrib/prosody/run"
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
        return TestServer(domain: env["ROOST_TEST_DOMAIN"] ?? "roost.test", host: env["ROOST_TEST_HOST"] ?? "127.0.0.1", port: port,
                          directTLSPort: env["ROOST_TEST_DIRECT_TLS_PORT"].flatMap { UInt16($0) }, caFile: ca,
                          prosodyctl: env["ROOST_TEST_PROSODYCTL"], runDirectory: directory ?? env["ROOST_PROSODY_DIR"])
    }

    public static func require() throws -> TestServer {
        guard let shared else { throw TestServerMissing() }
        return shared
    }

    /// A fresh, unique account name on the test domain (each test registers its own, so tests run in parallel).
    public func uniqueJID(_ prefix: String = "t") -> JID {
        let suffix = UUID().uuidString.lowercased().prefix(12)
        return try! JID("\(prefix)-\(suffix)@\(domain)")
    }

    public func configuration(for jid: JID, password: String, resource: String = "roost", tls: TLSMode = .starttls) -> ClientConfiguration {
        ClientConfiguration(jid: jid, password: password, host: host, port: tls == .direct ? (directTLSPort ?? port) : port, tlsMode: tls,
                            caFile: caFile, resource: resource, connectTimeout: .seconds(10), requestTimeout: .seconds(20),
                            keepaliveInterval: .seconds(30))
    }

    /// Registers a new account in-band and returns a connected client for it.
    public func registeredClient(_ prefix: String = "t", password: String = "pw-\(UUID().uuidString.prefix(8))",
                                 resource: String = "roost") async throws -> (XMPPClient, JID, String) {
        let jid = uniqueJID(prefix)
        let client = XMPPClient(configuration: configuration(for: jid, password: password, resource: resource))
        _ = try await client.registerAccount()
        return (client, jid, password)
    }
}

public struct TestServerMissing: Error, CustomStringConvertible {
    public var description: String {
        "no test Prosody: run the suite with contrib/scripts/test, or start one with `contrib/scripts/prosody-test-server start`"
    }
}
