/// A chat-state notification (standalone or carried by a message).
public struct ChatStateRecord: Sendable, Equatable {
    public var account: String
    public var conversation: String
    /// Full JID of whoever changed state.
    public var from: String
    public var state: ChatState
    public var timestamp: Int64

    public init(account: String, conversation: String, from: String, state: ChatState, timestamp: Int64) {
        self.account = account
        self.conversation = conversation
        self.from = from
        self.state = state
        self.timestamp = timestamp
    }
}
