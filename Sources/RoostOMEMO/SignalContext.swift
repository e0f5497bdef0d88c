internal import COMEMO
import RoostXMPP
import Foundation

/// Owns libomemo-c's global context (with the OpenSSL crypto provider) and wraps the library calls Roost
/// makes, freeing every object it gets. Not thread-safe: `OMEMODevice` serialises all calls.
final class SignalContext {
    let handle: OpaquePointer

    init() throws(OMEMOError) {
        var created: OpaquePointer?
        guard signal_context_create(&created, nil) == 0, let created else {
            throw .library("cannot create the library context", code: SG_ERR_NOMEM)
        }
        handle = created
        let rc = OpenSSLCryptoProvider.install(on: created)
        guard rc == 0 else {
            signal_context_destroy(created)
            throw .library("cannot install the crypto provider", code: rc)
        }
    }

    deinit { signal_context_destroy(handle) }

    private static func check(_ rc: Int32, _ what: String) throws(OMEMOError) {
        if rc < 0 { throw .library(what, code: rc) }
    }

    /// Copies a `signal_buffer` and frees it.
    private static func take(_ buffer: OpaquePointer?) -> [UInt8] {
        guard let buffer else { return [] }
        defer { signal_buffer_bzero_free(buffer) }
        return Array(UnsafeBufferPointer(start: signal_buffer_data(buffer), count: signal_buffer_len(buffer)))
    }

    private static func bytes(_ pointer: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: pointer, count: count))
    }

    // MARK: Keys

    /// A new identity key pair, serialized (`ratchet_identity_key_pair_serialize`).
    func generateIdentityKeyPair() throws(OMEMOError) -> [UInt8] {
        var pair: OpaquePointer?
        try Self.check(signal_protocol_key_helper_generate_identity_key_pair(&pair, handle), "generating the identity key")
        defer { roost_signal_unref(UnsafeMutableRawPointer(pair)) }
        var buffer: OpaquePointer?
        try Self.check(ratchet_identity_key_pair_serialize(&buffer, pair), "serializing the identity key")
        return Self.take(buffer)
    }

    /// The identity key pair's public key (33 bytes, type-prefixed) and private key (32 bytes).
    func identityKeyPair(serialized: [UInt8]) throws(OMEMOError) -> (publicKey: [UInt8], privateKey: [UInt8]) {
        var pair: OpaquePointer?
        let rc = serialized.withUnsafeBufferPointer { ratchet_identity_key_pair_deserialize(&pair, $0.baseAddress, $0.count, handle) }
        try Self.check(rc, "reading the identity key")
        defer { roost_signal_unref(UnsafeMutableRawPointer(pair)) }
        var publicBuffer: OpaquePointer?
        var privateBuffer: OpaquePointer?
        try Self.check(ec_public_key_serialize(&publicBuffer, ratchet_identity_key_pair_get_public(pair)), "serializing the public key")
        let publicKey = Self.take(publicBuffer)
        try Self.check(ec_private_key_serialize(&privateBuffer, ratchet_identity_key_pair_get_private(pair)), "serializing the private key")
        return (publicKey, Self.take(privateBuffer))
    }

    private func decodePublicKey(_ bytes: [UInt8], edwards: Bool = false) throws(OMEMOError) -> OpaquePointer {
        var key: OpaquePointer?
        let rc = bytes.withUnsafeBufferPointer { buffer in
            edwards ? curve_decode_point_ed(&key, buffer.baseAddress, buffer.count, handle)
                : curve_decode_point(&key, buffer.baseAddress, buffer.count, handle)
        }
        guard rc >= 0, let key else { throw .invalidBundle("bad public key (\(bytes.count) bytes)") }
        return key
    }

    private func decodeMontgomeryKey(_ bytes: [UInt8]) throws(OMEMOError) -> OpaquePointer {
        var key: OpaquePointer?
        let rc = bytes.withUnsafeBufferPointer { curve_decode_point_mont(&key, $0.baseAddress, $0.count, handle) }
        guard rc >= 0, let key else { throw .invalidBundle("bad public key (\(bytes.count) bytes)") }
        return key
    }

    /// Hex of the 32-byte Curve25519 form of a serialized public key: the fingerprint users compare.
    func fingerprint(ofSerializedKey serialized: [UInt8]) throws(OMEMOError) -> String {
        let key = try decodePublicKey(serialized)
        defer { roost_signal_unref(UnsafeMutableRawPointer(key)) }
        return Self.take(ec_public_key_get_mont(key)).hex
    }

    /// The Ed25519 form (OMEMO 2's identity key encoding and fingerprint).
    func edwardsForm(ofSerializedKey serialized: [UInt8]) throws(OMEMOError) -> [UInt8] {
        let key = try decodePublicKey(serialized)
        defer { roost_signal_unref(UnsafeMutableRawPointer(key)) }
        return Self.take(ec_public_key_get_ed(key))
    }

    func generateSignedPreKey(identity serialized: [UInt8], id: UInt32, timestamp: UInt64) throws(OMEMOError) -> [UInt8] {
        var pair: OpaquePointer?
        let rc = serialized.withUnsafeBufferPointer { ratchet_identity_key_pair_deserialize(&pair, $0.baseAddress, $0.count, handle) }
        try Self.check(rc, "reading the identity key")
        defer { roost_signal_unref(UnsafeMutableRawPointer(pair)) }
        var signed: OpaquePointer?
        try Self.check(signal_protocol_key_helper_generate_signed_pre_key(&signed, pair, id, timestamp, handle), "generating a signed prekey")
        defer { roost_signal_unref(UnsafeMutableRawPointer(signed)) }
        var buffer: OpaquePointer?
        try Self.check(session_signed_pre_key_serialize(&buffer, signed), "serializing a signed prekey")
        return Self.take(buffer)
    }

    struct SignedPreKey {
        var publicLegacy: [UInt8]
        var publicOMEMO2: [UInt8]
        var signatureLegacy: [UInt8]
        var signatureOMEMO2: [UInt8]
    }

    func signedPreKey(record: [UInt8]) throws(OMEMOError) -> SignedPreKey {
        var signed: OpaquePointer?
        let rc = record.withUnsafeBufferPointer { session_signed_pre_key_deserialize(&signed, $0.baseAddress, $0.count, handle) }
        try Self.check(rc, "reading a signed prekey")
        defer { roost_signal_unref(UnsafeMutableRawPointer(signed)) }
        let publicKey = ec_key_pair_get_public(session_signed_pre_key_get_key_pair(signed))
        var legacy: OpaquePointer?
        var omemo2: OpaquePointer?
        try Self.check(ec_public_key_serialize(&legacy, publicKey), "serializing a signed prekey")
        try Self.check(ec_public_key_serialize_omemo(&omemo2, publicKey), "serializing a signed prekey")
        return SignedPreKey(publicLegacy: Self.take(legacy), publicOMEMO2: Self.take(omemo2),
                            signatureLegacy: Self.bytes(session_signed_pre_key_get_signature(signed), session_signed_pre_key_get_signature_len(signed)),
                            signatureOMEMO2: Self.bytes(session_signed_pre_key_get_signature_omemo(signed),
                                                        session_signed_pre_key_get_signature_omemo_len(signed)))
    }

    /// `count` new one-time prekeys from id `start`, serialized.
    func generatePreKeys(start: UInt32, count: Int) throws(OMEMOError) -> [(UInt32, [UInt8])] {
        var head: OpaquePointer?
        try Self.check(signal_protocol_key_helper_generate_pre_keys(&head, start, UInt32(count), handle), "generating prekeys")
        defer { signal_protocol_key_helper_key_list_free(head) }
        var result: [(UInt32, [UInt8])] = []
        var node = head
        while let current = node {
            let preKey = signal_protocol_key_helper_key_list_element(current)
            var buffer: OpaquePointer?
            try Self.check(session_pre_key_serialize(&buffer, preKey), "serializing a prekey")
            result.append((session_pre_key_get_id(preKey), Self.take(buffer)))
            node = signal_protocol_key_helper_key_list_next(current)
        }
        return result
    }

    func preKeyPublic(record: [UInt8], omemo2: Bool) throws(OMEMOError) -> [UInt8] {
        var preKey: OpaquePointer?
        let rc = record.withUnsafeBufferPointer { session_pre_key_deserialize(&preKey, $0.baseAddress, $0.count, handle) }
        try Self.check(rc, "reading a prekey")
        defer { roost_signal_unref(UnsafeMutableRawPointer(preKey)) }
        let publicKey = ec_key_pair_get_public(session_pre_key_get_key_pair(preKey))
        var buffer: OpaquePointer?
        try Self.check(omemo2 ? ec_public_key_serialize_omemo(&buffer, publicKey) : ec_public_key_serialize(&buffer, publicKey),
                       "serializing a prekey")
        return Self.take(buffer)
    }

    /// The remote identity key (serialized, 33 bytes) of a stored session.
    func remoteIdentity(sessionRecord: [UInt8]) throws(OMEMOError) -> [UInt8]? {
        var record: OpaquePointer?
        let rc = sessionRecord.withUnsafeBufferPointer { session_record_deserialize(&record, $0.baseAddress, $0.count, handle) }
        try Self.check(rc, "reading a session")
        defer { roost_signal_unref(UnsafeMutableRawPointer(record)) }
        guard let state = session_record_get_state(record), let key = session_state_get_remote_identity_key(state) else { return nil }
        var buffer: OpaquePointer?
        try Self.check(ec_public_key_serialize(&buffer, key), "serializing an identity key")
        return Self.take(buffer)
    }

    // MARK: Sessions

    private func withAddress<T>(jid: String, device: UInt32, _ body: (UnsafePointer<signal_protocol_address>) throws -> T) rethrows -> T {
        var name = Array(jid.utf8CString)
        return try name.withUnsafeMutableBufferPointer { buffer in
            var address = signal_protocol_address(name: buffer.baseAddress, name_len: buffer.count - 1, device_id: Int32(bitPattern: device))
            return try withUnsafePointer(to: &address) { try body($0) }
        }
    }

    func processBundle(_ bundle: OMEMOBundle, namespace: OMEMONamespace, jid: String, device: UInt32, store: OpaquePointer) throws(OMEMOError) {
        guard let preKey = bundle.preKeys.randomElement() else { throw .invalidBundle("no prekeys") }
        let omemo2 = namespace == .omemo2
        let identity = try decodePublicKey(bundle.identityKey, edwards: omemo2)
        defer { roost_signal_unref(UnsafeMutableRawPointer(identity)) }
        let signed = omemo2 ? try decodeMontgomeryKey(bundle.signedPreKey) : try decodePublicKey(bundle.signedPreKey)
        defer { roost_signal_unref(UnsafeMutableRawPointer(signed)) }
        let oneTime = omemo2 ? try decodeMontgomeryKey(preKey.key) : try decodePublicKey(preKey.key)
        defer { roost_signal_unref(UnsafeMutableRawPointer(oneTime)) }
        var created: OpaquePointer?
        let rc = bundle.signedPreKeySignature.withUnsafeBufferPointer { signature in
            session_pre_key_bundle_create(&created, device, Int32(bitPattern: device), preKey.id, oneTime, bundle.signedPreKeyID, signed,
                                          signature.baseAddress, signature.count, identity)
        }
        try Self.check(rc, "reading the bundle")
        defer { roost_signal_unref(UnsafeMutableRawPointer(created)) }
        let result: Int32 = withAddress(jid: jid, device: device) { address in
            var builder: OpaquePointer?
            guard session_builder_create(&builder, store, address, handle) == 0 else { return SG_ERR_NOMEM }
            defer { session_builder_free(builder) }
            session_builder_set_version(builder, namespace.libraryVersion)
            return session_builder_process_pre_key_bundle(builder, created)
        }
        if result == SG_ERR_INVALID_KEY || result == SG_ERR_VRF_SIG_VERIF_FAILED {
            throw .invalidBundle("the signed prekey's signature does not verify")
        }
        try Self.check(result, "building a session with \(jid) device \(device)")
    }

    func decryptKey(_ data: [UInt8], isKeyExchange: Bool, namespace: OMEMONamespace, sender: String, senderDevice: UInt32,
                    store: OpaquePointer) throws(OMEMODecryptionFailure) -> [UInt8] {
        let omemo2 = namespace == .omemo2
        let rc: Int32
        var plaintext: OpaquePointer?
        (rc, plaintext) = withAddress(jid: sender, device: senderDevice) { address -> (Int32, OpaquePointer?) in
            var cipher: OpaquePointer?
            guard session_cipher_create(&cipher, store, address, handle) == 0 else { return (SG_ERR_NOMEM, nil) }
            defer { session_cipher_free(cipher) }
            session_cipher_set_version(cipher, namespace.libraryVersion)
            var output: OpaquePointer?
            if isKeyExchange {
                var message: OpaquePointer?
                let parsed = data.withUnsafeBufferPointer { bytes in
                    omemo2 ? pre_key_signal_message_deserialize_omemo(&message, bytes.baseAddress, bytes.count, senderDevice, handle)
                        : pre_key_signal_message_deserialize(&message, bytes.baseAddress, bytes.count, handle)
                }
                guard parsed == 0 else { return (parsed, nil) }
                defer { roost_signal_unref(UnsafeMutableRawPointer(message)) }
                return (session_cipher_decrypt_pre_key_signal_message(cipher, message, nil, &output), output)
            }
            var message: OpaquePointer?
            let parsed = data.withUnsafeBufferPointer { bytes in
                omemo2 ? signal_message_deserialize_omemo(&message, bytes.baseAddress, bytes.count, handle)
                    : signal_message_deserialize(&message, bytes.baseAddress, bytes.count, handle)
            }
            guard parsed == 0 else { return (parsed, nil) }
            defer { roost_signal_unref(UnsafeMutableRawPointer(message)) }
            return (session_cipher_decrypt_signal_message(cipher, message, nil, &output), output)
        }
        guard rc == 0 else {
            if let plaintext { signal_buffer_bzero_free(plaintext) }
            switch rc {
            case SG_ERR_NO_SESSION: throw .noSession
            case SG_ERR_DUPLICATE_MESSAGE: throw .duplicate
            case SG_ERR_INVALID_KEY_ID: throw .unknownPreKey
            case SG_ERR_INVALID_MAC: throw .corruptKey("bad MAC")
            case SG_ERR_INVALID_PROTO_BUF, SG_ERR_INVALID_MESSAGE: throw .corruptKey("not a valid message")
            case SG_ERR_INVALID_KEY: throw .corruptKey("invalid key")
            case SG_ERR_LEGACY_MESSAGE, SG_ERR_INVALID_VERSION: throw .corruptKey("unsupported version")
            default: throw .corruptKey("libomemo-c error \(rc)")
            }
        }
        return Self.take(plaintext)
    }

    func encryptKey(_ material: [UInt8], namespace: OMEMONamespace, jid: String, device: UInt32,
                    store: OpaquePointer) throws(OMEMOError) -> (data: [UInt8], isKeyExchange: Bool) {
        let (rc, data, exchange) = withAddress(jid: jid, device: device) { address -> (Int32, [UInt8], Bool) in
            var cipher: OpaquePointer?
            guard session_cipher_create(&cipher, store, address, handle) == 0 else { return (SG_ERR_NOMEM, [], false) }
            defer { session_cipher_free(cipher) }
            session_cipher_set_version(cipher, namespace.libraryVersion)
            var message: OpaquePointer?
            let rc = material.withUnsafeBufferPointer { session_cipher_encrypt(cipher, $0.baseAddress, $0.count, &message) }
            guard rc == 0, let message else { return (rc, [], false) }
            defer { roost_signal_unref(UnsafeMutableRawPointer(message)) }
            let serialized = ciphertext_message_get_serialized(message)
            let bytes = Array(UnsafeBufferPointer(start: signal_buffer_data(serialized), count: signal_buffer_len(serialized)))
            return (0, bytes, ciphertext_message_get_type(message) == CIPHERTEXT_PREKEY_TYPE)
        }
        if rc == SG_ERR_NO_SESSION { throw .noSession(jid: jid, device: device) }
        try Self.check(rc, "encrypting for \(jid) device \(device)")
        return (data, exchange)
    }
}
