/// Why an action (roster change, message, vCard...) did not happen, in words the user can act on.
///
/// Travels over the control socket as `{"kind": ..., "message": ...}`, so the CLI can choose its exit status
/// whether the agent or the CLI itself did the work. Never carries a password.
public struct ActionFailure: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Codable, Sendable {
        /// The request itself was malformed (control protocol).
        case badRequest = "bad-request"
        /// An argument was invalid (a JID that does not parse, an empty message).
        case invalidArgument = "invalid-argument"
        /// The contact, request or account asked about does not exist.
        case notFound = "not-found"
        /// The server (or the contact's server) refused the action.
        case refused
        /// No connection: could not connect, authentication failed, or the account is offline in the agent.
        case connection
        /// The running agent does not serve this account (the CLI then logs in itself).
        case unknownAccount = "unknown-account"
        /// The config is unusable (e.g. a failing password_command).
        case config
        /// The request was larger than the control protocol (or the server) allows.
        case tooLarge = "too-large"
        case internalError = "internal"
    }

    public var kind: Kind
    public var message: String
    /// When a login failed on the server's certificate: its SHA-256 fingerprint, to offer pinning it
    /// (`roost config init`).
    public var refusedCertificate: String?

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
