import Foundation
internal import COpenSSL

/// An incremental hash over a file's bytes, by its XEP-0300 algorithm name. Owns an OpenSSL `EVP_MD_CTX`.
final class FileDigest {
    /// XEP-0300 names Roost can check, with OpenSSL's. (blake2b-256 needs a parameterised digest that
    /// `EVP_get_digestbyname` does not offer; a file advertised only with it is kept unchecked.)
    static let algorithms: [String: String] = [
        "sha-1": "SHA1", "sha-224": "SHA224", "sha-256": "SHA256", "sha-384": "SHA384", "sha-512": "SHA512",
        "sha3-256": "SHA3-256", "sha3-512": "SHA3-512", "blake2b-512": "BLAKE2B512",
    ]

    let algorithm: String
    private let context: OpaquePointer

    /// nil for an algorithm Roost cannot compute.
    init?(algorithm: String) {
        guard let name = Self.algorithms[algorithm.lowercased()], let md = EVP_get_digestbyname(name),
              let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestInit_ex(context, md, nil) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        self.algorithm = algorithm.lowercased()
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest; call once.
    func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }
}
