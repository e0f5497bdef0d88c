internal import COpenSSL

/// Small OpenSSL-backed helpers SCRAM needs besides hashing.
enum CryptoUtilities {
    /// Compares without an early exit, so timing does not reveal how many leading bytes matched.
    static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.isEmpty { return true }
        return lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }

    static func randomBytes(_ count: Int) throws(SASLError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        guard status == 1 else { throw .cryptoFailure("random number generation") }
        return bytes
    }
}
