import Testing
import RoostXMPP

@Suite struct SASLPLAINTests {
    @Test func messageIsEmptyAuthzidUsernamePassword() throws {
        let plain = PLAINMechanism(username: "juliet", password: "r0m30myr0m30")
        #expect(plain.name == "PLAIN")
        #expect(try plain.initialResponse() == [0] + Array("juliet".utf8) + [0] + Array("r0m30myr0m30".utf8))
        #expect(plain.channelBindingType == nil)
    }

    @Test func successNeedsNoServerProof() throws {
        // PLAIN has no server proof (unlike SCRAM): success with or without additional data is accepted.
        let plain = PLAINMechanism(username: "juliet", password: "r0m30myr0m30")
        #expect(throws: Never.self) { try plain.verifySuccess(nil) }
        #expect(throws: Never.self) { try plain.verifySuccess([1, 2, 3]) }
    }

    @Test func appliesSASLprep() throws {
        let plain = PLAINMechanism(username: "I\u{00AD}X", password: "pass\u{00A0}word")
        #expect(try plain.initialResponse() == [0] + Array("IX".utf8) + [0] + Array("pass word".utf8))
    }

    @Test func rejectsNonEmptyChallenge() {
        let plain = PLAINMechanism(username: "juliet", password: "secret")
        #expect(throws: SASLError.self) { try plain.respond(to: Array("x".utf8)) }
    }
}
