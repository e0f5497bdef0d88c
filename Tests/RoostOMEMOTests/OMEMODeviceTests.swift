import RoostCore
import RoostXMPP
import Foundation
import Testing
@testable import RoostOMEMO

/// The device's crypto and store in memory: sessions from bundles, both wire formats, failures, and the
/// rule that the ratchet state on disk never runs ahead of what was committed. (Interoperability with an
/// independent implementation is tested end to end against slixmpp-omemo in RoostCLITests.)
@Suite struct OMEMODeviceTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "roost-omemo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func device(_ account: String, file: String = "omemo.sqlite") throws -> OMEMODevice {
        try OMEMODevice(storePath: "\(folder)/\(file)", account: account)
    }

    /// bob (sender) with a session to alice's device.
    func pair(_ namespace: OMEMONamespace) throws -> (alice: OMEMODevice, bob: OMEMODevice) {
        let alice = try device("alice@roost.test")
        let bob = try device("bob@roost.test", file: "bob.sqlite")
        try bob.buildSession(namespace: namespace, jid: "alice@roost.test", device: alice.deviceID, bundle: try alice.bundle(for: namespace))
        return (alice, bob)
    }

    func send(_ text: String, from bob: OMEMODevice, to alice: OMEMODevice, _ namespace: OMEMONamespace) throws -> OMEMOEncryptedElement {
        try bob.encrypt(Array(text.utf8), namespace: namespace, for: [("alice@roost.test", alice.deviceID)])
    }

    @Test func payloadCryptoRoundTrips() throws {
        #expect(SymmetricCipher.aes256CBC(encrypt: true, key: [UInt8](repeating: 1, count: 32), iv: [UInt8](repeating: 2, count: 16), input: [1, 2, 3]) != nil)
        #expect(OpenSSLCryptoProvider.hmacSHA256(key: [1], data: [2]) != nil)
        #expect(SymmetricCipher.hkdfSHA256(key: [UInt8](repeating: 7, count: 32), salt: [UInt8](repeating: 0, count: 32), info: Array("OMEMO Payload".utf8), length: 80) != nil)
        #expect(PayloadCrypto.random(32) != nil)
        // RFC 5869 test case 1.
        let okm = SymmetricCipher.hkdfSHA256(key: [UInt8](repeating: 0x0b, count: 22), salt: Array(0...12), info: Array(0xf0...0xf9), length: 42)
        #expect(okm?.hex == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        for namespace in OMEMONamespace.allCases {
            let sealed = try #require(PayloadCrypto.seal(Array("payload".utf8), namespace: namespace))
            #expect(PayloadCrypto.open(sealed.ciphertext, keyMaterial: sealed.keyMaterial, iv: sealed.iv, namespace: namespace) == Array("payload".utf8))
            #expect(sealed.keyMaterial.count == (namespace == .legacy ? 32 : 48))
        }
    }

    @Test(arguments: OMEMONamespace.allCases)
    func keyStoreIsPrivateAndBundleHasHundredPreKeys(_ namespace: OMEMONamespace) throws {
        let alice = try device("alice@roost.test")
        let bundle = try alice.bundle(for: namespace)
        #expect(bundle.preKeys.count == OMEMODevice.preKeyCount)
        #expect(bundle.identityKey.count == (namespace == .legacy ? 33 : 32))
        #expect(bundle.signedPreKey.count == (namespace == .legacy ? 33 : 32))
        #expect(bundle.signedPreKeySignature.count == 64)
        var info = stat()
        #expect(stat("\(folder)/omemo.sqlite", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        // The same device and identity after reopening.
        let again = try device("alice@roost.test")
        #expect(again.deviceID == alice.deviceID)
        #expect(again.fingerprint == alice.fingerprint)
    }

    @Test(arguments: OMEMONamespace.allCases)
    func decryptsRepeatedKeyExchangesAndThenNormalMessages(_ namespace: OMEMONamespace) throws {
        let (alice, bob) = try pair(namespace)
        // bob never hears back, so every message is a key exchange with the same prekey.
        for i in 1...20 {
            let element = try send("hello \(i)", from: bob, to: alice, namespace)
            #expect(element.keys.first?.isKeyExchange == true)
            let (result, token) = alice.decrypt(element, sender: "bob@roost.test", recipient: "alice@roost.test")
            let decrypted = try result.get()
            #expect(decrypted.plaintext == Array("hello \(i)".utf8))
            #expect(decrypted.fingerprint == bob.fingerprint)
            #expect(decrypted.trust == .blind)
            try alice.commit(through: token)
        }
        // Once alice answers, bob's messages are normal ones.
        let reply = try alice.encrypt(Array("hi bob".utf8), namespace: namespace, for: [("bob@roost.test", bob.deviceID)])
        let (answer, answerToken) = bob.decrypt(reply, sender: "alice@roost.test", recipient: "bob@roost.test")
        #expect(try answer.get().plaintext == Array("hi bob".utf8))
        try bob.commit(through: answerToken)
        let normal = try send("after", from: bob, to: alice, namespace)
        #expect(normal.keys.first?.isKeyExchange == false)
        let (result, _) = alice.decrypt(normal, sender: "bob@roost.test", recipient: "alice@roost.test")
        #expect(try result.get().plaintext == Array("after".utf8))
        // The used prekey left the bundle and was replaced.
        #expect(try alice.bundle(for: namespace).preKeys.count == OMEMODevice.preKeyCount)
    }

    @Test(arguments: OMEMONamespace.allCases)
    func failuresAreReportedNotCrashed(_ namespace: OMEMONamespace) throws {
        let (alice, bob) = try pair(namespace)
        var forged = try send("secret", from: bob, to: alice, namespace)
        forged.payload![0] ^= 0xFF
        #expect(alice.decrypt(forged, sender: "bob@roost.test", recipient: "alice@roost.test").0 == .failure(.payloadAuthentication))

        var badKey = try send("secret 2", from: bob, to: alice, namespace)
        badKey.keys[0].data[badKey.keys[0].data.count / 2] ^= 0x55
        guard case .failure(let why) = alice.decrypt(badKey, sender: "bob@roost.test", recipient: "alice@roost.test").0 else {
            Issue.record("a damaged key decrypted")
            return
        }
        #expect(why != .notForThisDevice)

        var elsewhere = try send("not for you", from: bob, to: alice, namespace)
        elsewhere.keys[0].device &+= 1
        #expect(alice.decrypt(elsewhere, sender: "bob@roost.test", recipient: "alice@roost.test").0 == .failure(.notForThisDevice))

        var garbage = try send("x", from: bob, to: alice, namespace)
        garbage.keys[0].data = [1, 2, 3]
        guard case .failure(.corruptKey) = alice.decrypt(garbage, sender: "bob@roost.test", recipient: "alice@roost.test").0 else {
            Issue.record("garbage was not reported as a bad key")
            return
        }
    }

    /// State waits for `commit`: without it (a crash before the archive committed), reopening the store finds
    /// the old state, the message decrypts again, and later messages still decrypt (skipped keys).
    @Test(arguments: OMEMONamespace.allCases)
    func ratchetStateNeverRunsAheadOfCommits(_ namespace: OMEMONamespace) throws {
        var (alice, bob) = try pair(namespace)
        let zero = try send("zero", from: bob, to: alice, namespace)
        try alice.commit(through: alice.decrypt(zero, sender: "bob@roost.test", recipient: "alice@roost.test").token)
        let reply = try alice.encrypt(Array("hi".utf8), namespace: namespace, for: [("bob@roost.test", bob.deviceID)])
        try bob.commit(through: bob.decrypt(reply, sender: "alice@roost.test", recipient: "bob@roost.test").token)
        let first = try send("one", from: bob, to: alice, namespace)
        let second = try send("two", from: bob, to: alice, namespace)
        let third = try send("three", from: bob, to: alice, namespace)

        let (one, oneToken) = alice.decrypt(first, sender: "bob@roost.test", recipient: "alice@roost.test")
        #expect(try one.get().plaintext == Array("one".utf8))
        try alice.commit(through: oneToken)
        #expect(alice.decrypt(first, sender: "bob@roost.test", recipient: "alice@roost.test").0 == .failure(.duplicate))

        // "two" is decrypted but its archive commit never happens: the process dies.
        #expect(try alice.decrypt(second, sender: "bob@roost.test", recipient: "alice@roost.test").0.get().plaintext == Array("two".utf8))
        #expect(alice.hasPendingState)
        alice = try device("alice@roost.test")
        #expect(try alice.decrypt(third, sender: "bob@roost.test", recipient: "alice@roost.test").0.get().plaintext == Array("three".utf8))
        let (again, againToken) = alice.decrypt(second, sender: "bob@roost.test", recipient: "alice@roost.test")
        #expect(try again.get().plaintext == Array("two".utf8))
        try alice.commit(through: againToken)
        _ = bob
    }

    /// Encrypting on top of ratchet state that waits for the archive is `.busy`; the commit of that state fulfils
    /// the wake-up taken before the encryption (no retry timer), which stays fulfilled for a late waiter, and the
    /// next change gets a wake-up of its own.
    @Test(arguments: OMEMONamespace.allCases)
    func aBusySessionWakesItsWaiterWhenItsStateIsCommitted(_ namespace: OMEMONamespace) throws {
        let (alice, bob) = try pair(namespace)
        let (decrypted, token) = alice.decrypt(try send("one", from: bob, to: alice, namespace), sender: "bob@roost.test", recipient: "alice@roost.test")
        #expect(try decrypted.get().plaintext == Array("one".utf8))
        let changed = alice.nextPendingStateChange
        #expect(throws: OMEMOError.busy) {
            try alice.encrypt(Array("hi".utf8), namespace: namespace, for: [("bob@roost.test", bob.deviceID)])
        }
        #expect(changed.wait(until: Date()) == nil)
        try alice.commit(through: token)
        #expect(changed.wait(until: Date()) != nil)
        _ = try alice.encrypt(Array("hi".utf8), namespace: namespace, for: [("bob@roost.test", bob.deviceID)])
        // Dropping pending state (a failed archive commit) wakes too.
        let next = alice.nextPendingStateChange
        #expect(next !== changed)
        #expect(next.wait(until: Date()) == nil)
        alice.discardPending()
        #expect(next.wait(until: Date()) != nil)
    }

    @Test func trustFollowsBlindTrustBeforeVerification() throws {
        let (alice, bob) = try pair(.legacy)
        let phone = try device("bob@roost.test", file: "phone.sqlite")
        try phone.buildSession(namespace: .legacy, jid: "alice@roost.test", device: alice.deviceID, bundle: try alice.bundle(for: .legacy))
        _ = alice.decrypt(try send("a", from: bob, to: alice, .legacy), sender: "bob@roost.test", recipient: "alice@roost.test")
        #expect(alice.trust(jid: "bob@roost.test", device: bob.deviceID) == .blind)
        // Verifying one of bob's devices (by its Ed25519 form, as an OMEMO 2 client shows it) …
        let spaced = bob.fingerprint.uppercased().enumerated().map { $0.offset % 8 == 7 ? "\($0.element) " : "\($0.element)" }.joined()
        #expect(try alice.setTrust(jid: "bob@roost.test", fingerprint: spaced, to: .verified) == 1)
        // … makes his next new device untrusted.
        let element = try phone.encrypt(Array("from phone".utf8), namespace: .legacy, for: [("alice@roost.test", alice.deviceID)])
        let decrypted = try alice.decrypt(element, sender: "bob@roost.test", recipient: "alice@roost.test").0.get()
        #expect(decrypted.trust == .untrusted)
        #expect(decrypted.plaintext == Array("from phone".utf8))
        #expect(alice.identities(of: "bob@roost.test").count == 2)
        #expect(alice.identities(of: "alice@roost.test").first?.own == true)
    }
}

/// XEP-0384 and XEP-0420 elements survive a trip through XML.
@Suite struct OMEMOElementTests {
    @Test(arguments: OMEMONamespace.allCases)
    func encryptedAndBundleElementsRoundTrip(_ namespace: OMEMONamespace) throws {
        let encrypted = OMEMOEncryptedElement(
            namespace: namespace, senderDevice: 4242,
            keys: [OMEMOKeyElement(jid: namespace == .omemo2 ? "alice@roost.test" : nil, device: 7, isKeyExchange: true, data: [1, 2, 3]),
                   OMEMOKeyElement(jid: namespace == .omemo2 ? "bob@roost.test" : nil, device: 8, isKeyExchange: false, data: [4])],
            iv: namespace == .legacy ? Array(repeating: 9, count: 12) : nil, payload: [5, 6])
        let message = OMEMO.message(to: try #require(JID(parsing: "bob@roost.test")), id: "m1", encrypted: encrypted)
        let xml = XMLSerializer.serialize(message.element)
        let parsed = try #require(Element(parsing: xml))
        #expect(OMEMO.encrypted(in: Message(parsed)) == encrypted)
        #expect(Message(parsed).body == OMEMO.fallbackBody)

        let device = try OMEMODevice(storePath: NSTemporaryDirectory() + "roost-omemo-\(UUID().uuidString).sqlite", account: "a@roost.test")
        let bundle = try device.bundle(for: namespace)
        let element = try #require(Element(parsing: XMLSerializer.serialize(OMEMO.bundleElement(namespace, bundle))))
        #expect(OMEMO.bundle(in: element, namespace) == bundle)
        let list = OMEMO.deviceListElement(namespace, devices: [1, 2])
        #expect(OMEMO.devices(in: try #require(Element(parsing: XMLSerializer.serialize(list))), namespace) == [1, 2])
    }

    @Test func envelopeCarriesBodyAndAddresses() throws {
        let alice = try #require(JID(parsing: "alice@roost.test/phone"))
        let bob = try #require(JID(parsing: "bob@roost.test"))
        let bytes = StanzaContentEncryption.envelope(body: "grüß <dich> & 你好", from: alice, to: bob)
        let envelope = try #require(StanzaContentEncryption.parse(bytes))
        #expect(envelope.body == "grüß <dich> & 你好")
        #expect(envelope.from == alice.bare)
        #expect(envelope.to == bob)
        #expect(envelope.time != nil)
        #expect(StanzaContentEncryption.parse(Array("not xml".utf8)) == nil)
    }
}
