/// What an export reads: the compiled query plus the account, and per partition a conversation or a time range,
/// as a `MessageStatement`; the account's restriction of the side tables.
struct ExportSelection {
    let compiled: CompiledQuery
    /// `--account`: only this account's rows; `.some(nil)` when that account is not in the archive.
    let accountFilter: Int64??
    /// Empty query: states, presence and contacts are exported whole.
    let everything: Bool
    /// account id → bare JID, for every account in the archive.
    let accounts: [Int64: String]
    /// `--since-last`: only the messages whose latest change lies in `(after, upTo]` of the change feed.
    var changed: (after: Int64, upTo: Int64)?

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
        try database.cached("SELECT id, jid FROM accounts ORDER BY id").forEachRow { row in
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

    /// The query with `--account` and `scope` (see `MessageStatement`), for `statement.select(…)`.
    func statement(scope: Scope) -> MessageStatement {
        var statement = MessageStatement(compiled)
        if let accountFilter { statement.restrict("m.account_id = ?", [.integer(accountFilter ?? -1)]) }
        if let changed {
            let (condition, parameters) = ChangeFeed.changedCondition(after: changed.after, upTo: changed.upTo)
            statement.restrict(condition, parameters)
        }
        if let slice = scope.slice {
            statement.restrict("m.account_id = ? AND m.conversation = ?", [.integer(slice.accountID), .text(slice.conversation)])
        }
        if let range = scope.timeRange {
            // The time-ordered ids narrow the read to the range's rows (plus the few outside 1970 … 2248, which
            // share the first and last id slots); the timestamp itself decides.
            let id = statement.idColumn
            statement.restrict("\(id) >= ? AND \(id) < ? AND m.timestamp >= ? AND m.timestamp <= ?",
                               [.integer(MessageID.base(forTimestamp: range.lowerBound)),
                                .integer(MessageID.base(forTimestamp: range.upperBound) + MessageID.slotSize),
                                .integer(range.lowerBound), .integer(range.upperBound)])
        }
        return statement
    }

    /// `SELECT columns FROM … WHERE query AND scope`, in time order unless `ordered` is false.
    func messages(columns: String, scope: Scope, ordered: Bool = true) -> (String, [SQLValue]) {
        statement(scope: scope).select(columns, order: ordered ? .oldestFirst : nil)
    }

    /// Account restriction for the side tables (`chat_states`, `presence_log`, `contacts`).
    func accountClause(column: String = "account_id") -> (String, [SQLValue]) {
        guard let accountFilter else { return ("1", []) }
        return ("\(column) = ?", [.integer(accountFilter ?? -1)])
    }
}
