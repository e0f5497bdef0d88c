/// Why SASL authentication could not proceed.
///
/// Descriptions are safe to log: they never contain the password, the SCRAM salt, proofs or signatures.
public enum SASLError: Error, Equatable, CustomStringConvertible {
    /// None of the server's mechanisms is one Roost is willing to use.
    case noAcceptableMechanism(offered: [String])
    /// PLAIN was the only choice but the stream is not encrypted, so the password would travel in clear.
    case plainWithoutTLS
    /// The username is empty or contains characters SASLprep (RFC 4013) forbids.
    case invalidUsername(reason: String)
    /// The password contains characters SASLprep (RFC 4013) forbids; the reason never names the character.
    case invalidPassword(reason: String)
    /// A server message did not follow the mechanism's grammar.
    case malformedChallenge(String)
    /// The server's SCRAM nonce does not extend ours: the exchange may have been replayed or tampered with.
    case nonceMismatch
    /// The server asked for fewer PBKDF2 iterations than RFC 7677 allows.
    case iterationCountTooLow(Int)
    /// The server asked for so many PBKDF2 iterations that computing the key would stall the client.
    case iterationCountTooHigh(Int)
    /// The server reported success without proving it knows the password (no `v=`).
    case serverSignatureMissing
    /// The server's proof (`v=`) is wrong: it does not know the password, or someone is in the middle.
    case serverSignatureMismatch
    /// The server ended the SCRAM exchange with `e=<value>`.
    case serverError(String)
    /// A message arrived that the mechanism did not expect at this point of the exchange.
    case unexpectedMessage(String)
    /// OpenSSL refused a hash, HMAC, PBKDF2 or random-number operation.
    case cryptoFailure(String)
    /// The server answered `<failure/>` (RFC 6120 §6.5) with this condition and optional text.
    case failure(condition: String, text: String?)

    public var description: String {
        switch self {
        case .noAcceptableMechanism(let offered):
            let list = offered.isEmpty ? "none" : offered.joined(separator: ", ")
            return "No acceptable SASL mechanism (server offers: \(list)); Roost needs SCRAM-SHA-1/256/512, or PLAIN over TLS."
        case .plainWithoutTLS:
            return "The server only offers SASL PLAIN and the connection is not encrypted; refusing to send the password. Enable TLS."
        case .invalidUsername(let reason):
            return "The username cannot be used for SASL: \(reason)."
        case .invalidPassword(let reason):
            return "The password cannot be used for SASL: \(reason)."
        case .malformedChallenge(let reason):
            return "The server sent a malformed SASL message: \(reason)."
        case .nonceMismatch:
            return "The server's SCRAM nonce does not match ours; authentication aborted (possible tampering)."
        case .iterationCountTooLow(let count):
            return "The server asked for only \(count) SCRAM iterations (minimum 4096); refusing weak key derivation. Ask the server admin to raise it."
        case .iterationCountTooHigh(let count):
            return "The server asked for \(count) SCRAM iterations, more than Roost will compute; authentication aborted."
        case .serverSignatureMissing:
            return "The server reported SASL success without proving it knows the password; the server may be an impostor."
        case .serverSignatureMismatch:
            return "The server's SCRAM signature is wrong; the server may be an impostor or the connection intercepted."
        case .serverError(let value):
            return "The server rejected SCRAM authentication: \(value)."
        case .unexpectedMessage(let what):
            return "Unexpected SASL message: \(what)."
        case .cryptoFailure(let operation):
            return "A cryptographic operation failed (\(operation)); check the OpenSSL installation."
        case .failure(let condition, let text):
            let hint = condition == "not-authorized" ? " Check the username and password." : ""
            if let text, !text.isEmpty { return "Authentication failed: \(condition) (\(text)).\(hint)" }
            return "Authentication failed: \(condition).\(hint)"
        }
    }
}
