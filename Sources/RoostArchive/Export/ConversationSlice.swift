/// One conversation's share of an export partition: which account and conversation, and the span of its
/// selected messages (states and presence of a partial selection are kept to that span).
struct ConversationSlice: Equatable {
    var accountID: Int64
    var account: String
    var conversation: String
    var messageCount: Int
    /// UTC milliseconds of the first and last selected message (nil when only states or presence exist).
    var firstTimestamp: Int64?
    var lastTimestamp: Int64?

    var key: SliceKey { SliceKey(accountID: accountID, conversation: conversation.lowercased()) }
}
