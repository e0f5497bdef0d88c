import Foundation

/// XEP-0115 Entity Capabilities: a hash of our disco#info sent with presence, so peers need not ask.
public enum EntityCapabilities {
    public static let node = "https://roost.invalid/caps"

    /// §5.1 verification string: identities `category/type/lang/name<`, then features `<`, sorted.
    public static func verificationString(for info: DiscoInfo) -> String {
        var s = ""
        let identities = info.identities.map { "\($0.category)/\($0.type)/\($0.lang ?? "")/\($0.name ?? "")" }.sorted()
        for identity in identities { s += identity + "<" }
        for feature in info.features.sorted() { s += feature + "<" }
        return s
    }

    public static func hash(for info: DiscoInfo) -> String {
        Data((try? HashAlgorithm.sha1.digest(Array(verificationString(for: info).utf8))) ?? []).base64EncodedString()
    }

    public static func element(for info: DiscoInfo, node: String) -> Element {
        Element("c", namespace: Namespace.caps, attributes: [("hash", "sha-1"), ("node", node), ("ver", hash(for: info))])
    }
}

extension EntityCapabilities {
    /// Advertised; the hash itself goes with every presence (`XMPPClient.currentPresence`).
    static let module = ClientModule(name: "XEP-0115 Entity Capabilities", features: [Namespace.caps])
}
