import RoostXMPP
internal import COpenSSL

/// The payload encryption of each OMEMO version (the ratchet only carries the key material):
/// - OMEMO 0.3: AES-128-GCM, 12-byte IV in the header; the key material is the 16-byte key followed by the
///   16-byte tag, and `<payload/>` is the ciphertext without the tag (older senders appended the tag to the
///   payload and sent a 16-byte key: both are read).
/// - OMEMO 2 (XEP-0384 §4.4): a random 32-byte key; HKDF-SHA-256 (salt 32 zero bytes, info "OMEMO Payload")
///   gives 80 bytes: AES-256-CBC key, HMAC-SHA-256 key, IV; the key material is the key followed by the
///   HMAC of the ciphertext truncated to 16 bytes.
enum PayloadCrypto {
    struct Sealed {
        var ciphertext: [UInt8]
        var keyMaterial: [UInt8]
        var iv: [UInt8]?
    }

    static func open(_ payload: [UInt8], keyMaterial: [UInt8], iv: [UInt8]?, namespace: OMEMONamespace) -> [UInt8]? {
        switch namespace {
        case .legacy:
            guard let iv else { return nil }
            var ciphertext = payload
            let key: [UInt8]
            let tag: [UInt8]
            if keyMaterial.count >= 32 {
                key = Array(keyMaterial.prefix(16))
                tag = Array(keyMaterial[16..<32])
            } else if keyMaterial.count == 16, payload.count >= 16 {
                key = keyMaterial
                tag = Array(payload.suffix(16))
                ciphertext = Array(payload.dropLast(16))
            } else {
                return nil
            }
            return SymmetricCipher.gcm(encrypt: false, key: key, iv: iv, input: ciphertext, tag: tag)?.output
        case .omemo2:
            guard keyMaterial.count == 48, let keys = derive(Array(keyMaterial.prefix(32))) else { return nil }
            guard let mac = OpenSSLCryptoProvider.hmacSHA256(key: keys.authentication, data: payload),
                  constantTimeEqual(Array(mac.prefix(16)), Array(keyMaterial.suffix(16))) else { return nil }
            return SymmetricCipher.aes256CBC(encrypt: false, key: keys.encryption, iv: keys.iv, input: payload)
        }
    }

    static func seal(_ plaintext: [UInt8], namespace: OMEMONamespace) -> Sealed? {
        switch namespace {
        case .legacy:
            guard let key = random(16), let iv = random(12),
                  let (ciphertext, tag) = SymmetricCipher.gcm(encrypt: true, key: key, iv: iv, input: plaintext, tag: []) else { return nil }
            return Sealed(ciphertext: ciphertext, keyMaterial: key + tag, iv: iv)
        case .omemo2:
            guard let key = random(32), let keys = derive(key),
                  let ciphertext = SymmetricCipher.aes256CBC(encrypt: true, key: keys.encryption, iv: keys.iv, input: plaintext),
                  let mac = OpenSSLCryptoProvider.hmacSHA256(key: keys.authentication, data: ciphertext) else { return nil }
            return Sealed(ciphertext: ciphertext, keyMaterial: key + mac.prefix(16), iv: nil)
        }
    }

    private static func derive(_ key: [UInt8]) -> (encryption: [UInt8], authentication: [UInt8], iv: [UInt8])? {
        guard let output = SymmetricCipher.hkdfSHA256(key: key, salt: [UInt8](repeating: 0, count: 32),
                                                     info: Array("OMEMO Payload".utf8), length: 80) else { return nil }
        return (Array(output[0..<32]), Array(output[32..<64]), Array(output[64..<80]))
    }

    static func random(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        return RAND_bytes(&bytes, Int32(count)) == 1 ? bytes : nil
    }

    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count, !lhs.isEmpty else { return false }
        return CRYPTO_memcmp(lhs, rhs, lhs.count) == 0
    }
}
