import Foundation

/// Collects `ArchiveStats` from the counters the writer keeps in the same transaction as the rows (`SchemaV10`):
/// O(conversations), not O(messages).
enum StatsQuery {
    /// The counters' query; an archive the agent has not migrated yet (a newer roost reading it before `roost run`)
    /// is counted the slow way, with the same results.
    static let countersSQL = """
        SELECT a.jid, c.conversation, c.messages, c.incoming, c.outgoing, c.first_timestamp, c.last_timestamp,
               c.groupchat > 0,
               CASE WHEN c.groupchat > 0 THEN (SELECT count(*) FROM room_senders s
                   WHERE s.account_id = c.account_id AND s.conversation = c.conversation) ELSE 0 END
        FROM conversation_counts c JOIN accounts a ON a.id = c.account_id
        WHERE c.messages > 0
        ORDER BY a.jid, c.last_timestamp DESC
        """
    static let scanSQL = """
        SELECT a.jid, m.conversation, count(*), sum(m.direction = 'in'), sum(m.direction = 'out'),
               min(m.timestamp), max(m.timestamp), max(m.type = 'groupchat'),
               count(DISTINCT CASE WHEN m.type = 'groupchat' AND m.body IS NOT NULL THEN coalesce(m.occupant_id, m.from_jid) END)
        FROM messages m JOIN accounts a ON a.id = m.account_id
        GROUP BY m.account_id, m.conversation
        ORDER BY a.jid, max(m.timestamp) DESC
        """

    static func run(_ database: Database, path: String) throws(SQLiteError) -> ArchiveStats {
        let counted = try database.cached("SELECT 1 FROM sqlite_master WHERE name = 'conversation_counts'").scalarInt() != nil
        var conversations: [ArchiveStats.Conversation] = []
        try database.prepare(counted ? countersSQL : scanSQL).forEachRow { row in
            conversations.append(ArchiveStats.Conversation(
                account: row.text(0), conversation: row.text(1), messages: Int(row.int(2)), incoming: Int(row.int(3)),
                outgoing: Int(row.int(4)), firstTimestamp: row.int(5), lastTimestamp: row.int(6), isRoom: row.bool(7),
                senders: Int(row.int(8))))
            return true
        }
        var accounts: [ArchiveStats.Account] = []
        try database.prepare("SELECT jid FROM accounts ORDER BY jid").forEachRow { row in
            let jid = row.text(0)
            let own = conversations.filter { $0.account == jid }
            accounts.append(ArchiveStats.Account(
                account: jid, messages: own.reduce(0) { $0 + $1.messages }, conversations: own.count,
                firstTimestamp: own.map(\.firstTimestamp).min(), lastTimestamp: own.map(\.lastTimestamp).max()))
            return true
        }
        func count(_ table: String) throws(SQLiteError) -> Int {
            let sql = counted ? "SELECT rows FROM row_counts WHERE name = '\(table)'" : "SELECT count(*) FROM \(table)"
            return Int(try database.prepare(sql).scalarInt() ?? 0)
        }
        return ArchiveStats(
            accounts: accounts, conversations: conversations, totalMessages: conversations.reduce(0) { $0 + $1.messages },
            chatStates: try count("chat_states"), presenceEvents: try count("presence_log"),
            subscriptionEvents: try count("subscription_requests"),
            archiveSizeBytes: fileSize(path) + fileSize(path + "-wal"))
    }

    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
