/// Chooses the mechanism for `<auth/>` from the server's `<mechanisms/>` offer.
public enum SASLMechanismSelector {
    /// Picks the strongest acceptable mechanism: SCRAM-SHA-256-PLUS > SCRAM-SHA-1-PLUS > SCRAM-SHA-256 >
    /// SCRAM-SHA-1 > PLAIN.
    ///
    /// -PLUS is used only with a binding the TLS layer produced (`availableBindings`, which must hold
    /// `tlsExporter` only on TLS 1.3). When the server lists XEP-0440 types (`serverBindingTypes`), only
    /// those are used; otherwise tls-exporter is preferred over tls-server-end-point. PLAIN requires TLS
    /// and is refused whenever any SCRAM variant is offered, so stripping SCRAM from the offer cannot
    /// push the client to reveal the password.
    public static func select(offered: [String], tlsActive: Bool, serverBindingTypes: [String]?,
                              availableBindings: [ChannelBinding], username: String,
                              password: String) throws(SASLError) -> any SASLMechanism {
        let names = Set(offered.map { $0.uppercased() })
        let binding = tlsActive ? preferredBinding(from: availableBindings, serverTypes: serverBindingTypes) : nil
        let anyPlusOffered = names.contains { $0.hasPrefix("SCRAM-") && $0.hasSuffix("-PLUS") }
        let hashes: [HashAlgorithm] = [.sha256, .sha1]

        if let binding {
            for hash in hashes where names.contains("SCRAM-\(hash.scramName)-PLUS") {
                return SCRAMMechanism(hash: hash, username: username, password: password,
                                      channelBinding: binding, serverOffersPlus: true)
            }
        }
        for hash in hashes where names.contains("SCRAM-\(hash.scramName)") {
            // Announce binding support ("y") only when the server offers no -PLUS at all: a server that
            // offers -PLUS we cannot use would rightly read "y" as a downgrade attack and fail us.
            let downgradeProbe = anyPlusOffered ? nil : (binding ?? (tlsActive ? availableBindings.first : nil))
            return SCRAMMechanism(hash: hash, username: username, password: password,
                                  channelBinding: downgradeProbe, serverOffersPlus: false)
        }
        if names.contains("PLAIN"), !names.contains(where: { $0.hasPrefix("SCRAM-") }) {
            guard tlsActive else { throw .plainWithoutTLS }
            return PLAINMechanism(username: username, password: password)
        }
        throw .noAcceptableMechanism(offered: offered)
    }

    static func preferredBinding(from available: [ChannelBinding], serverTypes: [String]?) -> ChannelBinding? {
        let usable = available.filter { binding in
            serverTypes.map { types in types.contains { $0.lowercased() == binding.typeName } } ?? true
        }
        return usable.first { if case .tlsExporter = $0 { true } else { false } } ?? usable.first
    }
}
