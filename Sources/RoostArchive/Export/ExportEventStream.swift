/// Streams the events of one export scope in time order: messages of the selection merged with chat states
/// and presence changes, three cursors side by side, so memory stays flat however large the archive.
/// Ties keep messages first, then chat states, then presence (the same order every time, which is what
/// makes a jsonl export reproducible).
struct ExportEventStream {
    let database: Database
    let selection: ExportSelection
    let reading: MessageRowReading
    let includeRaw: Bool
    let includeStates: Bool
    let includePresence: Bool
    /// For a partial selection: only states and presence of these conversations, within their messages' span.
    let windows: [SliceKey: ClosedRange<Int64>]?

    private typealias Cursor = TimeOrderedCursor<ExportEvent>

    /// Runs `body` for every event of `scope`; `body` returns false to stop.
    func run(scope: ExportSelection.Scope, _ body: (ExportEvent) throws -> Bool) throws {
        var cursors: [Cursor] = []
        let (sql, parameters) = selection.messages(columns: self.reading.columns(raw: includeRaw), scope: scope)
        let reading = self.reading
        let includeRaw = self.includeRaw
        cursors.append(try Cursor(statement: try database.prepare(sql), parameters: parameters) { row throws(SQLiteError) in
            .message(MessageRowView(row: row, reading: reading, includeRevisionRaw: includeRaw, timestamp: row.int(11)))
        })
        let accounts = selection.accounts
        if includeStates {
            let (where_, sideParameters) = sideFilter(scope: scope, contactColumn: "conversation")
            cursors.append(try Cursor(statement: try database.prepare("""
                SELECT account_id, conversation, from_jid, state, timestamp, message_id FROM chat_states
                WHERE \(where_) ORDER BY timestamp, id
                """), parameters: sideParameters) { row in
                guard admits(account: row.int(0), conversation: row.text(1), at: row.int(4)) else { return nil }
                return .chatState(ChatStateRow(account: accounts[row.int(0)] ?? "", conversation: row.text(1), from: row.text(2),
                                               state: ChatState(rawValue: row.text(3)) ?? .active, timestamp: row.int(4),
                                               messageId: row.optionalText(5)))
            })
        }
        if includePresence {
            let (where_, sideParameters) = sideFilter(scope: scope, contactColumn: "contact")
            cursors.append(try Cursor(statement: try database.prepare("""
                SELECT account_id, contact, resource, type, show, status, priority, timestamp, \(RoomPresenceDetail.columns())
                FROM presence_log
                WHERE \(where_) ORDER BY timestamp, id
                """), parameters: sideParameters) { row in
                guard admits(account: row.int(0), conversation: row.text(1), at: row.int(7)) else { return nil }
                return .presence(PresenceRow(account: accounts[row.int(0)] ?? "", contact: row.text(1), resource: row.optionalText(2),
                                             availability: PresenceRecord.Availability(rawValue: row.text(3)) ?? .available,
                                             show: row.optionalText(4), status: row.optionalText(5),
                                             priority: row.optionalInt(6).map { Int($0) }, timestamp: row.int(7),
                                             room: RoomPresenceDetail.read(row, at: 8)))
            })
        }
        defer { cursors.forEach { $0.statement.reset() } }
        while let next = Cursor.earliest(cursors), let event = next.current {
            if try !body(event) { return }
            try next.advance()
        }
    }

    private func admits(account: Int64, conversation: String, at timestamp: Int64) -> Bool {
        guard let windows else { return true }
        guard let window = windows[SliceKey(accountID: account, conversation: conversation.lowercased())] else { return false }
        return window.contains(timestamp)
    }

    /// WHERE clause of a side table for a scope: account, conversation (or contact) and time range.
    private func sideFilter(scope: ExportSelection.Scope, contactColumn: String) -> (String, [SQLValue]) {
        var (sql, parameters) = selection.accountClause()
        if let slice = scope.slice {
            sql += " AND account_id = ? AND \(contactColumn) = ?"
            parameters += [.integer(slice.accountID), .text(slice.conversation)]
            if windows != nil, let first = slice.firstTimestamp, let last = slice.lastTimestamp {
                sql += " AND timestamp >= ? AND timestamp <= ?"
                parameters += [.integer(first), .integer(last)]
            }
        }
        if let range = scope.timeRange {
            sql += " AND timestamp >= ? AND timestamp <= ?"
            parameters += [.integer(range.lowerBound), .integer(range.upperBound)]
        }
        return (sql, parameters)
    }
}

extension ExportEvent: TimeOrderedEvent {}
