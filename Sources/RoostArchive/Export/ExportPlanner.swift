/// Decides the partitions (files) of an export before anything is written, from aggregate queries only, so
/// the export knows its total for progress and every file can be written start to end in one go.
struct ExportPlanner {
    let selection: ExportSelection
    let database: Database
    let clock: ExportClock
    /// Side tables whose conversations are exported even without messages: only where the format writes
    /// those events on their own (jsonl) — a transcript of nothing but chat states is an empty file.
    var withoutMessages: Set<ExportInclusion> = []

    /// `listConversations` false lets a time-ordered export of everything skip the per-conversation
    /// aggregate (a GROUP BY over every message, seconds on a large archive) and only count.
    func plan(split: ExportSplit, listConversations: Bool = true) throws(SQLiteError) -> [ExportPartition] {
        if split == .none && !listConversations && selection.everything {
            let (sql, parameters) = selection.messages(columns: "count(*)", scope: .init(), orderByID: false)
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
            guard let span = try span() else { return [] }
            var partitions: [ExportPartition] = []
            let first = clock.civil(span.lowerBound)
            var year = first.year
            var month = first.month
            while true {
                let start = clock.startOfMonth(year: year, month: month)
                if start > span.upperBound { break }
                let end = clock.startOfMonth(year: year, month: month + 1)
                let found = try slices(in: start..<end)
                if !found.isEmpty {
                    let label = "\(CivilTime.pad(year, 4))-\(CivilTime.pad(month))"
                    partitions.append(ExportPartition(month: label, timeRange: start..<end, slices: found, single: nil))
                }
                month += 1
                if month > 12 { month = 1; year += 1 }
            }
            return partitions
        }
    }

    /// The conversations with something to export in `range`, ordered by account then conversation.
    func slices(in range: Range<Int64>?) throws(SQLiteError) -> [ConversationSlice] {
        var byKey: [SliceKey: ConversationSlice] = [:]
        let (sql, parameters) = selection.messages(
            columns: "m.account_id, m.conversation, count(*), min(m.timestamp), max(m.timestamp)",
            scope: .init(slice: nil, timeRange: range), orderByID: false, suffix: " GROUP BY m.account_id, m.conversation")
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
                    sql += " AND timestamp >= ? AND timestamp < ?"
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
        let (sql, parameters) = selection.messages(columns: "min(m.timestamp), max(m.timestamp)", scope: .init(), orderByID: false)
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
