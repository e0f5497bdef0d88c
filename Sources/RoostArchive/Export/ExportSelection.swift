/// The SQL behind an export: the compiled query plus the account, and per partition a conversation or a time
/// range. User text only travels as bound parameters (see `CompiledQuery`).
struct ExportSelection {
    let compiled: CompiledQuery
    /// `--account`: only this account's rows; `.some(nil)` when that account is not in the archive.
    let accountFilter: Int64??
    /// Empty query: states, presence and contacts are exported whole.
    let everything: Bool
    /// account id → bare JID, for every account in the archive.
    let accounts: [Int64: String]

    /// Restrictions of one read, on top of the query.
    struct Scope {
        var slice: ConversationSlice?
        /// UTC milliseconds, both ends included (a month at the end of time ends at `Int64.max`).
        var timeRange: ClosedRange<Int64>?
    }

    init(compiled: CompiledQuery, account: String?, everything: Bool, database: Database) throws(SQLiteError) {
        self.compiled = compiled
        self.everything = everything
        var accounts: [Int64: String] = [:]
        try database.prepare("SELECT id, jid FROM accounts ORDER BY id").forEachRow { row in
            accounts[row.int(0)] = row.text(1)
            return true
        }
        self.accounts = accounts
        if let account {
            accountFilter = .some(accounts.first { $0.value.lowercased() == account.lowercased() }?.key)
        } else {
            accountFilter = nil
        }
    }

    /// The column that orders a read in time: the full-text index's rowid when words drive it.
    var idColumn: String { compiled.ftsExpression == nil ? "m.id" : "f.rowid" }

    /// `SELECT columns FROM … WHERE query AND scope ORDER BY id` (time order).
    func messages(columns: String, scope: Scope, orderByID: Bool = true, suffix: String = "") -> (String, [SQLValue]) {
        var sql = "SELECT \(columns) "
        var parameters: [SQLValue] = []
        if let fts = compiled.ftsExpression {
            sql += "FROM message_fts f JOIN messages m ON m.id = f.rowid WHERE message_fts MATCH ? AND (\(compiled.whereSQL))"
            parameters.append(.text(fts))
        } else {
            sql += "FROM messages m WHERE (\(compiled.whereSQL))"
        }
        parameters += compiled.parameters
        if let accountFilter {
            sql += " AND m.account_id = ?"
            parameters.append(.integer(accountFilter ?? -1))
        }
        if let slice = scope.slice {
            sql += " AND m.account_id = ? AND m.conversation = ?"
            parameters += [.integer(slice.accountID), .text(slice.conversation)]
        }
        if let range = scope.timeRange {
            // The time-ordered ids narrow the read to the range's rows (plus the few outside 1970 … 2248, which
            // share the first and last id slots); the timestamp itself decides.
            sql += " AND \(idColumn) >= ? AND \(idColumn) < ? AND m.timestamp >= ? AND m.timestamp <= ?"
            parameters += [.integer(MessageID.base(forTimestamp: range.lowerBound)),
                           .integer(MessageID.base(forTimestamp: range.upperBound) + MessageID.slotSize),
                           .integer(range.lowerBound), .integer(range.upperBound)]
        }
        sql += suffix
        if orderByID { sql += " ORDER BY \(idColumn)" }
        return (sql, parameters)
    }

    /// Account restriction for the side tables (`chat_states`, `presence_log`, `contacts`).
    func accountClause(column: String = "account_id") -> (String, [SQLValue]) {
        guard let accountFilter else { return ("1", []) }
        return ("\(column) = ?", [.integer(accountFilter ?? -1)])
    }
}
