/// What an account is doing right now, for logs and `roost status`.
public enum AccountState: Sendable, Equatable, CustomStringConvertible {
    case idle
    case connecting(attempt: Int)
    case online(resource: String, streamManagement: Bool)
    case waitingToReconnect(seconds: Int, lastError: String)
    /// Authentication or certificate problems: no retry until the user changes something.
    case failed(String)
    case stopped

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting(let attempt): attempt > 1 ? "connecting (attempt \(attempt))" : "connecting"
        case .online(let resource, let sm): "online as \(resource)\(sm ? " (stream management on)" : "")"
        case .waitingToReconnect(let seconds, let error): "reconnecting in \(seconds)s after: \(error)"
        case .failed(let why): "failed: \(why)"
        case .stopped: "stopped"
        }
    }

    public var isFailed: Bool { if case .failed = self { true } else { false } }
}
