/// One mistake in `[notify]` or a `[sink NAME]` group; the agent turns it into `file:line: message`.
public struct NotifyConfigProblem: Sendable, Hashable, CustomStringConvertible {
    /// `notify` or `sink NAME`, as written in the group header.
    public var group: String
    public var key: String?
    public var message: String

    public init(group: String, key: String?, message: String) {
        self.group = group
        self.key = key
        self.message = message
    }

    public var description: String {
        "[\(group)]" + (key.map { " \($0)" } ?? "") + ": \(message)"
    }
}
