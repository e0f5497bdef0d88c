/// The one log level, from least to most chatty: the `log_level` setting and `--log-level` (`error`, `warning`,
/// `info`, `debug`, parsed by their raw values), the agent's `Logger`, and the levels the engine (`XMPPClient`)
/// and the notifier hand to the logger they are given.
public enum LogLevel: String, Sendable, CaseIterable, Hashable, Comparable {
    case error
    case warning
    case info
    case debug

    private var rank: Int {
        switch self {
        case .error: 0
        case .warning: 1
        case .info: 2
        case .debug: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rank < rhs.rank
    }

    /// This level made `steps` levels more verbose (negative: quieter), clamped to the ends.
    public func adjusted(by steps: Int) -> LogLevel {
        let all = Self.allCases
        let index = min(max(rank + steps, 0), all.count - 1)
        return all[index]
    }
}
