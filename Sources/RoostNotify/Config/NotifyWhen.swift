/// `[notify] when`: whether a message notifies depending on the user's presence elsewhere.
public enum NotifyWhen: String, Sendable, CaseIterable {
    /// Only while the user is away (see docs/notify.md for exactly how that is decided).
    case away
    case always
    case never
}
