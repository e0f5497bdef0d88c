import Foundation
import Testing
@testable import RoostAgent
import RoostTestSupport

/// The signed, single-use, expiring tokens of push buttons (issue 32, 3; docs/serve.md, "Push actions").
@Suite("Push action tokens")
struct PushActionTokensTests {
    @Test func aTokenAllowsItsOneActionOnceBeforeItExpires() throws {
        let dir = try TestDirectory()
        let tokens = PushActionTokens(directory: dir.path)
        let token = try #require(tokens.sign(.accept, account: "alice@example.org", target: "carol@example.org"))
        let key = try FileManager.default.attributesOfItem(atPath: dir.path + "/push-actions.key")
        #expect(key[.posixPermissions] as? Int == 0o600 && key[.size] as? Int == 32)
        let grant = try tokens.check(token).get()
        #expect(grant.action == .accept && grant.account == "alice@example.org" && grant.target == "carol@example.org")
        #expect(try tokens.spend(grant).get() == grant)
        #expect(tokens.check(token).map(\.nonce) == .success(grant.nonce), "checking does not spend")
        #expect(tokens.spend(grant) == .failure(.used))
        #expect(PushActionTokens(directory: dir.path).spend(grant) == .failure(.used), "the record is on disk, for every process")

        let expired = try #require(tokens.sign(.read, account: "alice@example.org", target: "bob@example.org", lifetime: -1))
        #expect(tokens.check(expired) == .failure(.expired))
    }

    @Test func aChangedOrForeignTokenIsRefused() throws {
        let dir = try TestDirectory()
        let tokens = PushActionTokens(directory: dir.path)
        let token = try #require(tokens.sign(.read, account: "alice@example.org", target: "bob@example.org"))
        let parts = token.split(separator: ".").map(String.init)
        // Another action or target in the payload, under the old signature.
        let payload = Data(try #require(Data(base64Encoded: parts[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .padding(toLength: (parts[0].count + 3) / 4 * 4, withPad: "=", startingAt: 0))))
        let changed = String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "\"read\"", with: "\"deny\"")
        let forged = PushActionTokens.base64url(Array(changed.utf8)) + "." + parts[1]
        #expect(tokens.check(forged) == .failure(.badSignature))
        // The same token checked by another archive's key.
        let other = try TestDirectory()
        _ = PushActionTokens(directory: other.path).sign(.read, account: "x@example.org", target: "y@example.org")
        #expect(PushActionTokens(directory: other.path).check(token) == .failure(.badSignature))
        for garbage in ["", "abc", "a.b.c", "!!.??", parts[0]] {
            #expect(tokens.check(garbage) == .failure(.malformed), "\(garbage)")
        }
    }
}
