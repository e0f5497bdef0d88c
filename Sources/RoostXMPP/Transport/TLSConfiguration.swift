/// What a client TLS session trusts and asks for.
public struct TLSConfiguration: Sendable {
    /// The XMPP domain: sent as SNI and checked against the certificate (RFC 6125: DNS-ID, SRV-ID,
    /// and the subject CN only when the certificate has no DNS names).
    public var serverName: String
    /// Extra trust anchors (PEM file), in addition to the system store.
    public var caFile: String?
    /// SHA-256 of the leaf certificate (DER), hex; colons, spaces and case are ignored. When set, a
    /// certificate with this fingerprint is accepted even if its chain or name does not verify, and
    /// any other certificate is refused.
    public var pinnedSHA256: String?
    /// Trust the operating system's CA store (`/etc/ssl/certs`).
    public var useSystemTrustStore: Bool
    /// ALPN protocols to offer; XEP-0368 direct TLS uses `["xmpp-client"]`.
    public var alpn: [String]

    public init(serverName: String, caFile: String? = nil, pinnedSHA256: String? = nil,
                useSystemTrustStore: Bool = true, alpn: [String] = []) {
        self.serverName = serverName
        self.caFile = caFile
        self.pinnedSHA256 = pinnedSHA256
        self.useSystemTrustStore = useSystemTrustStore
        self.alpn = alpn
    }
}
