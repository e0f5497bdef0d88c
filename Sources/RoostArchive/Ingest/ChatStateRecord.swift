/// A chat-state notification (standalone or carried by a message).
public struct ChatStateRecord: Sendable, Equatable {
    public var account: String
    public var conversation: String
    /// Full JID of whoever changed state.
    public var from: String
    public var state: ChatState
    public var timestamp: Int64
    /// The `id` of the stanza that carried it: the same stanza seen twice (a resend after a reconnect) is one
    /// chat state; without an id, the same state from the same sender at the same millisecond is.
    public var messageId: String?

    public init(account: String, conversation: String, from: String, state: ChatState, timestamp: Int64, messageId: String? = nil) {
        self.account = account
        self.conversation = conversation
        self.from = from
        self.state = state
        self.timestamp = timestamp
        self.messageId = messageId
    }
}

/// XEP-0085 chat states.
public enum ChatState: String, Sendable, Codable, CaseIterable {
    case active, composing, paused, inactive, gone
}
