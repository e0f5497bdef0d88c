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
