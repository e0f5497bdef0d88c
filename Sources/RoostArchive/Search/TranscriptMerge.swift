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
    /// The first message (its id) to include, for the last N messages: messages sharing its millisecond but
    /// stored before it are left out, so a burst archived in one millisecond counts message by message.
    var fromMessage: Int64? = nil
    /// The messages are printed as text lines: see `MessageRowReading.lineColumns`.
    var forLines = false

    private typealias Cursor = TimeOrderedCursor<TranscriptItem>

    func run(_ body: (TranscriptEvent) -> Bool) throws(SQLiteError) {
        try merge(lines: false) { item in
            guard case .event(let event) = item else { return true }
            return body(event)
        }
    }

    /// The same transcript with plain messages as `.line` (see `MessageLine`), the others as events.
    func runLines(_ body: (TranscriptItem) -> Bool) throws(SQLiteError) {
        try merge(lines: true, body)
    }

    private func merge(lines: Bool, _ body: (TranscriptItem) -> Bool) throws(SQLiteError) {
        let accountClause = account == nil ? "?2 IS NULL" : "account_id IN (SELECT id FROM accounts WHERE jid = ?2)"
        // Messages by id (time-ordered, see SchemaV1), side tables by timestamp: the same window.
        let lower = from ?? 0
        let upper = until ?? Int64.max >> MessageID.slotBits
        let byTime: [SQLValue] = [.text(conversation), SQLValue(account), .integer(lower), .integer(upper)]
        let byID: [SQLValue] = [.text(conversation), SQLValue(account), .integer(max(MessageID.base(forTimestamp: lower), fromMessage ?? 0)),
                                .integer(MessageID.base(forTimestamp: upper))]
        var cursors: [Cursor] = []
        let reading = try MessageRowReading(database, history: !(lines || forLines))
        let messageColumns = lines ? MessageLine.columns : forLines ? MessageRowReading.lineColumns : MessageRowReading.columns
        let messages = try database.prepare("""
            SELECT \(messageColumns) FROM messages m
            WHERE m.conversation = ?1 AND \(accountClause.replacingOccurrences(of: "account_id", with: "m.account_id"))
                AND m.id >= ?3 AND m.id < ?4
            ORDER BY m.id
            """)
        if lines {
            // The few rows with attachments or reactions: those and every other row that is not plain are read
            // whole by id.
            let decorated = try DecoratedRows.read(database, conversation: conversation)
            let whole = try database.prepare("SELECT \(MessageRowReading.lineColumns) FROM messages m WHERE m.id = ?1")
            var marksOf: (account: Int64, marks: ReadMarks.Marks?)?
            cursors.append(try Cursor(statement: messages, parameters: byID) { row throws(SQLiteError) in
                let line = MessageLine(row, accounts: reading.accounts)
                if marksOf?.account != line.accountID {
                    marksOf = (line.accountID, reading.marks.of(account: line.accountID, conversation: conversation))
                }
                if line.isPlain(decorated: decorated, marks: marksOf?.marks) { return .line(line) }
                var event: TranscriptItem?
                try whole.forEachRow([.integer(line.id)]) { row throws(SQLiteError) in
                    event = .event(.message(try reading.row(row)))
                    return false
                }
                return event
            })
        } else {
            cursors.append(try Cursor(statement: messages, parameters: byID) { row throws(SQLiteError) in .event(.message(try reading.row(row))) })
        }
        if includeStates {
            cursors.append(try Cursor(
                statement: try database.prepare("""
                    SELECT (SELECT jid FROM accounts WHERE id = account_id), conversation, from_jid, state, timestamp
                    FROM chat_states WHERE conversation = ?1 AND \(accountClause) AND timestamp >= ?3 AND timestamp < ?4
                    ORDER BY timestamp, id
                    """),
                parameters: byTime) { row in
                    .event(.chatState(ChatStateRow(account: row.text(0), conversation: row.text(1), from: row.text(2),
                                            state: ChatState(rawValue: row.text(3)) ?? .active, timestamp: row.int(4))))
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
                    .event(.presence(PresenceRow(account: row.text(0), contact: row.text(1), resource: row.optionalText(2),
                                          availability: PresenceRecord.Availability(rawValue: row.text(3)) ?? .available,
                                          show: row.optionalText(4), status: row.optionalText(5),
                                          priority: row.optionalInt(6).map { Int($0) }, timestamp: row.int(7),
                                          room: RoomPresenceDetail.read(row, at: 8))))
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
