import Foundation
import Testing
@testable import RoostXMPP

@Suite struct CryptoHashAlgorithmTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func sha1AndSHA256OfABC() throws {
        #expect(hex(try HashAlgorithm.sha1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(try HashAlgorithm.sha256.digest(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hmacSHA256RFC4231TestCase1() throws {
        let mac = try HashAlgorithm.sha256.hmac(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8))
        #expect(hex(mac) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func sha512OfABCAndHMACRFC4231TestCase1() throws {
        // FIPS 180-4 example "abc"; RFC 4231 §4.2.
        #expect(hex(try HashAlgorithm.sha512.digest(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        let mac = try HashAlgorithm.sha512.hmac(key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8))
        #expect(hex(mac) == "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854")
    }

    @Test func hmacSHA256RFC4231TestCase2() throws {
        let mac = try HashAlgorithm.sha256.hmac(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        #expect(hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test(arguments: [
        (1, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
        (2, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
        (4096, "4b007901b765489abead49d926f721d065a429c1"),
    ])
    func pbkdf2SHA1RFC6070(iterations: Int, expected: String) throws {
        let key = try HashAlgorithm.sha1.pbkdf2(password: Array("password".utf8), salt: Array("salt".utf8), iterations: iterations)
        #expect(hex(key) == expected)
    }

    @Test func constantTimeEqualComparesLengthAndContent() {
        #expect(CryptoUtilities.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!CryptoUtilities.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!CryptoUtilities.constantTimeEqual([1, 2, 3], [1, 2]))
    }

    @Test func randomBytesDiffer() throws {
        let first = try CryptoUtilities.randomBytes(24)
        let second = try CryptoUtilities.randomBytes(24)
        #expect(first.count == 24)
        #expect(first != second)
    }
}
