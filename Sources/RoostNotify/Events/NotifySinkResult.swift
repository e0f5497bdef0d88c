/// The outcome of `roost notify test` for one sink.
public struct NotifySinkResult: Sendable {
    public var sink: String
    /// desktop, command, webhook or email.
    public var type: String
    public var result: Result<Void, NotifyError>
}
