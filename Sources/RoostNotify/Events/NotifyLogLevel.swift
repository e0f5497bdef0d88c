/// Levels of the notification layer's log lines, mapped by the agent onto its own logger.
public enum NotifyLogLevel: Int, Sendable, Comparable {
    case error, warning, info, debug

    public static func < (lhs: NotifyLogLevel, rhs: NotifyLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
