import Testing
@testable import RoostXMPP

@Suite struct SASLPrepTests {
    @Test(arguments: [
        ("I\u{00AD}X", "IX"),          // soft hyphen is mapped to nothing
        ("user", "user"),
        ("USER", "USER"),              // no case folding in SASLprep
        ("\u{00AA}", "a"),             // NFKC
        ("\u{2168}", "IX"),            // NFKC
        ("john\u{00A0}doe", "john doe"), // non-ASCII space becomes U+0020
        ("a\u{3000}b", "a b"),
        ("\u{0627}\u{0644}\u{0628}", "\u{0627}\u{0644}\u{0628}"), // RandAL only, first and last RandAL
    ])
    func rfc4013Examples(input: String, expected: String) throws {
        #expect(try SASLPrep.prepare(input) == expected)
    }

    @Test func prohibitsControlCharacters() {
        #expect(throws: SASLPrep.Failure.prohibitedCharacter("\u{0007}")) { try SASLPrep.prepare("\u{0007}") }
    }

    @Test func prohibitsPrivateUse() {
        #expect(throws: SASLPrep.Failure.prohibitedCharacter("\u{E000}")) { try SASLPrep.prepare("a\u{E000}") }
    }

    @Test func rejectsMixedOrUnbalancedBidi() {
        #expect(throws: SASLPrep.Failure.bidiViolation) { try SASLPrep.prepare("\u{0627}\u{0031}") }
        #expect(throws: SASLPrep.Failure.bidiViolation) { try SASLPrep.prepare("\u{0627}a\u{0627}") }
    }

    @Test func credentialErrorsNeverEchoThePassword() {
        do {
            _ = try PreparedCredentials(username: "alice", password: "se\u{0007}cret")
            Issue.record("a control character in the password must be rejected")
        } catch {
            #expect(!error.description.contains("cret"))
            #expect(!error.description.contains("U+7"))
            if case .invalidPassword = error {} else { Issue.record("expected invalidPassword, got \(error)") }
        }
    }

    @Test func emptyUsernameRejected() {
        #expect(throws: SASLError.self) { try PreparedCredentials(username: "\u{00AD}", password: "pencil") }
    }
}
