public import Foundation

/// One attachment with the message it came with, as `roost files` lists it and the download worker reads it.
public struct FileRow: Sendable, Equatable {
    /// The attachment row's id (what the download worker and `roost files fetch` work on).
    public var id: Int64
    public var messageID: Int64
    public var account: String
    public var conversation: String
    public var direction: MessageDirection
    public var kind: MessageKind
    /// Full JID of the sender.
    public var from: String
    public var senderName: String?
    public var timestamp: Int64
    public var attachment: AttachmentRecord
    /// Download attempts so far, and when the next one is due (nil: none scheduled).
    public var attempts: Int
    public var nextAttemptAt: Int64?
}

extension ArchiveReader {
    /// Attachments of the messages `query` selects ("" = all), newest message first; `limit` 0 means all.
    public func files(matching query: String, limit: Int = 0, now: Date = Date(),
                      timeZone: TimeZone = .current) throws(ArchiveError) -> [FileRow] {
        let compiled = try compile(query, now: now, timeZone: timeZone)
        let (sql, parameters) = MessageStatement(compiled).select(Self.fileColumns, join: "JOIN attachments a ON a.message_row = m.id",
                                                                  limit: limit > 0 ? limit : -1, tail: "ORDER BY m.id DESC, a.id")
        return try fileRows(sql, parameters)
    }

    /// One attachment by its row id.
    public func file(id: Int64) throws(ArchiveError) -> FileRow? {
        try fileRows("SELECT \(Self.fileColumns) FROM attachments a JOIN messages m ON m.id = a.message_row WHERE a.id = ?",
                     [.integer(id)]).first
    }

    /// The attachments of one message, in order.
    public func files(ofMessage messageID: Int64) throws(ArchiveError) -> [FileRow] {
        try fileRows("SELECT \(Self.fileColumns) FROM attachments a JOIN messages m ON m.id = a.message_row WHERE m.id = ? ORDER BY a.id",
                     [.integer(messageID)])
    }

    /// Attachments whose download is due at `now`: new ones, and failed ones whose retry time has come.
    public func dueFiles(now: Int64, limit: Int) throws(ArchiveError) -> [Int64] {
        try withDatabase { database throws(SQLiteError) -> [Int64] in
            var ids: [Int64] = []
            try database.cached("""
                SELECT id FROM attachments
                WHERE (state = 'pending' OR state LIKE 'failed:%') AND (next_attempt_at IS NULL AND state = 'pending' OR next_attempt_at <= ?1)
                ORDER BY id LIMIT ?2
                """).forEachRow([.integer(now), .integer(Int64(limit))]) { row in
                ids.append(row.int(0))
                return true
            }
            return ids
        }
    }

    /// When the earliest scheduled retry is due (UTC ms), or nil when none is scheduled.
    public func nextScheduledFileAttempt() throws(ArchiveError) -> Int64? {
        try withDatabase { database throws(SQLiteError) -> Int64? in
            try database.cached("""
                SELECT min(next_attempt_at) FROM attachments
                WHERE (state = 'pending' OR state LIKE 'failed:%') AND next_attempt_at IS NOT NULL
                """).scalarInt()
        }
    }

    /// The bytes the file store holds, each stored file counted once: in all, or for the files shared in one
    /// conversation of one account (`[files] quota`, `quota_per_contact`).
    public func storedBytes(account: String? = nil, conversation: String? = nil) throws(ArchiveError) -> Int64 {
        try withDatabase { database throws(SQLiteError) -> Int64 in
            if let account, let conversation {
                return try database.cached("""
                    SELECT coalesce(sum(size), 0) FROM (
                        SELECT max(a.size) AS size FROM messages m JOIN attachments a ON a.message_row = m.id
                        WHERE m.account_id = (SELECT id FROM accounts WHERE jid = ?1) AND m.conversation = ?2
                          AND a.state = 'stored' AND a.sha256 IS NOT NULL
                        GROUP BY a.sha256)
                    """).scalarInt([.text(account), .text(conversation)]) ?? 0
            }
            return try database.cached("""
                SELECT coalesce(sum(size), 0) FROM (
                    SELECT max(size) AS size FROM attachments WHERE state = 'stored' AND sha256 IS NOT NULL GROUP BY sha256)
                """).scalarInt() ?? 0
        }
    }

    /// Every distinct file the store should hold, with one attachment row naming it (for `roost verify`).
    public func storedFiles() throws(ArchiveError) -> [(sha256: String, attachment: Int64)] {
        try withDatabase { database throws(SQLiteError) -> [(sha256: String, attachment: Int64)] in
            var files: [(sha256: String, attachment: Int64)] = []
            try database.cached("""
                SELECT sha256, min(id) FROM attachments WHERE state = 'stored' AND sha256 IS NOT NULL GROUP BY sha256 ORDER BY sha256
                """).forEachRow { row in
                files.append((row.text(0), row.int(1)))
                return true
            }
            return files
        }
    }

    static let fileColumns = """
        a.id, m.id, (SELECT jid FROM accounts WHERE id = m.account_id), m.conversation, m.direction, m.type, m.from_jid,
        m.sender_name, m.timestamp, a.attempts, a.next_attempt_at, \(AttachmentReading.columns)
        """

    private func fileRows(_ sql: String, _ parameters: [SQLValue]) throws(ArchiveError) -> [FileRow] {
        let store = FileStore(archivePath: path)
        return try withDatabase { database throws(SQLiteError) -> [FileRow] in
            var rows: [FileRow] = []
            try database.prepare(sql).forEachRow(parameters) { row in
                rows.append(FileRow(
                    id: row.int(0), messageID: row.int(1), account: row.text(2), conversation: row.text(3),
                    direction: MessageDirection(rawValue: row.text(4)) ?? .incoming, kind: MessageKind(rawValue: row.text(5)) ?? .normal,
                    from: row.text(6), senderName: row.optionalText(7), timestamp: row.int(8),
                    attachment: AttachmentReading.record(row, at: 11, store: store), attempts: Int(row.int(9)),
                    nextAttemptAt: row.optionalInt(10)))
                return true
            }
            return rows
        }
    }
}
