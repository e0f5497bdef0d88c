/// SASL PLAIN (RFC 4616): sends the password itself, so the selector only allows it over TLS.
public final class PLAINMechanism: SASLMechanism {
    public let name = "PLAIN"
    public let channelBindingType: String? = nil
    private let username: String
    private let password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// `[authzid] NUL authcid NUL passwd`, with an empty authzid: the identity is derived from authcid.
    public func initialResponse() throws(SASLError) -> [UInt8] {
        let credentials = try PreparedCredentials(username: username, password: password)
        return [0] + Array(credentials.username.utf8) + [0] + credentials.password
    }

    /// An empty challenge asks for the initial response (RFC 6120 §6.4.2); PLAIN has no other round.
    public func respond(to challenge: [UInt8]) throws(SASLError) -> [UInt8] {
        guard challenge.isEmpty else { throw .unexpectedMessage("PLAIN does not take a non-empty challenge") }
        return try initialResponse()
    }

    public func verifySuccess(_ additionalData: [UInt8]?) throws(SASLError) {}
}
