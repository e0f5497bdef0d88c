/// Merges a conversation's messages, chat states and presence changes by time, streaming three cursors
/// side by side (messages come in id order, which is time order).
struct TranscriptMerge {
    let database: Database
    let account: String?
    let conversation: String
    let includeStates: Bool
    let includePresence: Bool
    /// UTC milliseconds `[from, until)`; nil ends are open.
    var from: Int64? = nil
    var until: Int64? = nil
    /// The messages are printed as text lines: see `MessageRowReading.lineColumns`.
    var forLines = false

    private typealias Cursor = TimeOrderedCursor<TranscriptEvent>

    func run(_ body: (TranscriptEvent) -> Bool) throws(SQLiteError) {
        let accountClause = account == nil ? "?2 IS NULL" : "account_id IN (SELECT id FROM accounts WHERE jid = ?2)"
        // Messages by id (time-ordered, see SchemaV1), side tables by timestamp: the same window.
        let lower = from ?? 0
        let upper = until ?? Int64.max >> MessageID.slotBits
        let byTime: [SQLValue] = [.text(conversation), SQLValue(account), .integer(lower), .integer(upper)]
        let byID: [SQLValue] = [.text(conversation), SQLValue(account), .integer(MessageID.base(forTimestamp: lower)),
                                .integer(MessageID.base(forTimestamp: upper))]
        var cursors: [Cursor] = []
        let noHighlight = Highlighter(terms: [])
        let reading = try MessageRowReading(database)
        cursors.append(try Cursor(
            statement: try database.prepare("""
                SELECT \(forLines ? MessageRowReading.lineColumns : MessageRowReading.columns) FROM messages m
                WHERE m.conversation = ?1 AND \(accountClause.replacingOccurrences(of: "account_id", with: "m.account_id"))
                    AND m.id >= ?3 AND m.id < ?4
                ORDER BY m.id
                """),
            parameters: byID) { .message(reading.row($0, highlighter: noHighlight)) })
        if includeStates {
            cursors.append(try Cursor(
                statement: try database.prepare("""
                    SELECT (SELECT jid FROM accounts WHERE id = account_id), conversation, from_jid, state, timestamp
                    FROM chat_states WHERE conversation = ?1 AND \(accountClause) AND timestamp >= ?3 AND timestamp < ?4
                    ORDER BY timestamp, id
                    """),
                parameters: byTime) { row in
                    .chatState(ChatStateRow(account: row.text(0), conversation: row.text(1), from: row.text(2),
                                            state: ChatState(rawValue: row.text(3)) ?? .active, timestamp: row.int(4)))
                })
        }
        if includePresence {
            cursors.append(try Cursor(
                statement: try database.prepare("""
                    SELECT (SELECT jid FROM accounts WHERE id = account_id), contact, resource, type, show, status, priority, timestamp,
                        \(RoomPresenceDetail.columns())
                    FROM presence_log WHERE contact = ?1 AND \(accountClause) AND timestamp >= ?3 AND timestamp < ?4
                    ORDER BY timestamp, id
                    """),
                parameters: byTime) { row in
                    .presence(PresenceRow(account: row.text(0), contact: row.text(1), resource: row.optionalText(2),
                                          availability: PresenceRecord.Availability(rawValue: row.text(3)) ?? .available,
                                          show: row.optionalText(4), status: row.optionalText(5),
                                          priority: row.optionalInt(6).map { Int($0) }, timestamp: row.int(7),
                                          room: RoomPresenceDetail.read(row, at: 8)))
                })
        }
        defer { cursors.forEach { $0.statement.reset() } }
        while let next = Cursor.earliest(cursors), let event = next.current {
            if !body(event) { return }
            try next.advance()
        }
    }
}

extension TranscriptEvent: TimeOrderedEvent {}
