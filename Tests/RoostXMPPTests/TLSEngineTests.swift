internal import COpenSSL
import Foundation
@testable import RoostXMPP
import Testing

@Suite("TLS engine: successful sessions")
struct TLSEngineTests {
    let authority = TLSTestCertificate.authority()

    func trustedServer(digest: String = "SHA256", maxVersion: Int32? = nil, extendedMasterSecret: Bool = true) -> TLSTestServer {
        let leaf = TLSTestCertificate.server(commonName: "localhost", subjectAltName: "DNS:localhost,DNS:example.test",
                                             issuer: authority, digest: digest)
        return TLSTestServer(certificate: leaf, maxVersion: maxVersion, extendedMasterSecret: extendedMasterSecret)
    }

    func client(alpn: [String] = []) throws -> TLSEngine {
        let caFile = try authority.writePEM()
        defer { try? FileManager.default.removeItem(atPath: caFile) }
        return try TLSEngine(configuration: TLSConfiguration(serverName: "example.test", caFile: caFile, alpn: alpn))
    }

    @Test func tls13HandshakeAndDataBothWays() throws {
        let server = trustedServer()
        let engine = try client()
        #expect(try engine.doHandshake() == .incomplete)
        try TLSTestPump.handshake(engine, server)

        #expect(try engine.doHandshake() == .complete)
        #expect(engine.negotiatedProtocol == "TLSv1.3")
        #expect(engine.isTLS13)
        #expect(try TLSTestPump.clientToServer("<stream:stream>", engine, server) == "<stream:stream>")
        #expect(try TLSTestPump.serverToClient("<features/>", engine, server) == "<features/>")
        let large = String(repeating: "x", count: 100_000)
        #expect(try TLSTestPump.serverToClient(large, engine, server) == large)
        #expect(try TLSTestPump.clientToServer(large, engine, server) == large)
    }

    @Test func exporterChannelBindingMatchesServer() throws {
        let server = trustedServer()
        let engine = try client()
        #expect(engine.exporterChannelBinding() == nil)
        try TLSTestPump.handshake(engine, server)

        let binding = try #require(engine.exporterChannelBinding())
        #expect(binding.count == 32)
        #expect(binding == server.exporterChannelBinding())
    }

    @Test func uniqueChannelBindingIsTheClientFinishedOnTLS12() throws {
        let server = trustedServer(maxVersion: TLS1_2_VERSION)
        let engine = try client()
        #expect(engine.uniqueChannelBinding() == nil)
        try TLSTestPump.handshake(engine, server)

        let binding = try #require(engine.uniqueChannelBinding())
        #expect(binding.count == 12)
        #expect(binding == server.clientFinished())
    }

    @Test func uniqueChannelBindingIsUndefinedOnTLS13AndWithoutExtendedMasterSecret() throws {
        let tls13 = trustedServer()
        let engine13 = try client()
        try TLSTestPump.handshake(engine13, tls13)
        #expect(engine13.isTLS13)
        #expect(engine13.uniqueChannelBinding() == nil)

        let old = trustedServer(maxVersion: TLS1_2_VERSION, extendedMasterSecret: false)
        let engine = try client()
        try TLSTestPump.handshake(engine, old)
        #expect(engine.negotiatedProtocol == "TLSv1.2")
        #expect(engine.uniqueChannelBinding() == nil)
    }

    @Test func serverEndPointIsSHA256OfLeafForSHA256Signature() throws {
        let server = trustedServer()
        let engine = try client()
        try TLSTestPump.handshake(engine, server)

        let expected = TLSTestPump.digest(server.certificate.der, "SHA256")
        #expect(engine.serverEndPointChannelBinding() == expected)
        #expect(engine.peerCertificateSHA256 == TLSTestPump.colonHex(expected))
    }

    @Test func serverEndPointFollowsSignatureHash() throws {
        let server = trustedServer(digest: "SHA384")
        let engine = try client()
        try TLSTestPump.handshake(engine, server)

        let binding = try #require(engine.serverEndPointChannelBinding())
        #expect(binding.count == 48)
        #expect(binding == TLSTestPump.digest(server.certificate.der, "SHA384"))
    }

    @Test func tls12HasNoExporterBindingButHasServerEndPoint() throws {
        let server = trustedServer(maxVersion: TLS1_2_VERSION)
        let engine = try client()
        try TLSTestPump.handshake(engine, server)

        #expect(engine.negotiatedProtocol == "TLSv1.2")
        #expect(!engine.isTLS13)
        #expect(engine.exporterChannelBinding() == nil)
        #expect(engine.serverEndPointChannelBinding() == TLSTestPump.digest(server.certificate.der, "SHA256"))
        #expect(try TLSTestPump.clientToServer("ping", engine, server) == "ping")
    }

    @Test func alpnSelectsXMPPClient() throws {
        let server = trustedServer()
        let engine = try client(alpn: ["xmpp-client"])
        try TLSTestPump.handshake(engine, server)
        #expect(engine.alpnProtocol == "xmpp-client")
    }

    @Test func closeNotifyFromServerEndsReading() throws {
        let server = trustedServer()
        let engine = try client()
        try TLSTestPump.handshake(engine, server)

        server.write("bye")
        server.sendCloseNotify()
        engine.consumeDataFromNetwork(server.drain())
        #expect(try engine.readApplicationData() == Array("bye".utf8))
        #expect(throws: TLSError.closed) { try engine.readApplicationData() }
    }

    @Test func shutdownQueuesCloseNotify() throws {
        let server = trustedServer()
        let engine = try client()
        try TLSTestPump.handshake(engine, server)
        _ = engine.getDataForNetwork()

        engine.shutdown()
        #expect(!engine.getDataForNetwork().isEmpty)
        #expect(throws: TLSError.closed) { try engine.writeApplicationData([1]) }
    }

    @Test func dataBeforeHandshakeIsRefused() throws {
        let engine = try client()
        #expect(throws: TLSError.self) { try engine.writeApplicationData(Array("hello".utf8)) }
        #expect(throws: TLSError.self) { try engine.readApplicationData() }
    }

    @Test func systemTrustStoreAloneWorksWithPin() throws {
        // The system store is loaded (and does not trust the test CA); the pin still admits the server.
        let server = trustedServer()
        let pin = TLSTestPump.colonHex(TLSTestPump.digest(server.certificate.der, "SHA256")).lowercased()
        let engine = try TLSEngine(configuration: TLSConfiguration(serverName: "example.test", pinnedSHA256: pin))
        try TLSTestPump.handshake(engine, server)
        #expect(engine.isTLS13)
    }
}

/// What OpenSSL's error queue says decides whether a failure setting up TLS is the config's (a CA file that is
/// not there or not PEM: the user must fix it) or a passing shortage (no descriptor or memory for it: retried).
@Suite("TLS engine: a shortage is no config problem")
struct TLSShortageTests {
    private func push(systemError code: Int32) {
        ERR_new()
        ERR_set_debug("test", 1, "test")
        withVaList([]) { ERR_vset_error(ERR_LIB_SYS, code, nil, $0) }
    }

    @Test func systemShortagesOnTheQueueAreTold() {
        ERR_clear_error()
        push(systemError: EMFILE)
        let emfile = TLSEngine.drainErrorsNotingShortage()
        #expect(emfile.shortage && emfile.text.contains("Too many open files"), "\(emfile)")
        push(systemError: ENOENT)
        let missing = TLSEngine.drainErrorsNotingShortage()
        #expect(!missing.shortage, "\(missing)")
        #expect(TLSEngine.drainErrorsNotingShortage().text == "unknown TLS error")
    }

    @Test func aMissingCAFileIsStillTheConfigs() {
        do {
            _ = try TLSEngine(configuration: TLSConfiguration(serverName: "example.test", caFile: "/nonexistent/roost-ca.pem"))
            Issue.record("a missing CA file was accepted")
        } catch {
            guard case .invalidConfiguration = error else {
                Issue.record("a missing CA file must stay a config problem: \(error)")
                return
            }
            #expect(ClientError.tls(error).needsUser)
        }
        #expect(!ClientError.tls(.resourceShortage("x")).needsUser)
        #expect(!ClientError.transport(.resourceShortage("Too many open files")).needsUser)
    }
}
