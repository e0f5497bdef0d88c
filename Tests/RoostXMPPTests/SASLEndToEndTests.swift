import Foundation
import Testing
import RoostTestSupport
@testable import RoostXMPP

/// Every SASL mechanism Roost offers, against the real server: Prosody 0.12 for SCRAM-SHA-1, SCRAM-SHA-256 and
/// their -PLUS variants, ejabberd 23.01 for SCRAM-SHA-1 and SCRAM-SHA-512 and theirs (contrib/scripts/test runs
/// this suite against both), PLAIN on each. Both servers bind -PLUS to tls-unique only, and only on TLS 1.2
/// hosts; neither implements tls-exporter, tls-server-end-point or XEP-0440 (`SCRAMPlusVerifierTests` below).
@Suite("End to end: SASL mechanisms and channel binding", .requires(.server))
struct SASLEndToEndTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    struct Case: CustomStringConvertible {
        let domain: String
        let allowed: [String]?
        let mechanism: String
        let binding: String?
        var description: String { "\(domain) allowing \(allowed?.joined(separator: ",") ?? "anything") → \(mechanism) \(binding ?? "unbound")" }
    }

    /// What each server must negotiate. The main host runs TLS 1.3: Prosody then offers no -PLUS, ejabberd
    /// offers SCRAM-SHA-1-PLUS anyway (its default offer) and Roost, which cannot bind there with tls-unique,
    /// logs in with SCRAM-SHA-1 ("n" flag) rather than failing.
    func cases() throws -> [Case] {
        let main = server.domain
        let tls12 = try #require(server.tls12Domain, "the server's env names no TLS 1.2 host")
        var cases = [
            Case(domain: main, allowed: nil, mechanism: "SCRAM-SHA-1", binding: nil),
            Case(domain: main, allowed: ["PLAIN"], mechanism: "PLAIN", binding: nil),
            Case(domain: tls12, allowed: nil, mechanism: "SCRAM-SHA-1-PLUS", binding: "tls-unique"),
            Case(domain: tls12, allowed: ["SCRAM-SHA-1"], mechanism: "SCRAM-SHA-1", binding: nil),
        ]
        switch server.kind {
        case .prosody:
            let sha256 = try #require(server.sha256Domain, "Prosody's env names no SHA-256 host")
            cases += [
                Case(domain: sha256, allowed: nil, mechanism: "SCRAM-SHA-256-PLUS", binding: "tls-unique"),
                Case(domain: sha256, allowed: ["SCRAM-SHA-256"], mechanism: "SCRAM-SHA-256", binding: nil),
                Case(domain: sha256, allowed: ["PLAIN"], mechanism: "PLAIN", binding: nil),
            ]
        case .ejabberd:
            let sha512 = try #require(server.sha512Domain, "ejabberd's env names no SHA-512 host")
            cases += [
                Case(domain: sha512, allowed: nil, mechanism: "SCRAM-SHA-512-PLUS", binding: "tls-unique"),
                Case(domain: sha512, allowed: ["SCRAM-SHA-512"], mechanism: "SCRAM-SHA-512", binding: nil),
                Case(domain: sha512, allowed: ["PLAIN"], mechanism: "PLAIN", binding: nil),
            ]
        }
        return cases
    }

    @Test func everyMechanismLogsInWithTheExpectedBinding() async throws {
        for c in try cases() {
            let (registrar, jid, password) = try await server.registeredClient("sasl", domain: c.domain)
            await registrar.disconnect()
            var config = server.configuration(for: jid, password: password)
            config.saslMechanisms = c.allowed
            let client = XMPPClient(configuration: config)
            let info = try await client.connect()
            #expect(info.mechanism == c.mechanism, "\(c)")
            #expect(info.channelBinding == c.binding, "\(c)")
            #expect(info.boundJID.bare == jid, "\(c)")
            await client.disconnect()
        }
    }

    @Test func wrongPasswordWithAGuessedBindingFailsBothExchangesAndNamesNoSecret() async throws {
        // On the TLS 1.2 host Roost guesses tls-unique (no XEP-0440), so a refused -PLUS exchange is followed by
        // one without binding on the same stream; with a wrong password that one fails too, and that is final.
        let tls12 = try #require(server.tls12Domain)
        let (registrar, jid, _) = try await server.registeredClient("saslbad", domain: tls12)
        await registrar.disconnect()
        let client = XMPPClient(configuration: server.configuration(for: jid, password: "wrong-password-xyz"))
        do {
            _ = try await client.connect()
            Issue.record("logged in with a wrong password")
        } catch {
            #expect(error.isAuthenticationFailure, "\(error)")
            guard case .authenticationFailed(let condition, _) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(condition == "not-authorized")
            #expect(!error.description.contains("wrong-password-xyz"))
        }
        // ejabberd logs each refused exchange: the -PLUS one, then the one without binding on the same stream.
        // (Prosody logs none at its info level; there the answer above — a SASL failure, not a stream error
        // for an unexpected second <auth/> — is what shows the second exchange was accepted.)
        if server.kind == .ejabberd, let logFile = server.logFile {
            let expected = ["Failed c2s SCRAM-SHA-1-PLUS authentication for \(jid)", "Failed c2s SCRAM-SHA-1 authentication for \(jid)"]
            var text = ""
            try? await waitUntil("both failures in the server log", timeout: .seconds(10)) {
                text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
                return expected.allSatisfy(text.contains)
            }
            for line in expected { #expect(text.contains(line), "not in the server log: \(line)") }
        }
    }
}

/// tls-exporter, tls-server-end-point and XEP-0440, which neither Debian 12 server implements, against an
/// implementation independent of Roost's: contrib/scripts/scram-plus-server.py (pyOpenSSL for TLS and the
/// binding data, Python's hashlib/hmac for SCRAM). It checks the client's binding data and proof and reports
/// what it verified; the test checks that Roost chose the binding the server listed and says so.
@Suite("End to end: SCRAM-PLUS bindings and XEP-0440 against an independent verifier",
       .requires(.tool("/usr/bin/python3"), .tool(TestServer.packageRoot + "/contrib/scripts/make-certs")))
struct SCRAMPlusVerifierTests {
    struct Case: CustomStringConvertible {
        let tls: String
        let mechanisms: [String]
        let bindings: [String]
        let mechanism: String
        let binding: String?
        var description: String { "TLS \(tls), \(mechanisms.joined(separator: ",")) listing [\(bindings.joined(separator: ","))]" }
    }

    static let cases = [
        Case(tls: "1.3", mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], bindings: ["tls-server-end-point", "tls-exporter"],
             mechanism: "SCRAM-SHA-256-PLUS", binding: "tls-exporter"),
        Case(tls: "1.3", mechanisms: ["SCRAM-SHA-512-PLUS", "SCRAM-SHA-512"], bindings: ["tls-server-end-point"],
             mechanism: "SCRAM-SHA-512-PLUS", binding: "tls-server-end-point"),
        Case(tls: "1.2", mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], bindings: ["tls-server-end-point", "tls-unique"],
             mechanism: "SCRAM-SHA-1-PLUS", binding: "tls-unique"),
        Case(tls: "1.2", mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], bindings: ["tls-server-end-point"],
             mechanism: "SCRAM-SHA-256-PLUS", binding: "tls-server-end-point"),
        // The server lists only a type TLS 1.3 lacks: SCRAM without binding ("n"), which the server accepts.
        Case(tls: "1.3", mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], bindings: ["tls-unique"],
             mechanism: "SCRAM-SHA-256", binding: nil),
    ]

    @Test(arguments: cases) func roostBindsAsTheServerListed(_ c: Case) async throws {
        try TestRequirement.check(.tool("/usr/bin/python3"))
        let dir = try TestDirectory("roost-scram-plus")
        let certs = try dir.makeCertificates(domain: "roost.test")
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let server = try RoostBinary.startProgram("/usr/bin/python3", [
            TestServer.packageRoot + "/contrib/scripts/scram-plus-server.py", "--cert", certs + "/server.crt", "--key", certs + "/server.key",
            "--domain", "roost.test", "--user", "verifier", "--tls", c.tls,
            "--mechanisms", c.mechanisms.joined(separator: ","), "--bindings", c.bindings.joined(separator: ","),
        ], environment: ["SCRAM_PLUS_PASSWORD": password])
        defer { server.stop(signal: SIGKILL, timeout: 5) }
        func events() -> [[String: Any]] {
            server.stderrSoFar.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        var port: UInt16 = 0
        try await waitUntil("the verifier to listen") {
            port = (events().first { $0["event"] as? String == "listening" }?["port"] as? Int).map(UInt16.init) ?? 0
            return port != 0 || !server.isRunning
        }
        try #require(port != 0, "the verifier did not start:\n\(server.stderrSoFar)")
        let config = ClientConfiguration(jid: try JID("verifier@roost.test"), password: password, host: "127.0.0.1", port: port,
                                         caFile: certs + "/ca.crt", resource: "roost", connectTimeout: .seconds(10),
                                         requestTimeout: .seconds(5), keepaliveInterval: .seconds(30))
        let client = XMPPClient(configuration: config)
        let info = try await client.connect()
        #expect(info.mechanism == c.mechanism, "\(c)")
        #expect(info.channelBinding == c.binding, "\(c)")
        await client.disconnect()
        // The verifier's side: exactly one exchange, and it checked the binding Roost reported.
        let auths = events().filter { $0["event"] as? String == "auth" }
        #expect(auths.count == 1, "\(c): \(auths)")
        #expect(auths.first?["ok"] as? Bool == true, "\(c): \(auths)")
        #expect(auths.first?["binding"] as? String == c.binding, "\(c): \(auths)")
        #expect(auths.first?["tls"] as? String == "TLSv\(c.tls)", "\(c): \(auths)")
    }
}
