internal import COpenSSL
import Foundation
import RoostXMPP
import Testing

@Suite("TLS engine: certificate verification")
struct TLSVerificationTests {
    let authority = TLSTestCertificate.authority()
    let day = TLSTestCertificate.day

    func leaf(_ names: String? = "DNS:example.test", commonName: String = "example.test",
              issuer: TLSTestCertificate?? = nil, validFrom: Int? = nil, validUntil: Int? = nil) -> TLSTestCertificate {
        TLSTestCertificate.server(commonName: commonName, subjectAltName: names, issuer: issuer ?? authority,
                                  validFrom: validFrom ?? -day, validUntil: validUntil ?? 30 * day)
    }

    /// Handshakes a fresh client against `certificate`; returns the client's error (nil on success)
    /// and whether the server finished its side (it must not, when the client refuses).
    func connect(to certificate: TLSTestCertificate, serverName: String = "example.test",
                 pin: String? = nil, trustAuthority: Bool = true) throws -> (error: TLSError?, serverDone: Bool, engine: TLSEngine) {
        let caFile = trustAuthority ? try authority.writePEM() : nil
        defer { if let caFile { try? FileManager.default.removeItem(atPath: caFile) } }
        let engine = try TLSEngine(configuration: TLSConfiguration(serverName: serverName, caFile: caFile,
                                                                   pinnedSHA256: pin, useSystemTrustStore: false))
        let server = TLSTestServer(certificate: certificate)
        do {
            try TLSTestPump.handshake(engine, server)
            return (nil, server.handshakeComplete, engine)
        } catch {
            return (error, server.handshakeComplete, engine)
        }
    }

    func fingerprint(_ certificate: TLSTestCertificate) -> String {
        TLSTestPump.colonHex(TLSTestPump.digest(certificate.der, "SHA256"))
    }

    @Test func validCertificateIsAccepted() throws {
        let result = try connect(to: leaf())
        #expect(result.error == nil)
        #expect(result.serverDone)
    }

    @Test func expiredCertificateIsRefusedBeforeTheClientFinishes() throws {
        let certificate = leaf(validFrom: -10 * day, validUntil: -day)
        let result = try connect(to: certificate)
        guard case let .certificateExpired(subject, notAfter, shownFingerprint)? = result.error else {
            Issue.record("expected certificateExpired, got \(String(describing: result.error))")
            return
        }
        #expect(subject.contains("CN=example.test"))
        #expect(!notAfter.isEmpty && notAfter != "?")
        #expect(shownFingerprint == fingerprint(certificate))
        #expect(!result.serverDone)
        // The failure sticks: no later call can slip application data through.
        #expect(throws: TLSError.self) { try result.engine.doHandshake() }
        #expect(throws: TLSError.self) { try result.engine.writeApplicationData([0x3C]) }
    }

    @Test func notYetValidCertificateIsRefused() throws {
        let result = try connect(to: leaf(validFrom: 2 * day, validUntil: 30 * day))
        guard case .certificateNotYetValid? = result.error else {
            Issue.record("expected certificateNotYetValid, got \(String(describing: result.error))")
            return
        }
        #expect(!result.serverDone)
    }

    @Test func wrongHostIsRefused() throws {
        let certificate = leaf("DNS:other.test,DNS:www.other.test", commonName: "other.test")
        let result = try connect(to: certificate)
        #expect(result.error == .hostnameMismatch(expected: "example.test", presented: ["other.test", "www.other.test"],
                                                  fingerprint: fingerprint(certificate)))
        #expect(!result.serverDone)
    }

    @Test func selfSignedIsUntrustedAndTheMessageSaysHowToTrustIt() throws {
        let certificate = leaf(issuer: .some(nil))
        let result = try connect(to: certificate)
        guard case let .untrusted(_, _, reason, shownFingerprint)? = result.error else {
            Issue.record("expected untrusted, got \(String(describing: result.error))")
            return
        }
        #expect(reason.contains("self-signed"))
        #expect(shownFingerprint == fingerprint(certificate))
        let message = result.error?.description ?? ""
        #expect(message.contains("ca_file"))
        #expect(message.contains("fingerprint = \(fingerprint(certificate))"))
        #expect(!result.serverDone)
    }

    @Test func unknownAuthorityIsUntrusted() throws {
        let stranger = TLSTestCertificate.authority(name: "Somebody Else CA")
        let result = try connect(to: leaf(issuer: stranger))
        guard case let .untrusted(_, issuer, reason, _)? = result.error else {
            Issue.record("expected untrusted, got \(String(describing: result.error))")
            return
        }
        #expect(issuer.contains("Somebody Else CA"))
        #expect(reason.contains("unknown certificate authority"))
    }

    @Test func matchingPinAcceptsUntrustedChainAndWrongName() throws {
        let certificate = leaf("DNS:other.test", issuer: .some(nil))
        let pin = fingerprint(certificate).lowercased()
        let result = try connect(to: certificate, pin: pin, trustAuthority: false)
        #expect(result.error == nil)
        #expect(result.serverDone)
        #expect(result.engine.peerCertificateSHA256 == fingerprint(certificate))
    }

    @Test func pinMismatchFailsEvenForAValidCertificate() throws {
        let certificate = leaf()
        let wrongPin = String(repeating: "ab", count: 32)
        let result = try connect(to: certificate, pin: wrongPin)
        #expect(result.error == .fingerprintMismatch(expected: TLSTestPump.colonHex([UInt8](repeating: 0xAB, count: 32)),
                                                     actual: fingerprint(certificate)))
        #expect(!result.serverDone)
    }

    @Test func malformedPinIsAConfigurationError() {
        #expect(throws: TLSError.self) {
            try TLSEngine(configuration: TLSConfiguration(serverName: "example.test", pinnedSHA256: "abc"))
        }
    }

    @Test func unreadableCAFileIsAConfigurationError() {
        #expect(throws: TLSError.self) {
            try TLSEngine(configuration: TLSConfiguration(serverName: "example.test", caFile: "/nonexistent/ca.pem"))
        }
    }

    @Test func srvIDAloneProvesTheDomain() throws {
        let certificate = leaf("otherName:1.3.6.1.5.5.7.8.7;IA5STRING:_xmpp-client.example.test", commonName: "xmpp host")
        #expect(try connect(to: certificate).error == nil)
    }

    @Test func srvIDForAnotherDomainDoesNot() throws {
        let certificate = leaf("otherName:1.3.6.1.5.5.7.8.7;IA5STRING:_xmpp-client.other.test", commonName: "xmpp host")
        guard case .hostnameMismatch? = try connect(to: certificate).error else {
            Issue.record("expected hostnameMismatch")
            return
        }
    }

    @Test func commonNameCountsOnlyWithoutSubjectAltNames() throws {
        #expect(try connect(to: leaf(nil, commonName: "example.test")).error == nil)
        guard case .hostnameMismatch? = try connect(to: leaf("DNS:other.test", commonName: "example.test")).error else {
            Issue.record("a CN must be ignored when the certificate has DNS names")
            return
        }
    }

    @Test func wildcardsCoverOneLabelButPartialWildcardsAreRefused() throws {
        #expect(try connect(to: leaf("DNS:*.example.test"), serverName: "chat.example.test").error == nil)
        guard case .hostnameMismatch? = try connect(to: leaf("DNS:ch*.example.test"), serverName: "chat.example.test").error else {
            Issue.record("a partial wildcard must not match")
            return
        }
    }

    @Test func expiredButPinnedIsAccepted() throws {
        let certificate = leaf(validFrom: -10 * day, validUntil: -day)
        let result = try connect(to: certificate, pin: "sha256:" + fingerprint(certificate))
        #expect(result.error == nil)
    }
}
