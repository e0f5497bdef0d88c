/// Schema version 7: the time a sender claimed for a message.
///
/// `messages.timestamp` is the time Roost can believe: a `<delay/>` from the account's own server (offline
/// storage), the server archive's or a carbon's `<forwarded/>` time, else when Roost received the message.
/// A `<delay/>` the sender wrote (or forged) is kept in `claimed_at` (UTC ms, NULL when there was none): shown
/// beside the message, exported, never used for ordering, search dates or notifications.
enum SchemaV7 {
    static let sql = """
    ALTER TABLE messages ADD COLUMN claimed_at INTEGER;
    """
}
