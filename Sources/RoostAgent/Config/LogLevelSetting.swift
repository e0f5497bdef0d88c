/// Log verbosity, from least to most chatty (`log_level = error|warning|info|debug`).
public enum LogLevelSetting: String, Sendable, CaseIterable, Hashable, Comparable {
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

    public static func < (lhs: LogLevelSetting, rhs: LogLevelSetting) -> Bool {
        lhs.rank < rhs.rank
    }

    /// This level made `steps` levels more verbose (negative: quieter), clamped to the ends.
    public func adjusted(by steps: Int) -> LogLevelSetting {
        let all = Self.allCases
        let index = min(max(rank + steps, 0), all.count - 1)
        return all[index]
    }
}
