import Testing
import RoostXMPP

@Suite struct SASLSelectorTests {
    private let exporter = ChannelBinding.tlsExporter(Array(repeating: 1, count: 32))
    private let unique = ChannelBinding.tlsUnique(Array(repeating: 3, count: 12))
    private let endPoint = ChannelBinding.tlsServerEndPoint(Array(repeating: 2, count: 32))
    private let allSCRAM = ["SCRAM-SHA-1", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-256-PLUS", "PLAIN"]
    /// What a TLS 1.3 session provides, and what a TLS 1.2 one with the extended master secret provides.
    private var tls13: [ChannelBinding] { [exporter, endPoint] }
    private var tls12: [ChannelBinding] { [unique, endPoint] }

    private func plan(_ offered: [String], tls: Bool = true, serverTypes: [String]? = nil, bindings: [ChannelBinding] = [],
                      allowed: Set<String>? = nil) throws(SASLError) -> SASLMechanismSelector.Plan {
        try SASLMechanismSelector.plan(offered: offered, allowed: allowed, tlsActive: tls, serverBindingTypes: serverTypes,
                                       availableBindings: bindings, username: "user", password: "pencil")
    }

    private func select(_ offered: [String], tls: Bool = true, serverTypes: [String]? = nil,
                        bindings: [ChannelBinding] = [], allowed: Set<String>? = nil) throws(SASLError) -> any SASLMechanism {
        try plan(offered, tls: tls, serverTypes: serverTypes, bindings: bindings, allowed: allowed).first
    }

    private func gs2Header(_ mechanism: (any SASLMechanism)?) throws -> String {
        let mechanism = try #require(mechanism)
        let first = String(decoding: try mechanism.initialResponse(), as: UTF8.self)
        return String(first[..<first.range(of: "n=")!.lowerBound])
    }

    // MARK: XEP-0440 lists the server's types

    @Test func xep0440ExporterPreferredOnTLS13() throws {
        let mechanism = try select(allSCRAM, serverTypes: ["tls-server-end-point", "tls-exporter"], bindings: tls13)
        #expect(mechanism.name == "SCRAM-SHA-256-PLUS")
        #expect(mechanism.channelBindingType == "tls-exporter")
        #expect(try gs2Header(mechanism) == "p=tls-exporter,,")
    }

    @Test func xep0440ListIsRespected() throws {
        let mechanism = try select(allSCRAM, serverTypes: ["tls-server-end-point"], bindings: tls13)
        #expect(mechanism.name == "SCRAM-SHA-256-PLUS")
        #expect(try gs2Header(mechanism) == "p=tls-server-end-point,,")
    }

    @Test func xep0440UniqueOnTLS12() throws {
        let mechanism = try select(allSCRAM, serverTypes: ["tls-unique", "tls-server-end-point"], bindings: tls12)
        #expect(try gs2Header(mechanism) == "p=tls-unique,,")
    }

    @Test func listedTypesLeaveNoFallback() throws {
        // The server said which types it takes and one is ours: a failure is a failure, not a reason to drop binding.
        let plan = try plan(allSCRAM, serverTypes: ["tls-exporter"], bindings: tls13)
        #expect(plan.first.name == "SCRAM-SHA-256-PLUS")
        #expect(plan.fallback == nil)
    }

    @Test func noCommonBindingTypeFallsBackWithoutYFlag() throws {
        // The server supports binding, just not ours: "y" would make it suspect a downgrade.
        let plan = try plan(allSCRAM, serverTypes: ["tls-unique"], bindings: tls13)
        #expect(plan.first.name == "SCRAM-SHA-256")
        #expect(try gs2Header(plan.first) == "n,,")
        #expect(plan.fallback == nil)
    }

    // MARK: No XEP-0440 (Prosody 0.12, ejabberd 23)

    @Test func withoutListTLS12GuessesUniqueWithAFallback() throws {
        // ejabberd 23.01: SCRAM-SHA-1-PLUS without a list, accepting tls-unique only.
        let plan = try plan(["PLAIN", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "X-OAUTH2"], bindings: tls12)
        #expect(plan.first.name == "SCRAM-SHA-1-PLUS")
        #expect(plan.first.channelBindingType == "tls-unique")
        #expect(try gs2Header(plan.first) == "p=tls-unique,,")
        #expect(plan.fallback?.name == "SCRAM-SHA-1")
        #expect(try gs2Header(plan.fallback) == "n,,")
    }

    @Test func withoutListTLS13UsesSCRAMWithoutBinding() throws {
        // ejabberd 23.01 offers -PLUS on TLS 1.3 too, but only takes tls-unique, which TLS 1.3 lacks.
        let plan = try plan(["PLAIN", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "X-OAUTH2"], bindings: tls13)
        #expect(plan.first.name == "SCRAM-SHA-1")
        #expect(plan.first.channelBindingType == nil)
        #expect(try gs2Header(plan.first) == "n,,")
        #expect(plan.fallback == nil)
    }

    @Test func withoutListNeverGuessesServerEndPoint() throws {
        // tls-server-end-point only when the server lists it: without a list a TLS 1.2 session without
        // the extended master secret (no tls-unique) goes without binding.
        let plan = try plan(allSCRAM, bindings: [endPoint])
        #expect(plan.first.name == "SCRAM-SHA-256")
        #expect(try gs2Header(plan.first) == "n,,")
    }

    @Test func serverWithoutPlusGetsYFlag() throws {
        // Prosody 0.12 on TLS 1.3: no -PLUS offered, and we could bind.
        let mechanism = try select(["SCRAM-SHA-1", "SCRAM-SHA-256"], bindings: tls13)
        #expect(mechanism.name == "SCRAM-SHA-256")
        #expect(try gs2Header(mechanism) == "y,,")
    }

    // MARK: Hashes and restrictions

    @Test func sha512IsStrongest() throws {
        let offered = ["SCRAM-SHA-1", "SCRAM-SHA-256", "SCRAM-SHA-512", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256-PLUS", "SCRAM-SHA-512-PLUS"]
        #expect(try select(offered, bindings: tls12).name == "SCRAM-SHA-512-PLUS")
        #expect(try select(offered, bindings: tls13).name == "SCRAM-SHA-512")
        #expect(try select(["scram-sha-512"]).name == "SCRAM-SHA-512")
    }

    @Test func sha1PlusBeatsSHA256WithoutPlus() throws {
        let mechanism = try select(["SCRAM-SHA-1-PLUS", "SCRAM-SHA-256"], bindings: tls12)
        #expect(mechanism.name == "SCRAM-SHA-1-PLUS")
        #expect(try gs2Header(mechanism) == "p=tls-unique,,")
    }

    @Test func restrictingToSCRAMWithoutPlusStillSaysTheServerOffersPlus() throws {
        // The choice is narrowed, not the offer: "y" here would look like a downgrade to the server.
        let mechanism = try select(allSCRAM, bindings: tls12, allowed: ["SCRAM-SHA-256"])
        #expect(mechanism.name == "SCRAM-SHA-256")
        #expect(try gs2Header(mechanism) == "n,,")
    }

    @Test func plainOnlyWhenTheUserAllowsNothingElse() throws {
        // A configured `sasl_mechanisms = PLAIN` is the user's choice; an offer without SCRAM is not.
        #expect(try select(allSCRAM, bindings: tls12, allowed: ["PLAIN"]).name == "PLAIN")
        #expect(throws: SASLError.noAcceptableMechanism(offered: allSCRAM)) {
            try self.select(self.allSCRAM, bindings: self.tls12, allowed: ["DIGEST-MD5"])
        }
    }

    @Test func noBindingAvailableUsesPlainSCRAM() throws {
        let mechanism = try select(allSCRAM)
        #expect(mechanism.name == "SCRAM-SHA-256")
        #expect(try gs2Header(mechanism) == "n,,")
    }

    @Test func sha1WhenOnlyOffered() throws {
        #expect(try select(["PLAIN", "SCRAM-SHA-1"]).name == "SCRAM-SHA-1")
    }

    // MARK: PLAIN

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
