internal import COpenSSL

/// The hash functions SCRAM is defined over, with the primitives SCRAM builds from them.
///
/// Only non-deprecated OpenSSL 3 entry points are used (EVP_Digest, EVP_Q_mac, PKCS5_PBKDF2_HMAC).
public enum HashAlgorithm: Sendable, CaseIterable {
    case sha1
    case sha256
    case sha512

    /// The name inside SCRAM mechanism names ("SCRAM-SHA-256").
    public var scramName: String {
        switch self {
        case .sha1: "SHA-1"
        case .sha256: "SHA-256"
        case .sha512: "SHA-512"
        }
    }

    /// Output length in bytes.
    public var digestLength: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
    }

    private var openSSLName: String {
        switch self {
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha512: "SHA512"
        }
    }

    private var evpDigest: OpaquePointer? {
        switch self {
        case .sha1: EVP_sha1()
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        }
    }

    public func digest(_ data: [UInt8]) throws(SASLError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: digestLength)
        var written: UInt32 = 0
        let status = data.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &written, evpDigest, nil)
            }
        }
        guard status == 1, Int(written) == digestLength else { throw .cryptoFailure("\(openSSLName) digest") }
        return output
    }

    public func hmac(key: [UInt8], data: [UInt8]) throws(SASLError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: digestLength)
        var written = 0
        let result = key.withUnsafeBytes { keyBytes in
            data.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    // A zero-length key still needs a non-null pointer for OpenSSL's HMAC key check.
                    let keyPointer = keyBytes.baseAddress ?? UnsafeRawPointer(out.baseAddress!)
                    return EVP_Q_mac(nil, "HMAC", nil, openSSLName, nil, keyPointer, keyBytes.count,
                                     input.baseAddress, input.count, out.baseAddress, out.count, &written)
                }
            }
        }
        guard result != nil, written == digestLength else { throw .cryptoFailure("HMAC-\(openSSLName)") }
        return output
    }

    /// PBKDF2 with HMAC over this hash, producing one hash-length block (SCRAM's `Hi()`).
    public func pbkdf2(password: [UInt8], salt: [UInt8], iterations: Int) throws(SASLError) -> [UInt8] {
        guard iterations > 0, iterations <= Int(Int32.max) else { throw .cryptoFailure("PBKDF2 iteration count") }
        var output = [UInt8](repeating: 0, count: digestLength)
        let length = Int32(digestLength)
        let status = password.withUnsafeBytes { passwordBytes in
            salt.withUnsafeBufferPointer { saltBytes in
                output.withUnsafeMutableBufferPointer { out in
                    PKCS5_PBKDF2_HMAC(passwordBytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(passwordBytes.count),
                                      saltBytes.baseAddress, Int32(saltBytes.count), Int32(iterations),
                                      evpDigest, length, out.baseAddress)
                }
            }
        }
        guard status == 1 else { throw .cryptoFailure("PBKDF2-HMAC-\(openSSLName)") }
        return output
    }
}
