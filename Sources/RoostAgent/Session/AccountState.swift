public import Foundation

/// What an account is doing right now, for logs and `roost status`.
public enum AccountState: Sendable, Equatable, CustomStringConvertible {
    case idle
    case connecting(attempt: Int)
    case online(resource: String, streamManagement: Bool)
    /// A passing problem (the network, the server, a shortage of descriptors): tried again at `nextTry`.
    case waitingToReconnect(nextTry: Date, lastError: String)
    /// The account logged in during this run, and now cannot: its password or certificate is refused, its
    /// password_command hangs, or another client with the same resource keeps replacing it. Only the user can
    /// fix that for sure, but it may pass (an authentication backend restarting): tried again at `nextTry` with a
    /// backoff up to an hour — or, when nil, only on SIGHUP. The agent keeps running.
    case waitingForUser(nextTry: Date?, cause: String)
    /// The account has not logged in during this run, and its password or certificate is refused: most likely
    /// the config is wrong. Tried again at `nextTry` (hourly) and on SIGHUP; when every account is so and none
    /// has logged in, the agent stops with status 78.
    case failed(String, nextTry: Date)
    case stopped

    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting(let attempt): attempt > 1 ? "connecting (attempt \(attempt))" : "connecting"
        case .online(let resource, let sm): "online as \(resource)\(sm ? " (stream management on)" : "")"
        case .waitingToReconnect(let next, let error): "reconnecting \(Self.when(next)) after: \(error)"
        case .waitingForUser(let next?, let cause):
            "waiting for you: \(cause); trying again \(Self.when(next)), or at once on SIGHUP (systemctl --user reload roost)"
        case .waitingForUser(nil, let cause):
            "waiting for you: \(cause); not trying again until SIGHUP (systemctl --user reload roost)"
        case .failed(let why, let next): "failed: \(why); trying again \(Self.when(next)), or at once on SIGHUP"
        case .stopped: "stopped"
        }
    }

    /// The failure `roost status` reports as needing the user (exit status 3).
    public var needsUser: Bool {
        switch self {
        case .failed, .waitingForUser: true
        default: false
        }
    }

    public var isFailed: Bool { if case .failed = self { true } else { false } }

    /// Why the account is not online, when it waits.
    public var cause: String? {
        switch self {
        case .waitingToReconnect(_, let error): error
        case .waitingForUser(_, let cause): cause
        case .failed(let why, _): why
        default: nil
        }
    }

    /// When the account tries again by itself.
    public var nextTry: Date? {
        switch self {
        case .waitingToReconnect(let next, _): next
        case .waitingForUser(let next, _): next
        case .failed(_, let next): next
        default: nil
        }
    }

    /// "in 42 s", "in 12 min", "in 1 h"
    static func when(_ date: Date) -> String {
        let seconds = max(0, Int(date.timeIntervalSinceNow.rounded(.up)))
        return "in " + Self.duration(seconds: seconds)
    }

    static func duration(_ duration: Duration) -> String {
        Self.duration(seconds: Int((duration / .seconds(1)).rounded(.up)))
    }

    static func duration(seconds: Int) -> String {
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\((seconds + 30) / 60) min" }
        return "\((seconds + 1800) / 3600) h"
    }
}
