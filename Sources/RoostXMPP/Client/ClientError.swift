/// Why a connection, login or request failed, in words a user can act on.
///
/// Never carries a password, SCRAM salt or proof: SASL errors are reduced to their condition.
public enum ClientError: Error, CustomStringConvertible, Sendable {
    case transport(TransportError)
    case tls(TLSError)
    case tlsNotOffered(server: String)
    case xml(XMLStreamError)
    case sasl(SASLError)
    case authenticationFailed(condition: String, text: String?)
    case streamError(condition: String, text: String?)
    case seeOtherHost(String)
    case bindFailed(String)
    case registrationFailed(StanzaError)
    case stanzaError(StanzaError)
    case timeout(String)
    case notConnected
    case disconnected(String)
    case protocolViolation(String)
    /// The connection's write queue is full: the server is not taking what Roost sends.
    case outboundQueueFull
    /// A stanza larger than the server accepts (XEP-0478 `max-bytes`, or the configured default).
    case stanzaTooLarge(bytes: Int, limit: Int)

    /// Authentication problems are not retried: retrying a wrong password only gets the account locked.
    public var isAuthenticationFailure: Bool {
        switch self {
        case .authenticationFailed, .sasl: true
        default: false
        }
    }

    /// Failures only the user can fix (a wrong password, a disabled account, a certificate Roost must not
    /// trust): retrying soon would only get the account locked or talk to an impostor. Everything else —
    /// stream errors such as `policy-violation`, a server that briefly offers no STARTTLS or no usable SASL
    /// mechanism, timeouts — is worth retrying with backoff.
    public var needsUser: Bool {
        switch self {
        case .authenticationFailed(let condition, _):
            return ["not-authorized", "account-disabled", "credentials-expired", "invalid-authzid"].contains(condition)
        case .tls(let error): return error.isCertificateProblem
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .transport(let e): return e.description
        case .tls(let e): return e.description
        case .tlsNotOffered(let server):
            return "\(server) does not offer STARTTLS; Roost never sends credentials without TLS. If the server speaks direct TLS, set `tls = direct` (and `port`, usually 5223)."
        case .xml(let e): return "the server sent XML Roost cannot accept: \(e.description)"
        case .sasl(let e): return "authentication failed: \(e.description)"
        case .authenticationFailed(let condition, let text):
            let hint = condition == "not-authorized" ? " — check the account's password or password_command" : ""
            return "authentication failed: \(condition)\(text.map { " (\($0))" } ?? "")\(hint)"
        case .streamError(let condition, let text):
            let hint: String
            switch condition {
            case "conflict" where text?.localizedCaseInsensitiveContains("removed") == true: hint = " — the account was deleted on the server"
            case "conflict": hint = " — another client logged in with the same resource; set a different `resource`"
            case "system-shutdown": hint = " — the server is shutting down; Roost will reconnect"
            case "policy-violation": hint = " — the server refused what was sent (size or rate limit)"
            default: hint = ""
            }
            return "the server closed the stream: \(condition)\(text.map { " (\($0))" } ?? "")\(hint)"
        case .seeOtherHost(let host): return "the server redirects this account to \(host); set `host` accordingly"
        case .bindFailed(let reason): return "the server refused to bind a resource: \(reason)"
        case .registrationFailed(let error):
            let hint: String
            switch error.condition {
            case "conflict": hint = " — that account already exists"
            case "not-allowed", "forbidden": hint = " — the server does not allow in-band registration"
            case "not-acceptable": hint = " — the server rejected the username or password (too weak or missing fields)"
            default: hint = ""
            }
            return "registration failed: \(error)\(hint)"
        case .stanzaError(let error): return "the server answered with an error: \(error)"
        case .timeout(let what): return "timed out waiting for \(what)"
        case .notConnected: return "not connected"
        case .disconnected(let why): return "disconnected: \(why)"
        case .protocolViolation(let what): return "protocol violation: \(what)"
        case .outboundQueueFull: return "the server is not taking what Roost sends (the write queue is full)"
        case .stanzaTooLarge(let bytes, let limit):
            return "the message is too large for the server (\(bytes) bytes; it accepts at most \(limit))"
        }
    }
}
