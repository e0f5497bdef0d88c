/// How TLS is started on a client connection.
public enum TLSMode: String, Sendable {
    /// Plain TCP, then `<starttls/>` (RFC 6120); SRV discovery also uses direct-TLS records when offered.
    case starttls
    /// TLS from the first byte (XEP-0368), typically on port 5223.
    case direct
}
