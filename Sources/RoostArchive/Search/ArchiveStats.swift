/// Counts and time spans of the archive.
public struct ArchiveStats: Sendable, Equatable {
    public struct Account: Sendable, Equatable {
        public var account: String
        public var messages: Int
        public var conversations: Int
        public var firstTimestamp: Int64?
        public var lastTimestamp: Int64?
    }

    public struct Conversation: Sendable, Equatable {
        public var account: String
        public var conversation: String
        public var messages: Int
        public var incoming: Int
        public var outgoing: Int
        public var firstTimestamp: Int64
        public var lastTimestamp: Int64
        /// A group chat (its messages are `groupchat`), and how many occupants wrote in it.
        public var isRoom: Bool = false
        public var senders: Int = 0
    }

    public var accounts: [Account]
    /// Ordered by account, then most recent activity first.
    public var conversations: [Conversation]
    public var totalMessages: Int
    public var chatStates: Int
    public var presenceEvents: Int
    public var subscriptionEvents: Int
    /// Database file plus write-ahead log, in bytes.
    public var archiveSizeBytes: Int64
}
