/// A stored chat-state notification.
public struct ChatStateRow: Sendable, Equatable {
    public var account: String
    public var conversation: String
    public var from: String
    public var state: ChatState
    public var timestamp: Int64
    /// The `id` of the stanza that carried it (told apart from another state of the same millisecond by it).
    public var messageId: String? = nil
}
