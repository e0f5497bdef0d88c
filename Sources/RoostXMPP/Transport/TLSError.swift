/// Why a TLS session failed. Certificate failures carry the leaf's SHA-256 fingerprint so the
/// message can tell the user exactly what to pin if they decide to trust the certificate.
public enum TLSError: Error, CustomStringConvertible, Equatable {
    case certificateExpired(subject: String, notAfter: String, fingerprint: String)
    case certificateNotYetValid(subject: String, fingerprint: String)
    case hostnameMismatch(expected: String, presented: [String], fingerprint: String)
    /// The chain does not lead to a trusted CA (self-signed, unknown CA, bad signature, …).
    case untrusted(subject: String, issuer: String, reason: String, fingerprint: String)
    case fingerprintMismatch(expected: String, actual: String)
    case handshakeFailed(String)
    /// The peer sent close_notify; no more application data will come.
    case closed
    case protocolError(String)
    /// The configuration cannot be used (unreadable CA file, malformed pin, …).
    case invalidConfiguration(String)
    /// Setting up TLS or checking the certificate failed for want of descriptors or memory (a CA file that
    /// cannot be opened with "Too many open files"): nothing about the server or the config, tried again later.
    case resourceShortage(String)

    /// The server's identity failed (or the TLS settings are wrong): retrying cannot fix it. A closed or broken
    /// session is a network event, retried like any other.
    public var isCertificateProblem: Bool {
        switch self {
        case .certificateExpired, .certificateNotYetValid, .hostnameMismatch, .untrusted, .fingerprintMismatch, .invalidConfiguration: true
        case .handshakeFailed, .closed, .protocolError, .resourceShortage: false
        }
    }

    /// The SHA-256 fingerprint of the certificate the check refused (colon-separated), when it was refused.
    public var refusedFingerprint: String? {
        switch self {
        case let .certificateExpired(_, _, fingerprint), let .certificateNotYetValid(_, fingerprint),
             let .hostnameMismatch(_, _, fingerprint), let .untrusted(_, _, _, fingerprint): fingerprint
        case let .fingerprintMismatch(_, actual): actual
        default: nil
        }
    }

    public var description: String {
        switch self {
        case let .certificateExpired(subject, notAfter, fingerprint):
            return "the server certificate \(subject) expired on \(notAfter); the server admin must renew it. "
                + "To connect anyway, pin this exact certificate: add `fingerprint = \(fingerprint)` to the account"
        case let .certificateNotYetValid(subject, fingerprint):
            return "the server certificate \(subject) is not valid yet; check this machine's clock. "
                + "To connect anyway, pin this exact certificate: add `fingerprint = \(fingerprint)` to the account"
        case let .hostnameMismatch(expected, presented, fingerprint):
            let names = presented.isEmpty ? "no names" : presented.joined(separator: ", ")
            return "the server certificate is for \(names), not for \(expected); check the account's domain and host. "
                + "If you trust this server anyway, pin its certificate: add `fingerprint = \(fingerprint)` to the account"
        case let .untrusted(subject, issuer, reason, fingerprint):
            return "the server certificate \(subject) (issued by \(issuer)) is not trusted: \(reason). "
                + "To trust it, add `ca_file = /path/ca.pem` (the CA that issued it) to the account, "
                + "or pin `fingerprint = \(fingerprint)` (SHA-256 of the server's certificate)"
        case let .fingerprintMismatch(expected, actual):
            return "the server certificate's SHA-256 fingerprint is \(actual), but the account pins \(expected); "
                + "if the server's certificate was legitimately replaced, update `fingerprint = \(actual)`"
        case let .handshakeFailed(reason):
            return "TLS handshake failed: \(reason)"
        case .closed:
            return "the TLS session was closed by the server"
        case let .protocolError(reason):
            return "TLS error: \(reason)"
        case let .invalidConfiguration(reason):
            return "TLS settings are invalid: \(reason)"
        case let .resourceShortage(reason):
            return "TLS could not be set up: \(reason) (this machine or process is short of descriptors or memory, "
                + "e.g. too many connections open at once)"
        }
    }
}
