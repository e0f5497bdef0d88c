/// One place to try connecting to, in the order the resolver ranks them.
public struct Endpoint: Sendable, Equatable {
    public let host: String
    public let port: UInt16
    /// TLS from the first byte (XEP-0368) rather than STARTTLS.
    public let directTLS: Bool

    public init(host: String, port: UInt16, directTLS: Bool) {
        self.host = host
        self.port = port
        self.directTLS = directTLS
    }
}
