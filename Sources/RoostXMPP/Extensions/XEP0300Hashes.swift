/// XEP-0300 Use of Cryptographic Hash Functions in XMPP: `<hash xmlns='urn:xmpp:hashes:2' algo='sha-256'>base64</hash>`.
public struct CryptographicHash: Sendable, Hashable {
    /// The algorithm's name from the XEP-0300 registry (`sha-256`, `sha3-256`, `blake2b-512`, …), lowercased.
    public var algorithm: String
    /// The digest, base64.
    public var base64: String

    public init(algorithm: String, base64: String) {
        self.algorithm = algorithm.lowercased()
        self.base64 = base64
    }

    /// Every well-formed `<hash/>` child of `element` (an empty digest or a missing algorithm is skipped).
    public static func all(in element: Element) -> [CryptographicHash] {
        element.children("hash", namespace: Namespace.hashes).compactMap { hash in
            let digest = hash.text.filter { !$0.isWhitespace }
            guard let algorithm = hash[attribute: "algo"], !algorithm.isEmpty, !digest.isEmpty else { return nil }
            return CryptographicHash(algorithm: algorithm, base64: digest)
        }
    }

    public var element: Element {
        Element("hash", namespace: Namespace.hashes, attributes: [("algo", algorithm)], children: [.text(base64)])
    }
}
