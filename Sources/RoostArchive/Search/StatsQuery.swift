import Foundation

/// Collects `ArchiveStats` from the counters the writer keeps in the same transaction as the rows (`SchemaV10`):
/// O(conversations), not O(messages).
enum StatsQuery {
    /// The counters' query; an archive the agent has not migrated yet (a newer roost reading it before `roost run`)
    /// is counted the slow way, with the same results. `?1`: one account's rows only (NULL: every account).
    static let countersSQL = """
        SELECT a.jid, c.conversation, c.messages, c.incoming, c.outgoing, c.first_timestamp, c.last_timestamp,
               c.groupchat > 0,
               CASE WHEN c.groupchat > 0 THEN (SELECT count(*) FROM room_senders s
                   WHERE s.account_id = c.account_id AND s.conversation = c.conversation) ELSE 0 END
        FROM conversation_counts c JOIN accounts a ON a.id = c.account_id
        WHERE c.messages > 0 AND (?1 IS NULL OR a.jid = ?1)
        ORDER BY a.jid, c.last_timestamp DESC
        """
    static let scanSQL = """
        SELECT a.jid, m.conversation, count(*), sum(m.direction = 'in'), sum(m.direction = 'out'),
               min(m.timestamp), max(m.timestamp), max(m.type = 'groupchat'),
               count(DISTINCT CASE WHEN m.type = 'groupchat' AND m.body IS NOT NULL THEN coalesce(m.occupant_id, m.from_jid) END)
        FROM messages m JOIN accounts a ON a.id = m.account_id
        WHERE ?1 IS NULL OR a.jid = ?1
        GROUP BY m.account_id, m.conversation
        ORDER BY a.jid, max(m.timestamp) DESC
        """

    /// Whether the archive has the per-conversation counters of `SchemaV10` (a reader also opens older archives).
    static func keepsCounters(_ database: Database) throws(SQLiteError) -> Bool {
        try database.cached("SELECT 1 FROM sqlite_master WHERE name = 'conversation_counts'").scalarInt() != nil
    }

    /// `account` nil: every account; else that account's rows only.
    static func run(_ database: Database, path: String, account: String? = nil) throws(SQLiteError) -> ArchiveStats {
        let counted = try keepsCounters(database)
        var conversations: [ArchiveStats.Conversation] = []
        let only: [SQLValue] = [SQLValue(account)]
        try database.prepare(counted ? countersSQL : scanSQL).forEachRow(only) { row in
            conversations.append(ArchiveStats.Conversation(
                account: row.text(0), conversation: row.text(1), messages: Int(row.int(2)), incoming: Int(row.int(3)),
                outgoing: Int(row.int(4)), firstTimestamp: row.int(5), lastTimestamp: row.int(6), isRoom: row.bool(7),
                senders: Int(row.int(8))))
            return true
        }
        var accounts: [ArchiveStats.Account] = []
        try database.prepare("SELECT jid FROM accounts WHERE ?1 IS NULL OR jid = ?1 ORDER BY jid").forEachRow(only) { row in
            let jid = row.text(0)
            let own = conversations.filter { $0.account == jid }
            accounts.append(ArchiveStats.Account(
                account: jid, messages: own.reduce(0) { $0 + $1.messages }, conversations: own.count,
                firstTimestamp: own.map(\.firstTimestamp).min(), lastTimestamp: own.map(\.lastTimestamp).max()))
            return true
        }
        func count(_ table: String) throws(SQLiteError) -> Int {
            // The whole archive's rows are counted by the writer; one account's are counted here.
            if counted, account == nil {
                return Int(try database.prepare("SELECT rows FROM row_counts WHERE name = '\(table)'").scalarInt() ?? 0)
            }
            return Int(try database.prepare("""
                SELECT count(*) FROM \(table) WHERE ?1 IS NULL OR account_id IN (SELECT id FROM accounts WHERE jid = ?1)
                """).scalarInt(only) ?? 0)
        }
        return ArchiveStats(
            accounts: accounts, conversations: conversations, totalMessages: conversations.reduce(0) { $0 + $1.messages },
            chatStates: try count("chat_states"), presenceEvents: try count("presence_log"),
            subscriptionEvents: try count("subscription_requests"),
            archiveSizeBytes: fileSize(path) + fileSize(path + "-wal"))
    }

    /// Messages matching a compiled query, per account and conversation, and per month or year with `bucket`.
    static func counts(_ database: Database, query: CompiledQuery, bucket: StatsBucket?) throws(SQLiteError) -> [ConversationCount] {
        let key = bucket.map { "strftime('\($0.format)', m.timestamp / 1000, 'unixepoch', 'localtime')" } ?? "NULL"
        let (sql, parameters) = MessageStatement(query).select(
            "a.jid, m.conversation, \(key), count(*), sum(m.direction = 'in'), sum(m.direction = 'out'), min(m.timestamp), max(m.timestamp)",
            join: "JOIN accounts a ON a.id = m.account_id",
            tail: "GROUP BY m.account_id, m.conversation, 3 ORDER BY a.jid COLLATE NOCASE, m.conversation COLLATE NOCASE, 3")
        var rows: [ConversationCount] = []
        try database.prepare(sql).forEachRow(parameters) { row in
            rows.append(ConversationCount(account: row.text(0), conversation: row.text(1), bucket: row.optionalText(2),
                                          messages: Int(row.int(3)), incoming: Int(row.int(4)), outgoing: Int(row.int(5)),
                                          firstTimestamp: row.int(6), lastTimestamp: row.int(7)))
            return true
        }
        return rows
    }

    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}

/// The time buckets of `roost stats --by`.
public enum StatsBucket: String, Sendable, CaseIterable {
    case day, week, month, year

    /// strftime(3) format of a bucket's label, in local time.
    var format: String {
        switch self {
        case .day: "%Y-%m-%d"
        case .week: "%Y-W%W"
        case .month: "%Y-%m"
        case .year: "%Y"
        }
    }
}

/// Messages of one conversation (in one time bucket), as `roost stats QUERY` counts them.
public struct ConversationCount: Sendable, Equatable {
    public var account: String
    public var conversation: String
    /// `2026-01` (month), `2026` (year), …; nil without `--by`.
    public var bucket: String?
    public var messages: Int
    public var incoming: Int
    public var outgoing: Int
    public var firstTimestamp: Int64
    public var lastTimestamp: Int64
}
