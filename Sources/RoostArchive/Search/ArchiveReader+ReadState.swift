/// Unread messages per conversation (see `SchemaV8`, "Read state").
extension ArchiveReader {
    public struct UnreadConversation: Sendable, Equatable {
        public var account: String
        public var conversation: String
        public var unread: Int
        /// The newest incoming message: what a displayed marker names to clear the conversation on the user's
        /// other clients (its `id`, or in a room the room's stanza-id), and its type.
        public var newestIncomingId: String?
        public var groupchat: Bool
    }

    /// Conversations with unread messages (or, with `conversation`, that one even when all is read), most unread first.
    /// Every conversation has a `read_state` row (see `SchemaV8`), so this walks conversations, not messages.
    /// Retracted messages and messages without text or file do not count.
    public func unreadConversations(account: String? = nil, conversation: String? = nil) throws(ArchiveError) -> [UnreadConversation] {
        try withDatabase { database throws(SQLiteError) -> [UnreadConversation] in
            var rows: [UnreadConversation] = []
            try database.cached("""
                SELECT a.jid, c.conversation, (
                    SELECT count(*) FROM messages m
                    WHERE m.conversation = c.conversation AND m.account_id = c.account_id AND m.id > c.read_row
                      AND \(Self.unreadCondition)) AS unread,
                    (SELECT CASE WHEN n.type = 'groupchat' THEN coalesce(n.stanza_id, n.message_id) ELSE coalesce(n.message_id, n.origin_id) END
                     FROM messages n WHERE n.conversation = c.conversation AND n.account_id = c.account_id AND n.direction = 'in'
                     ORDER BY n.id DESC LIMIT 1),
                    EXISTS (SELECT 1 FROM messages g WHERE g.conversation = c.conversation AND g.account_id = c.account_id AND g.type = 'groupchat')
                FROM read_state c JOIN accounts a ON a.id = c.account_id
                WHERE (?1 IS NULL OR a.jid = ?1) AND (?2 IS NULL OR c.conversation = ?2) AND (?2 IS NOT NULL OR unread > 0)
                ORDER BY unread DESC, c.conversation
                """).forEachRow([SQLValue(account), SQLValue(conversation)]) { row in
                rows.append(UnreadConversation(account: row.text(0), conversation: row.text(1), unread: Int(row.int(2)),
                                               newestIncomingId: row.optionalText(3), groupchat: row.bool(4)))
                return true
            }
            return rows
        }
    }

    /// What counts as unread after a conversation's read mark: an incoming message, not retracted, with text or a
    /// file (`m` is the message). One definition for `roost read`, `roost status` and the web view's counts.
    static let unreadCondition = "m.direction = 'in' AND m.retracted = 0 "
        + "AND (m.body IS NOT NULL OR EXISTS (SELECT 1 FROM attachments f WHERE f.message_row = m.id))"

    /// Unread messages of one conversation, counted up to `limit` (a list shows "999+", not a count of years).
    /// A conversation without a read state (nothing incoming yet) has none.
    static func unreadCount(_ database: Database, accountID: Int64, conversation: String, limit: Int) throws(SQLiteError) -> Int {
        Int(try database.cached("""
            SELECT count(*) FROM (SELECT 1 FROM messages m
                WHERE m.account_id = ?1 AND m.conversation = ?2
                  AND m.id > coalesce((SELECT s.read_row FROM read_state s WHERE s.account_id = ?1 AND s.conversation = ?2), 9223372036854775807)
                  AND \(unreadCondition) LIMIT ?3)
            """).scalarInt([.integer(accountID), .text(conversation), .integer(Int64(limit))]) ?? 0)
    }
}
