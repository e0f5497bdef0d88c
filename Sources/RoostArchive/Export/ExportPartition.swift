/// One output unit of an export: everything (`--split none`), one conversation, or one month.
struct ExportPartition {
    /// `2026-01` for a month; nil otherwise.
    var month: String?
    /// UTC milliseconds of a month, both ends included.
    var timeRange: ClosedRange<Int64>?
    /// In output order (account, then conversation).
    var slices: [ConversationSlice]
    /// Set when the partition is one conversation (`--split conversation`).
    var single: ConversationSlice?
    /// Set instead of `slices` when the conversations were not listed (a time-ordered export of everything).
    var countedMessages: Int?

    var messageCount: Int { countedMessages ?? slices.reduce(0) { $0 + $1.messageCount } }
}
