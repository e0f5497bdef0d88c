import Testing
import RoostXMPP

@Suite struct SASLSelectorTests {
    private let exporter = ChannelBinding.tlsExporter(Array(repeating: 1, count: 32))
    private let endPoint = ChannelBinding.tlsServerEndPoint(Array(repeating: 2, count: 32))
    private let allSCRAM = ["SCRAM-SHA-1", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-256-PLUS", "PLAIN"]

    private func select(_ offered: [String], tls: Bool = true, serverTypes: [String]? = nil,
                        bindings: [ChannelBinding] = []) throws(SASLError) -> any SASLMechanism {
        try SASLMechanismSelector.select(offered: offered, tlsActive: tls, serverBindingTypes: serverTypes,
                                         availableBindings: bindings, username: "user", password: "pencil")
    }

    private func gs2Header(_ mechanism: any SASLMechanism) throws -> String {
        let first = String(decoding: try mechanism.initialResponse(), as: UTF8.self)
        return String(first[..<first.range(of: "n=")!.lowerBound])
    }

    @Test func plusChosenWhenBindingAvailable() throws {
        let mechanism = try select(allSCRAM, bindings: [exporter, endPoint])
        #expect(mechanism.name == "SCRAM-SHA-256-PLUS")
        #expect(try gs2Header(mechanism) == "p=tls-exporter,,")
    }

    @Test func sha1PlusBeatsSHA256WithoutPlus() throws {
        let mechanism = try select(["SCRAM-SHA-1-PLUS", "SCRAM-SHA-256"], bindings: [endPoint])
        #expect(mechanism.name == "SCRAM-SHA-1-PLUS")
        #expect(try gs2Header(mechanism) == "p=tls-server-end-point,,")
    }

    @Test func xep0440ListIsRespected() throws {
        let mechanism = try select(allSCRAM, serverTypes: ["tls-server-end-point"], bindings: [exporter, endPoint])
        #expect(mechanism.name == "SCRAM-SHA-256-PLUS")
        #expect(try gs2Header(mechanism) == "p=tls-server-end-point,,")
    }

    @Test func noCommonBindingTypeFallsBackWithoutYFlag() throws {
        // The server supports binding, just not ours: "y" would make it suspect a downgrade.
        let mechanism = try select(allSCRAM, serverTypes: ["tls-unique"], bindings: [exporter])
        #expect(mechanism.name == "SCRAM-SHA-256")
        #expect(try gs2Header(mechanism) == "n,,")
    }

    @Test func noBindingAvailableUsesPlainSCRAM() throws {
        let mechanism = try select(allSCRAM)
        #expect(mechanism.name == "SCRAM-SHA-256")
        #expect(try gs2Header(mechanism) == "n,,")
    }

    @Test func serverWithoutPlusGetsYFlag() throws {
        let mechanism = try select(["SCRAM-SHA-1", "SCRAM-SHA-256"], bindings: [exporter])
        #expect(mechanism.name == "SCRAM-SHA-256")
        #expect(try gs2Header(mechanism) == "y,,")
    }

    @Test func sha1WhenOnlyOffered() throws {
        #expect(try select(["PLAIN", "SCRAM-SHA-1"]).name == "SCRAM-SHA-1")
    }

    @Test func plainOverTLSWhenNoSCRAM() throws {
        #expect(try select(["PLAIN", "DIGEST-MD5"]).name == "PLAIN")
    }

    @Test func plainRefusedWithoutTLS() {
        #expect(throws: SASLError.plainWithoutTLS) { try self.select(["PLAIN"], tls: false) }
    }

    @Test func plainRefusedWhenAnySCRAMOffered() {
        // Only -PLUS is offered and we cannot bind: falling back to PLAIN would hand over the password.
        #expect(throws: SASLError.noAcceptableMechanism(offered: ["SCRAM-SHA-256-PLUS", "PLAIN"])) {
            try self.select(["SCRAM-SHA-256-PLUS", "PLAIN"])
        }
    }

    @Test func nothingAcceptable() {
        #expect(throws: SASLError.noAcceptableMechanism(offered: ["DIGEST-MD5", "ANONYMOUS"])) {
            try self.select(["DIGEST-MD5", "ANONYMOUS"])
        }
    }

    @Test func mechanismNamesAreCaseInsensitive() throws {
        #expect(try select(["scram-sha-256"]).name == "SCRAM-SHA-256")
    }

    @Test func descriptionsAreHelpful() {
        #expect(SASLError.plainWithoutTLS.description.contains("TLS"))
        #expect(SASLError.failure(condition: "not-authorized", text: nil).description.contains("password"))
    }
}
