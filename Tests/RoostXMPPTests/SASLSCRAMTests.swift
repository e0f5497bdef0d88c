import Foundation
import Testing
@testable import RoostXMPP

@Suite struct SASLSCRAMTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
    private func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

    // MARK: Known answers

    @Test func rfc5802SCRAMSHA1Example() throws {
        let scram = SCRAMMechanism(hash: .sha1, username: "user", password: "pencil", binding: .unused, clientNonce: "fyko+d2lbbFgONRv9qkxdawL")
        #expect(scram.name == "SCRAM-SHA-1")
        #expect(text(try scram.initialResponse()) == "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")
        let final = try scram.respond(to: bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"))
        #expect(text(final) == "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=")
        try scram.verifySuccess(bytes("v=rmF9pqV8S7suAoZWja4dJRkFsKQ="))
    }

    @Test func rfc7677SCRAMSHA256Example() throws {
        let scram = SCRAMMechanism(hash: .sha256, username: "user", password: "pencil", binding: .unused, clientNonce: "rOprNGfwEbeRWgbNEkqO")
        #expect(scram.name == "SCRAM-SHA-256")
        #expect(text(try scram.initialResponse()) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        let serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
        let final = try scram.respond(to: bytes(serverFirst))
        #expect(text(final) == "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
        try scram.verifySuccess(bytes("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="))
    }

    /// No RFC gives a SCRAM-SHA-512 example; this one was computed with Python's hashlib and hmac (an
    /// implementation independent of OpenSSL's EVP calls here) from RFC 7677's inputs.
    @Test func scramSHA512KnownAnswer() throws {
        let scram = SCRAMMechanism(hash: .sha512, username: "user", password: "pencil", binding: .unused, clientNonce: "rOprNGfwEbeRWgbNEkqO")
        #expect(scram.name == "SCRAM-SHA-512")
        #expect(text(try scram.initialResponse()) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        let serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
        let final = try scram.respond(to: bytes(serverFirst))
        #expect(text(final) == "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=gMGXRcevScNtxZ6/8lQYpGtnsNAc3mGcmNomv+xnoOMw+3R2xNJdMNnzMlTN8PPC6wdp6dybEmDYXYTxwnYPJQ==")
        try scram.verifySuccess(bytes("v=ZQnYEgWQMFmmsM8aQMF0nDDCy/AgCzkwk8CmMZYcMg0vSVlKDanekLtifDSeVGT4+5ZxXnJq199RVG2rR7N7Zw=="))
    }

    @Test func serverFinalMayArriveAsChallenge() throws {
        let scram = try sha1ExampleAwaitingServerFinal()
        #expect(try scram.respond(to: bytes("v=rmF9pqV8S7suAoZWja4dJRkFsKQ=")) == [])
        try scram.verifySuccess(nil)
    }

    // MARK: Server authentication

    @Test func tamperedServerSignatureRejected() throws {
        let scram = try sha1ExampleAwaitingServerFinal()
        #expect(throws: SASLError.serverSignatureMismatch) { try scram.verifySuccess(self.bytes("v=rmF9pqV8S7suAoZWja4dJRkFsKQA")) }
    }

    @Test func tamperedSignatureInChallengeRejected() throws {
        let scram = try sha1ExampleAwaitingServerFinal()
        #expect(throws: SASLError.serverSignatureMismatch) { try scram.respond(to: self.bytes("v=AAAAAAAAAAAAAAAAAAAAAAAAAAA=")) }
    }

    @Test func successWithoutServerSignatureRejected() throws {
        let scram = try sha1ExampleAwaitingServerFinal()
        #expect(throws: SASLError.serverSignatureMissing) { try scram.verifySuccess(nil) }
    }

    @Test func successBeforeProofRejected() throws {
        let scram = SCRAMMechanism(hash: .sha256, username: "user", password: "pencil", binding: .unused)
        _ = try scram.initialResponse()
        #expect(throws: SASLError.serverSignatureMissing) { try scram.verifySuccess(nil) }
    }

    @Test func serverErrorReported() throws {
        let scram = try sha1ExampleAwaitingServerFinal()
        #expect(throws: SASLError.serverError("invalid-proof")) { try scram.verifySuccess(self.bytes("e=invalid-proof")) }
    }

    @Test func failedMechanismCannotContinue() throws {
        let scram = try sha1ExampleAwaitingServerFinal()
        #expect(throws: SASLError.serverSignatureMismatch) { try scram.respond(to: self.bytes("v=AAAAAAAAAAAAAAAAAAAAAAAAAAA=")) }
        #expect(throws: SASLError.serverSignatureMissing) { try scram.verifySuccess(self.bytes("v=rmF9pqV8S7suAoZWja4dJRkFsKQ=")) }
    }

    // MARK: Server-first validation

    @Test func lowIterationCountRejected() throws {
        let scram = try sha1ExampleStarted()
        #expect(throws: SASLError.iterationCountTooLow(4095)) {
            try scram.respond(to: self.bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4095"))
        }
    }

    @Test func absurdIterationCountRejected() throws {
        let scram = try sha1ExampleStarted()
        #expect(throws: SASLError.iterationCountTooHigh(999_999_999)) {
            try scram.respond(to: self.bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=999999999"))
        }
    }

    @Test(arguments: [
        "r=someoneElsesNonce3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
        "r=fyko+d2lbbFgONRv9qkxdawL,s=QSXCR+Q6sek8bf92,i=4096", // server added nothing
    ])
    func nonceMismatchRejected(serverFirst: String) throws {
        let scram = try sha1ExampleStarted()
        #expect(throws: SASLError.nonceMismatch) { try scram.respond(to: self.bytes(serverFirst)) }
    }

    @Test(arguments: [
        "garbage",
        "r=fyko+d2lbbFgONRv9qkxdawLabc,i=4096",                        // no salt
        "r=fyko+d2lbbFgONRv9qkxdawLabc,s=!!!,i=4096",                  // salt not base64
        "r=fyko+d2lbbFgONRv9qkxdawLabc,s=QSXCR+Q6sek8bf92,i=many",     // iteration count not a number
        "m=ext,r=fyko+d2lbbFgONRv9qkxdawLabc,s=QSXCR+Q6sek8bf92,i=4096", // mandatory extension
    ])
    func malformedServerFirstRejected(serverFirst: String) throws {
        let scram = try sha1ExampleStarted()
        #expect {
            try scram.respond(to: self.bytes(serverFirst))
        } throws: { error in
            guard let error = error as? SASLError, case .malformedChallenge = error else { return false }
            return true
        }
    }

    @Test func errorDescriptionsHideSecrets() throws {
        let scram = try sha1ExampleStarted()
        do {
            _ = try scram.respond(to: bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=12"))
            Issue.record("12 iterations must be rejected")
        } catch {
            #expect(!error.description.contains("QSXCR"))
            #expect(!error.description.contains("pencil"))
        }
    }

    // MARK: Usernames and nonces

    @Test func usernameIsPreparedAndEscaped() throws {
        let scram = SCRAMMechanism(hash: .sha256, username: "a,b=c\u{00A0}d\u{00AD}", password: "pencil", binding: .unused, clientNonce: "abc")
        #expect(text(try scram.initialResponse()) == "n,,n=a=2Cb=3Dc d,r=abc")
    }

    @Test func generatedNonceIsLongAndCommaFree() throws {
        let scram = SCRAMMechanism(hash: .sha256, username: "user", password: "pencil", binding: .unused)
        let message = text(try scram.initialResponse())
        let nonce = try #require(message.components(separatedBy: ",r=").last)
        #expect(nonce.count >= 32)
        #expect(!nonce.contains(","))
    }

    // MARK: Channel binding

    @Test func plusSendsBindingTypeAndData() throws {
        let cbData: [UInt8] = Array(0..<32)
        let scram = SCRAMMechanism(hash: .sha256, username: "user", password: "pencil",
                                   binding: .bound(.tlsExporter(cbData)), clientNonce: "abc")
        #expect(scram.name == "SCRAM-SHA-256-PLUS")
        #expect(text(try scram.initialResponse()) == "p=tls-exporter,,n=user,r=abc")
        let final = text(try scram.respond(to: bytes("r=abcdef,s=QSXCR+Q6sek8bf92,i=4096")))
        let expectedC = Data(Array("p=tls-exporter,,".utf8) + cbData).base64EncodedString()
        #expect(final.hasPrefix("c=\(expectedC),r=abcdef,p="))
    }

    @Test func uniqueBindingType() throws {
        let scram = SCRAMMechanism(hash: .sha512, username: "user", password: "pencil",
                                   binding: .bound(.tlsUnique([0xAB, 0xCD])), clientNonce: "abc")
        #expect(scram.name == "SCRAM-SHA-512-PLUS")
        #expect(scram.channelBindingType == "tls-unique")
        #expect(text(try scram.initialResponse()) == "p=tls-unique,,n=user,r=abc")
        let final = text(try scram.respond(to: bytes("r=abcdef,s=QSXCR+Q6sek8bf92,i=4096")))
        #expect(final.hasPrefix("c=\(Data(Array("p=tls-unique,,".utf8) + [0xAB, 0xCD]).base64EncodedString()),r=abcdef,p="))
    }

    @Test func serverEndPointBindingType() throws {
        let scram = SCRAMMechanism(hash: .sha1, username: "user", password: "pencil",
                                   binding: .bound(.tlsServerEndPoint([0xAB])), clientNonce: "abc")
        #expect(scram.name == "SCRAM-SHA-1-PLUS")
        #expect(text(try scram.initialResponse()).hasPrefix("p=tls-server-end-point,,"))
    }

    @Test func bindingCapableClientSendsYWhenServerOffersNoPlus() throws {
        let scram = SCRAMMechanism(hash: .sha256, username: "user", password: "pencil",
                                   binding: .supportedButNotOffered, clientNonce: "abc")
        #expect(scram.name == "SCRAM-SHA-256")
        #expect(text(try scram.initialResponse()) == "y,,n=user,r=abc")
        let final = text(try scram.respond(to: bytes("r=abcdef,s=QSXCR+Q6sek8bf92,i=4096")))
        #expect(final.hasPrefix("c=eSws,r=abcdef,p="))   // base64("y,,"), no binding data
    }

    @Test func fullPlusExchangeAgainstSimulatedServer() throws {
        let binding = ChannelBinding.tlsExporter(Array(repeating: 0x5A, count: 32))
        let scram = SCRAMMechanism(hash: .sha256, username: "romeo", password: "wherefore", binding: .bound(binding))
        let clientFirst = text(try scram.initialResponse())
        let server = try SimulatedSCRAMServer(hash: .sha256, password: "wherefore", clientFirst: clientFirst, expectedBinding: binding)
        let clientFinal = text(try scram.respond(to: bytes(server.serverFirst)))
        let serverFinal = try server.verify(clientFinal: clientFinal)
        try scram.verifySuccess(bytes(serverFinal))
    }

    // MARK: Helpers

    private func sha1ExampleStarted() throws -> SCRAMMechanism {
        let scram = SCRAMMechanism(hash: .sha1, username: "user", password: "pencil", binding: .unused, clientNonce: "fyko+d2lbbFgONRv9qkxdawL")
        _ = try scram.initialResponse()
        return scram
    }

    private func sha1ExampleAwaitingServerFinal() throws -> SCRAMMechanism {
        let scram = try sha1ExampleStarted()
        _ = try scram.respond(to: bytes("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"))
        return scram
    }
}

/// The server half of SCRAM, written from RFC 5802 §3, to check the client's proof and binding end to end.
private struct SimulatedSCRAMServer {
    let hash: HashAlgorithm
    let serverFirst: String
    private let clientFirstBare: String
    private let saltedPassword: [UInt8]
    private let expectedGS2: String
    private let expectedBinding: ChannelBinding

    init(hash: HashAlgorithm, password: String, clientFirst: String, expectedBinding: ChannelBinding) throws {
        self.hash = hash
        self.expectedBinding = expectedBinding
        expectedGS2 = "p=\(expectedBinding.typeName),,"
        try #require(clientFirst.hasPrefix(expectedGS2))
        clientFirstBare = String(clientFirst.dropFirst(expectedGS2.count))
        let clientNonce = try #require(clientFirstBare.components(separatedBy: ",r=").last)
        let salt: [UInt8] = Array("NaCl-for-tests".utf8)
        serverFirst = "r=\(clientNonce)SERVERPART,s=\(Data(salt).base64EncodedString()),i=4096"
        saltedPassword = try hash.pbkdf2(password: Array(password.utf8), salt: salt, iterations: 4096)
    }

    func verify(clientFinal: String) throws -> String {
        let proofRange = try #require(clientFinal.range(of: ",p="))
        let withoutProof = String(clientFinal[..<proofRange.lowerBound])
        let proof = try #require(Data(base64Encoded: String(clientFinal[proofRange.upperBound...])))
        let expectedC = Data(Array(expectedGS2.utf8) + expectedBinding.data).base64EncodedString()
        #expect(withoutProof.hasPrefix("c=\(expectedC),"))

        let authMessage = Array("\(clientFirstBare),\(serverFirst),\(withoutProof)".utf8)
        let storedKey = try hash.digest(try hash.hmac(key: saltedPassword, data: Array("Client Key".utf8)))
        let clientSignature = try hash.hmac(key: storedKey, data: authMessage)
        let recoveredClientKey = zip(Array(proof), clientSignature).map { $0 ^ $1 }
        #expect(try hash.digest(recoveredClientKey) == storedKey)

        let serverKey = try hash.hmac(key: saltedPassword, data: Array("Server Key".utf8))
        return "v=" + Data(try hash.hmac(key: serverKey, data: authMessage)).base64EncodedString()
    }
}
