/// `[notify] groupchat`: which group chat messages notify.
public enum GroupchatPolicy: String, Sendable, CaseIterable {
    /// Only messages that mention the user.
    case mentions
    case all
    case none
}
