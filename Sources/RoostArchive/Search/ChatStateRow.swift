/// A stored chat-state notification.
public struct ChatStateRow: Sendable, Equatable {
    public var account: String
    public var conversation: String
    public var from: String
    public var state: ChatState
    public var timestamp: Int64
}
