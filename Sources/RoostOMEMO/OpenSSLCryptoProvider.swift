internal import COMEMO
internal import COpenSSL
import Foundation

/// The crypto callbacks libomemo-c needs (random, HMAC-SHA-256, SHA-512, AES-CTR/CBC), on OpenSSL 3.
///
/// libomemo-c ships no crypto of its own; Dino plugs in libgcrypt, we plug in the OpenSSL Roost already
/// links. Only non-deprecated entry points are used. HMAC and SHA-512 are computed in one shot at `final`
/// from the bytes collected by `update` (libsignal only MACs and hashes short inputs), which keeps every
/// OpenSSL object local to one call.
enum OpenSSLCryptoProvider {
    static func install(on context: OpaquePointer) -> Int32 {
        var provider = signal_crypto_provider()
        provider.random_func = { data, length, _ in
            guard let data else { return length == 0 ? 0 : SG_ERR_INVAL }
            return RAND_bytes(data, Int32(length)) == 1 ? 0 : SG_ERR_UNKNOWN
        }
        provider.hmac_sha256_init_func = { context, key, keyLength, _ in
            let box = OpenSSLCryptoProvider.Accumulator(key: key.map { Array(UnsafeBufferPointer(start: $0, count: keyLength)) } ?? [])
            context?.pointee = Unmanaged.passRetained(box).toOpaque()
            return 0
        }
        provider.hmac_sha256_update_func = { context, data, length, _ in
            guard let context else { return SG_ERR_INVAL }
            OpenSSLCryptoProvider.Accumulator.from(context).append(data, length)
            return 0
        }
        provider.hmac_sha256_final_func = { context, output, _ in
            guard let context, let output else { return SG_ERR_INVAL }
            let box = OpenSSLCryptoProvider.Accumulator.from(context)
            guard let mac = OpenSSLCryptoProvider.hmacSHA256(key: box.key, data: box.bytes) else { return SG_ERR_UNKNOWN }
            return OpenSSLCryptoProvider.emit(mac, to: output)
        }
        provider.hmac_sha256_cleanup_func = { context, _ in
            if let context { Unmanaged<OpenSSLCryptoProvider.Accumulator>.fromOpaque(context).release() }
        }
        provider.sha512_digest_init_func = { context, _ in
            context?.pointee = Unmanaged.passRetained(OpenSSLCryptoProvider.Accumulator(key: [])).toOpaque()
            return 0
        }
        provider.sha512_digest_update_func = { context, data, length, _ in
            guard let context else { return SG_ERR_INVAL }
            OpenSSLCryptoProvider.Accumulator.from(context).append(data, length)
            return 0
        }
        provider.sha512_digest_final_func = { context, output, _ in
            guard let context, let output else { return SG_ERR_INVAL }
            let box = OpenSSLCryptoProvider.Accumulator.from(context)
            var digest = [UInt8](repeating: 0, count: 64)
            var written: UInt32 = 0
            let ok = box.bytes.withUnsafeBufferPointer { input in
                digest.withUnsafeMutableBufferPointer { EVP_Digest(input.baseAddress, input.count, $0.baseAddress, &written, EVP_sha512(), nil) }
            }
            box.bytes.removeAll(keepingCapacity: true)   // "prepare the context for reuse"
            guard ok == 1, written == 64 else { return SG_ERR_UNKNOWN }
            return OpenSSLCryptoProvider.emit(digest, to: output)
        }
        provider.sha512_digest_cleanup_func = { context, _ in
            if let context { Unmanaged<OpenSSLCryptoProvider.Accumulator>.fromOpaque(context).release() }
        }
        provider.encrypt_func = { output, cipher, key, keyLength, iv, ivLength, input, inputLength, _ in
            guard let output else { return SG_ERR_INVAL }
            return OpenSSLCryptoProvider.run(encrypt: true, cipher: cipher, key: key, keyLength: keyLength, iv: iv, ivLength: ivLength,
                       input: input, inputLength: inputLength, output: output)
        }
        provider.decrypt_func = { output, cipher, key, keyLength, iv, ivLength, input, inputLength, _ in
            guard let output else { return SG_ERR_INVAL }
            return OpenSSLCryptoProvider.run(encrypt: false, cipher: cipher, key: key, keyLength: keyLength, iv: iv, ivLength: ivLength,
                       input: input, inputLength: inputLength, output: output)
        }
        return signal_context_set_crypto_provider(context, &provider)
    }

    /// The bytes of one HMAC or digest computation, collected until `final`.
    fileprivate final class Accumulator {
        let key: [UInt8]
        var bytes: [UInt8] = []

        init(key: [UInt8]) { self.key = key }

        static func from(_ pointer: UnsafeMutableRawPointer) -> Accumulator {
            Unmanaged<OpenSSLCryptoProvider.Accumulator>.fromOpaque(pointer).takeUnretainedValue()
        }

        func append(_ data: UnsafePointer<UInt8>?, _ length: Int) {
            guard let data, length > 0 else { return }
            bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
        }
    }

    fileprivate static func emit(_ bytes: [UInt8], to output: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
        guard let buffer = bytes.withUnsafeBufferPointer({ signal_buffer_create($0.baseAddress, $0.count) }) else { return SG_ERR_NOMEM }
        output.pointee = buffer
        return 0
    }

    static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8]? {
        var mac = [UInt8](repeating: 0, count: 32)
        var written = 0
        let result = key.withUnsafeBufferPointer { keyBytes in
            data.withUnsafeBufferPointer { input in
                mac.withUnsafeMutableBufferPointer { out in
                    // OpenSSL rejects a null key pointer even for an empty key.
                    EVP_Q_mac(nil, "HMAC", nil, "SHA256", nil, keyBytes.baseAddress ?? UnsafePointer(out.baseAddress!), keyBytes.count,
                              input.baseAddress, input.count, out.baseAddress, out.count, &written)
                }
            }
        }
        return result != nil && written == 32 ? mac : nil
    }

    fileprivate static func run(encrypt: Bool, cipher mode: Int32, key: UnsafePointer<UInt8>?, keyLength: Int,
                            iv: UnsafePointer<UInt8>?, ivLength: Int, input: UnsafePointer<UInt8>?, inputLength: Int,
                            output: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
        let algorithm: OpaquePointer?
        switch (mode, keyLength) {
        case (SG_CIPHER_AES_CBC_PKCS5, 16): algorithm = EVP_aes_128_cbc()
        case (SG_CIPHER_AES_CBC_PKCS5, 24): algorithm = EVP_aes_192_cbc()
        case (SG_CIPHER_AES_CBC_PKCS5, 32): algorithm = EVP_aes_256_cbc()
        case (SG_CIPHER_AES_CTR_NOPADDING, 16): algorithm = EVP_aes_128_ctr()
        case (SG_CIPHER_AES_CTR_NOPADDING, 24): algorithm = EVP_aes_192_ctr()
        case (SG_CIPHER_AES_CTR_NOPADDING, 32): algorithm = EVP_aes_256_ctr()
        default: return SG_ERR_UNKNOWN
        }
        guard ivLength == 16, let key, let iv else { return SG_ERR_UNKNOWN }
        let bytes = input.map { Array(UnsafeBufferPointer(start: $0, count: inputLength)) } ?? []
        guard let result = SymmetricCipher.apply(algorithm: algorithm, encrypt: encrypt, key: key, iv: iv, input: bytes,
                                                 padding: mode == SG_CIPHER_AES_CBC_PKCS5) else { return SG_ERR_UNKNOWN }
        return OpenSSLCryptoProvider.emit(result, to: output)
    }
}

/// One-shot AES through OpenSSL's EVP interface: the ratchet's CBC/CTR (above) and the OMEMO payloads.
enum SymmetricCipher {
    static func apply(algorithm: OpaquePointer?, encrypt: Bool, key: UnsafePointer<UInt8>, iv: UnsafePointer<UInt8>,
                      input: [UInt8], padding: Bool) -> [UInt8]? {
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, algorithm, nil, key, iv, encrypt ? 1 : 0) == 1 else { return nil }
        EVP_CIPHER_CTX_set_padding(context, padding ? 1 : 0)
        var output = [UInt8](repeating: 0, count: input.count + 32)
        var written: Int32 = 0
        var total: Int32 = 0
        let ok = output.withUnsafeMutableBufferPointer { out -> Bool in
            let updated = input.withUnsafeBufferPointer { EVP_CipherUpdate(context, out.baseAddress, &written, $0.baseAddress, Int32($0.count)) }
            guard updated == 1 else { return false }
            total = written
            guard EVP_CipherFinal_ex(context, out.baseAddress! + Int(total), &written) == 1 else { return false }
            total += written
            return true
        }
        guard ok else { return nil }
        return Array(output.prefix(Int(total)))
    }

    /// AES-GCM (OMEMO 0.3 payloads: 128-bit key, 12- or 16-byte IV, 16-byte tag). Returns nil when the tag
    /// does not verify.
    static func gcm(encrypt: Bool, key: [UInt8], iv: [UInt8], input: [UInt8], tag: [UInt8]) -> (output: [UInt8], tag: [UInt8])? {
        let algorithm: OpaquePointer? = switch key.count {
        case 16: EVP_aes_128_gcm()
        case 32: EVP_aes_256_gcm()
        default: nil
        }
        guard algorithm != nil, !iv.isEmpty, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, algorithm, nil, nil, nil, encrypt ? 1 : 0) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
              EVP_CipherInit_ex(context, nil, nil, key, iv, encrypt ? 1 : 0) == 1 else { return nil }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        let updated = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { EVP_CipherUpdate(context, out.baseAddress, &written, $0.baseAddress, Int32($0.count)) }
        }
        guard updated == 1 else { return nil }
        let produced = Int(written)
        if !encrypt {
            guard tag.count == 16 else { return nil }
            var expected = tag
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &expected) == 1 else { return nil }
        }
        var finalBytes = [UInt8](repeating: 0, count: 16)
        guard EVP_CipherFinal_ex(context, &finalBytes, &written) == 1 else { return nil }
        var resultTag: [UInt8] = []
        if encrypt {
            resultTag = [UInt8](repeating: 0, count: 16)
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &resultTag) == 1 else { return nil }
        }
        return (Array(output.prefix(produced)), resultTag)
    }

    static func aes256CBC(encrypt: Bool, key: [UInt8], iv: [UInt8], input: [UInt8]) -> [UInt8]? {
        guard key.count == 32, iv.count == 16 else { return nil }
        return key.withUnsafeBufferPointer { k in
            iv.withUnsafeBufferPointer { v in
                apply(algorithm: EVP_aes_256_cbc(), encrypt: encrypt, key: k.baseAddress!, iv: v.baseAddress!, input: input, padding: true)
            }
        }
    }

    /// HKDF-SHA-256 (RFC 5869) through OpenSSL's KDF interface.
    static func hkdfSHA256(key: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8]? {
        guard let kdf = EVP_KDF_fetch(nil, "HKDF", nil) else { return nil }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else { return nil }
        defer { EVP_KDF_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: length)
        // OSSL_PARAM keeps the pointers it is given until the derive call, so every string must outlive it
        // (a Swift literal passed directly would be a temporary).
        let names: [UnsafeMutablePointer<CChar>] = ["digest", "key", "salt", "info", "SHA256"].map { (name: String) in strdup(name)! }
        defer { names.forEach { free($0) } }
        var keyBytes = key, saltBytes = salt, infoBytes = info
        let status = keyBytes.withUnsafeMutableBytes { k in
            saltBytes.withUnsafeMutableBytes { s in
                infoBytes.withUnsafeMutableBytes { i in
                    var parameters = [
                        OSSL_PARAM_construct_utf8_string(names[0], names[4], 0),
                        OSSL_PARAM_construct_octet_string(names[1], k.baseAddress, k.count),
                        OSSL_PARAM_construct_octet_string(names[2], s.baseAddress, s.count),
                        OSSL_PARAM_construct_octet_string(names[3], i.baseAddress, i.count),
                        OSSL_PARAM_construct_end(),
                    ]
                    return output.withUnsafeMutableBufferPointer { out in
                        EVP_KDF_derive(context, out.baseAddress, out.count, &parameters)
                    }
                }
            }
        }
        return status == 1 ? output : nil
    }
}
