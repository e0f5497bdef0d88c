/// Schema version 9: an index for reading the archive by conversation (the web view of `roost serve`).
///
/// `messages_account_conversation` is (account, conversation) plus the implicit rowid, so
/// - the list of conversations is one index seek per conversation instead of a scan: step to the next
///   (account, conversation) pair, then take its `max(id)` (the newest message, since ids are time ordered);
/// - a page of one account's conversation is a range of this index in id order (keyset pagination:
///   `WHERE account_id = ? AND conversation = ? AND id < ? ORDER BY id DESC LIMIT n`), however large the
///   archive and however many accounts share that peer.
enum SchemaV9 {
    static let sql = """
    CREATE INDEX messages_account_conversation ON messages(account_id, conversation);
    """
}
