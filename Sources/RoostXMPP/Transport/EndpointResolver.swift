/// Turns an account's domain (and optional host/port override) into the ordered list of places to
/// connect to (RFC 6120 §3.2, XEP-0368).
public enum EndpointResolver {
    public static let defaultStartTLSPort: UInt16 = 5222
    public static let defaultDirectTLSPort: UInt16 = 5223

    /// An explicit host (or port) wins and is tried alone. Otherwise the SRV records are used:
    /// `_xmpps-client._tcp` (direct TLS) merged with `_xmpp-client._tcp` (STARTTLS) by priority in
    /// `.starttls` mode, only the direct-TLS ones in `.direct` mode. Without any SRV record the domain
    /// itself is tried on 5222 (STARTTLS) or 5223 (direct TLS).
    public static func endpoints(domain: String, explicitHost: String?, explicitPort: UInt16?, mode: TLSMode) -> [Endpoint] {
        endpoints(domain: domain, explicitHost: explicitHost, explicitPort: explicitPort, mode: mode,
                  lookup: SRVResolver.lookup)
    }

    /// Same, with the SRV lookup injected (tests, or a caller with its own resolver).
    static func endpoints(domain: String, explicitHost: String?, explicitPort: UInt16?, mode: TLSMode,
                          lookup: (String) -> [SRVRecord]) -> [Endpoint] {
        let direct = mode == .direct
        let defaultPort = direct ? defaultDirectTLSPort : defaultStartTLSPort
        if explicitHost != nil || explicitPort != nil {
            return [Endpoint(host: explicitHost ?? domain, port: explicitPort ?? defaultPort, directTLS: direct)]
        }

        let directRecords = lookup("_xmpps-client._tcp.\(domain)")
        let startTLSRecords = direct ? [] : lookup("_xmpp-client._tcp.\(domain)")
        let merged = mergeByPriority(directTLS: directRecords, startTLS: startTLSRecords)
        if merged.isEmpty {
            return [Endpoint(host: domain, port: defaultPort, directTLS: direct)]
        }
        return merged
    }

    /// Stable merge of two RFC 2782-ordered lists by priority; on equal priority direct TLS goes first
    /// because it saves the STARTTLS round trips.
    static func mergeByPriority(directTLS: [SRVRecord], startTLS: [SRVRecord]) -> [Endpoint] {
        var result: [Endpoint] = []
        var d = directTLS[...]
        var s = startTLS[...]
        while let nextDirect = d.first, let nextStartTLS = s.first {
            if nextDirect.priority <= nextStartTLS.priority {
                result.append(Endpoint(host: nextDirect.target, port: nextDirect.port, directTLS: true))
                d = d.dropFirst()
            } else {
                result.append(Endpoint(host: nextStartTLS.target, port: nextStartTLS.port, directTLS: false))
                s = s.dropFirst()
            }
        }
        result += d.map { Endpoint(host: $0.target, port: $0.port, directTLS: true) }
        result += s.map { Endpoint(host: $0.target, port: $0.port, directTLS: false) }
        return result
    }
}
