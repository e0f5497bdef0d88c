/// Chooses the mechanism for `<auth/>` from the server's `<mechanisms/>` offer.
public enum SASLMechanismSelector {
    /// What to try, in order: the chosen mechanism, and a second one only when the first is a -PLUS
    /// exchange whose binding type was guessed (the server did not list its types, XEP-0440). A server
    /// that offers -PLUS without supporting that type fails the first exchange; RFC 6120 §6.4.5 allows
    /// starting another on the same stream, and other clients then use the mechanism without -PLUS.
    public struct Plan {
        public let first: any SASLMechanism
        public let fallback: (any SASLMechanism)?
    }

    static let hashes: [HashAlgorithm] = [.sha512, .sha256, .sha1]

    /// Picks the strongest acceptable mechanism: any SCRAM-*-PLUS (SHA-512 > SHA-256 > SHA-1) before any
    /// SCRAM without binding (same order), and PLAIN last.
    ///
    /// The binding type (`availableBindings` holds only what is sound for this TLS session):
    /// - the server lists its types (XEP-0440): the best of those we have — tls-exporter, then tls-unique,
    ///   then tls-server-end-point — and never less than -PLUS when one of them is ours;
    /// - it does not: tls-unique, the RFC 5802 default, which TLS ≤ 1.2 servers without XEP-0440 (Prosody
    ///   0.12, ejabberd 23) implement; on TLS 1.3 nothing is guessed: such servers (ejabberd 23 offers -PLUS
    ///   there too) accept only tls-unique, which TLS 1.3 does not define, and a failed attempt on every
    ///   login would count towards the server's ban on repeated authentication failures.
    /// With no usable binding, SCRAM runs with "n" when the server offers any -PLUS and "y" when it offers
    /// none (so a server that supports binding notices a stripped offer).
    ///
    /// `allowed` (upper case; `ClientConfiguration.saslMechanisms`) restricts the choice, never what the server
    /// is known to offer. PLAIN requires TLS and is refused whenever any allowed SCRAM variant is offered, so
    /// stripping some SCRAM from the offer cannot push the client to reveal the password.
    public static func plan(offered: [String], allowed: Set<String>? = nil, tlsActive: Bool, serverBindingTypes: [String]?,
                            availableBindings: [ChannelBinding], username: String, password: String) throws(SASLError) -> Plan {
        let names = Set(offered.map { $0.uppercased() })
        let usable = names.filter { allowed?.contains($0) ?? true }
        let anyPlusOffered = names.contains { $0.hasPrefix("SCRAM-") && $0.hasSuffix("-PLUS") }
        let available = tlsActive ? availableBindings : []
        let (binding, guessed) = chosenBinding(from: available, serverTypes: serverBindingTypes)

        func scram(_ hash: HashAlgorithm, _ use: SCRAMMechanism.ChannelBindingUse) -> SCRAMMechanism {
            SCRAMMechanism(hash: hash, username: username, password: password, binding: use)
        }
        let unboundUse: SCRAMMechanism.ChannelBindingUse = anyPlusOffered || available.isEmpty ? .unused : .supportedButNotOffered
        let unbound = hashes.first { usable.contains("SCRAM-\($0.scramName)") }.map { scram($0, unboundUse) }
        if let binding, let hash = hashes.first(where: { usable.contains("SCRAM-\($0.scramName)-PLUS") }) {
            return Plan(first: scram(hash, .bound(binding)), fallback: guessed ? unbound : nil)
        }
        if let unbound { return Plan(first: unbound, fallback: nil) }
        if usable.contains("PLAIN"), !usable.contains(where: { $0.hasPrefix("SCRAM-") }) {
            guard tlsActive else { throw .plainWithoutTLS }
            return Plan(first: PLAINMechanism(username: username, password: password), fallback: nil)
        }
        throw .noAcceptableMechanism(offered: offered)
    }

    /// The binding to use and whether its type was guessed rather than listed by the server.
    static func chosenBinding(from available: [ChannelBinding], serverTypes: [String]?) -> (ChannelBinding?, guessed: Bool) {
        guard let serverTypes else {
            return (available.first { if case .tlsUnique = $0 { true } else { false } }, true)
        }
        let listed = Set(serverTypes.map { $0.lowercased() })
        let preference = ["tls-exporter", "tls-unique", "tls-server-end-point"]
        for type in preference where listed.contains(type) {
            if let binding = available.first(where: { $0.typeName == type }) { return (binding, false) }
        }
        return (nil, false)
    }
}
