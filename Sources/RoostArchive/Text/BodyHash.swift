/// FNV-1a 64 of the UTF-8 text as 16 hex digits: a stable, dependency-free fingerprint for dedup keys
/// (not a security boundary: trusted stanza-ids are the primary key, this only tells copies apart).
enum BodyHash {
    static func hex(_ text: String?) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (text ?? "").utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
