/// Identifies a conversation of one account (conversations compare case-insensitively, as in the schema).
struct SliceKey: Hashable {
    var accountID: Int64
    var conversation: String
}

extension SliceKey {
    /// The key of the conversation with `jid`, lower-cased: an ASCII JID without capitals (nearly every one) as it
    /// is, without the copy `lowercased()` makes (the mail mirror looks up a contact or two for every mail).
    init(accountID: Int64, jid: String) {
        let lowered = !jid.utf8.contains { $0 >= 0x80 || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }
        self.init(accountID: accountID, conversation: lowered ? jid : jid.lowercased())
    }
}
