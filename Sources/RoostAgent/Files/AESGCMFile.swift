import Foundation
internal import COpenSSL
import RoostArchive

/// XEP-0454 (OMEMO media sharing) `aesgcm://` links: the file at the https URL is AES-256-GCM ciphertext
/// followed by the 16-byte tag; the fragment holds the IV (12 bytes, or 16 from older clients) and the key
/// (32 bytes) in hex. Decrypted with OpenSSL as it streams in; the plaintext counts only if the tag verifies.
/// The key never leaves this type: logs and errors name the file, never the fragment.
final class AESGCMFile {
    static let tagLength = 16

    /// The https URL to download and the decryption parameters, or nil when `url` is not a valid aesgcm link.
    static func parse(_ url: String) -> (https: String, key: [UInt8], iv: [UInt8])? {
        guard url.lowercased().hasPrefix("aesgcm://"), let hash = url.lastIndex(of: "#") else { return nil }
        let fragment = url[url.index(after: hash)...]
        guard fragment.count == 88 || fragment.count == 96, let bytes = Hex.bytes(fragment) else { return nil }
        let ivLength = bytes.count - 32
        return ("https://" + url[url.index(url.startIndex, offsetBy: 9)..<hash], Array(bytes[ivLength...]), Array(bytes[..<ivLength]))
    }

    /// Encrypts the file at `source` into `target` (0600) with a fresh random key and 12-byte IV, ciphertext
    /// then tag, as XEP-0454 senders do; returns the URL fragment (IV then key, in hex) that decrypts it.
    static func seal(_ source: String, into target: String) throws(ActionFailure) -> String {
        var key = [UInt8](repeating: 0, count: 32), iv = [UInt8](repeating: 0, count: 12)
        guard RAND_bytes(&key, 32) == 1, RAND_bytes(&iv, 12) == 1, let context = EVP_CIPHER_CTX_new() else {
            throw ActionFailure(.internalError, "no random numbers for the file key")
        }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, iv) == 1 else {
            throw ActionFailure(.internalError, "AES-256-GCM is not available")
        }
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw ActionFailure(.internalError, "cannot read \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let output = open(target, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw ActionFailure(.internalError, "cannot create \(target): \(String(cString: strerror(errno)))") }
        defer { close(output) }
        func write(_ bytes: [UInt8], _ count: Int) throws(ActionFailure) {
            var offset = 0
            while offset < count {
                let n = bytes.withUnsafeBytes { Glibc.write(output, $0.baseAddress! + offset, count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ActionFailure(.internalError, "cannot write \(target): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
        var plain = [UInt8](repeating: 0, count: 1 << 20)
        var sealed = [UInt8](repeating: 0, count: (1 << 20) + 32)
        while true {
            let n = plain.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ActionFailure(.internalError, "cannot read \(source): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            var written: Int32 = 0
            guard EVP_EncryptUpdate(context, &sealed, &written, plain, Int32(n)) == 1 else {
                throw ActionFailure(.internalError, "encrypting \(source) failed")
            }
            try write(sealed, Int(written))
        }
        var written: Int32 = 0
        var tag = [UInt8](repeating: 0, count: tagLength)
        guard EVP_EncryptFinal_ex(context, &sealed, &written) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), &tag) == 1 else {
            throw ActionFailure(.internalError, "encrypting \(source) failed")
        }
        try write(sealed, Int(written))
        try write(tag, tagLength)
        return Hex.string(iv + key)
    }

    private let context: OpaquePointer
    /// The last bytes seen, which may be the tag: only bytes followed by at least 16 more are ciphertext.
    private var held: [UInt8] = []

    init?(key: [UInt8], iv: [UInt8]) {
        guard key.count == 32, let context = EVP_CIPHER_CTX_new() else { return nil }
        self.context = context
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
              EVP_DecryptInit_ex(context, nil, nil, key, iv) == 1 else {
            EVP_CIPHER_CTX_free(context)
            return nil
        }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    /// Decrypts what can be decrypted of `bytes` and hands the plaintext to `output`.
    func update(_ bytes: UnsafeRawBufferPointer, output: ([UInt8]) throws -> Void) rethrows {
        held.append(contentsOf: bytes)
        let ready = held.count - Self.tagLength
        guard ready > 0 else { return }
        var plain = [UInt8](repeating: 0, count: ready + 16)
        var written: Int32 = 0
        let ok = held.withUnsafeBufferPointer { EVP_DecryptUpdate(context, &plain, &written, $0.baseAddress, Int32(ready)) }
        held.removeFirst(ready)
        guard ok == 1 else { return }
        if written > 0 { try output(Array(plain.prefix(Int(written)))) }
    }

    /// Checks the tag; false means the file was tampered with or the key is wrong, and nothing may be kept.
    func finish(output: ([UInt8]) throws -> Void) rethrows -> Bool {
        guard held.count == Self.tagLength else { return false }
        var tag = held
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagLength), &tag) == 1 else { return false }
        var rest = [UInt8](repeating: 0, count: 32)
        var written: Int32 = 0
        guard EVP_DecryptFinal_ex(context, &rest, &written) == 1 else { return false }
        if written > 0 { try output(Array(rest.prefix(Int(written)))) }
        return true
    }
}
