/// Identifies a conversation of one account (conversations compare case-insensitively, as in the schema).
struct SliceKey: Hashable {
    var accountID: Int64
    var conversation: String
}
