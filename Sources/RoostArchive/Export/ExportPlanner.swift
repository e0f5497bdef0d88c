import RoostCore

/// Decides the partitions (files) of an export before anything is written, from aggregate queries only, so
/// the export knows its total for progress and every file can be written start to end in one go.
struct ExportPlanner {
    let selection: ExportSelection
    let database: Database
    let clock: ZoneClock
    /// Side tables whose conversations are exported even without messages: only where the format writes
    /// those events on their own (jsonl) — a transcript of nothing but chat states is an empty file.
    var withoutMessages: Set<ExportInclusion> = []

    /// `listConversations` false lets a time-ordered export of everything skip the per-conversation
    /// aggregate (a GROUP BY over every message, seconds on a large archive) and only count.
    func plan(split: ExportSplit, listConversations: Bool = true) throws(SQLiteError) -> [ExportPartition] {
        if split == .none && !listConversations && selection.everything {
            let (sql, parameters) = selection.messages(columns: "count(*)", scope: .init(), ordered: false)
            var count = 0
            try database.prepare(sql).forEachRow(parameters) { row in
                count = Int(row.int(0))
                return false
            }
            return [ExportPartition(month: nil, timeRange: nil, slices: [], single: nil, countedMessages: count)]
        }
        switch split {
        case .none:
            return [ExportPartition(month: nil, timeRange: nil, slices: try slices(in: nil), single: nil)]
        case .conversation:
            return try slices(in: nil).map { ExportPartition(month: nil, timeRange: nil, slices: [$0], single: $0) }
        case .month:
            var partitions: [ExportPartition] = []
            for month in try months() {
                partitions.append(ExportPartition(month: month.label, timeRange: month.range, slices: try slices(in: month.range), single: nil))
            }
            return partitions
        }
    }

    /// The calendar months (in the export's zone) holding at least one exported event, in order: one pass over
    /// the events' times, so a month with nothing is never visited however far apart the times lie (a message
    /// dated 9999 or 1969 gets its month like any other; every `Int64` has one).
    func months() throws(SQLiteError) -> [(label: String, range: ClosedRange<Int64>)] {
        var found: [Int64: (label: String, range: ClosedRange<Int64>)] = [:]
        var current: ClosedRange<Int64>?
        func note(_ timestamp: Int64) {
            if let current, current.contains(timestamp) { return }
            let time = clock.civil(timestamp)
            let key = Int64(time.year) * 12 + Int64(time.month - 1)
            let next = clock.startOfMonth(year: time.year, month: time.month + 1)
            // A zone whose midnight is skipped could put the month's start after the time itself: the month
            // then starts at the time.
            let start = min(clock.startOfMonth(year: time.year, month: time.month), found[key]?.range.lowerBound ?? .max, timestamp)
            let range = start...(next == .max || next <= timestamp ? Int64.max : next - 1)
            current = range
            found[key] = (time.monthText, range)
        }
        let (sql, parameters) = selection.messages(columns: "m.timestamp", scope: .init(), ordered: false)
        try database.prepare(sql).forEachRow(parameters) { row in
            note(row.int(0))
            return true
        }
        if selection.everything {
            let (accountSQL, accountParameters) = selection.accountClause()
            for table in ["chat_states", "presence_log"] {
                try database.prepare("SELECT timestamp FROM \(table) WHERE \(accountSQL)").forEachRow(accountParameters) { row in
                    note(row.int(0))
                    return true
                }
            }
        }
        return found.keys.sorted().map { found[$0]! }
    }

    /// The conversations with something to export in `range`, ordered by account then conversation.
    func slices(in range: ClosedRange<Int64>?) throws(SQLiteError) -> [ConversationSlice] {
        var byKey: [SliceKey: ConversationSlice] = [:]
        let (sql, parameters) = selection.statement(scope: .init(slice: nil, timeRange: range)).select(
            "m.account_id, m.conversation, count(*), min(m.timestamp), max(m.timestamp)", tail: "GROUP BY m.account_id, m.conversation")
        try database.prepare(sql).forEachRow(parameters) { row in
            let slice = ConversationSlice(accountID: row.int(0), account: selection.accounts[row.int(0)] ?? "",
                                          conversation: row.text(1), messageCount: Int(row.int(2)),
                                          firstTimestamp: row.int(3), lastTimestamp: row.int(4))
            byKey[slice.key] = slice
            return true
        }
        if selection.everything {
            let tables = [(ExportInclusion.states, "chat_states", "conversation"), (.presence, "presence_log", "contact")]
            for (_, table, column) in tables.filter({ withoutMessages.contains($0.0) }) {
                let (accountSQL, accountParameters) = selection.accountClause()
                var sql = "SELECT account_id, \(column) FROM \(table) WHERE \(accountSQL)"
                var parameters = accountParameters
                if let range {
                    sql += " AND timestamp >= ? AND timestamp <= ?"
                    parameters += [.integer(range.lowerBound), .integer(range.upperBound)]
                }
                sql += " GROUP BY account_id, \(column)"
                try database.prepare(sql).forEachRow(parameters) { row in
                    let slice = ConversationSlice(accountID: row.int(0), account: selection.accounts[row.int(0)] ?? "",
                                                  conversation: row.text(1), messageCount: 0)
                    if byKey[slice.key] == nil { byKey[slice.key] = slice }
                    return true
                }
            }
        }
        return byKey.values.sorted { a, b in
            let accountA = a.account.lowercased(), accountB = b.account.lowercased()
            if accountA != accountB { return accountA < accountB }
            return a.conversation.lowercased() < b.conversation.lowercased()
        }
    }

    /// UTC milliseconds of the earliest and latest exported event.
    private func span() throws(SQLiteError) -> ClosedRange<Int64>? {
        var lower: Int64?
        var upper: Int64?
        func widen(_ low: Int64?, _ high: Int64?) {
            if let low { lower = min(lower ?? low, low) }
            if let high { upper = max(upper ?? high, high) }
        }
        let (sql, parameters) = selection.messages(columns: "min(m.timestamp), max(m.timestamp)", scope: .init(), ordered: false)
        try database.prepare(sql).forEachRow(parameters) { row in
            widen(row.optionalInt(0), row.optionalInt(1))
            return false
        }
        if selection.everything {
            let (accountSQL, accountParameters) = selection.accountClause()
            let tables = [(ExportInclusion.states, "chat_states"), (.presence, "presence_log")]
            for (_, table) in tables.filter({ withoutMessages.contains($0.0) }) {
                try database.prepare("SELECT min(timestamp), max(timestamp) FROM \(table) WHERE \(accountSQL)")
                    .forEachRow(accountParameters) { row in
                        widen(row.optionalInt(0), row.optionalInt(1))
                        return false
                    }
            }
        }
        guard let lower, let upper else { return nil }
        return lower...upper
    }
}
