/// The one statement that reads the messages a query selects. `roost search` (`ArchiveReader.search`,
/// `searchLines`, `forEachMessage`, `count`), `roost stats`/`roost files` by query, `roost export`
/// (`ExportSelection`, its plan and its event stream) and the web view's search (`ArchiveBrowser.search`) build
/// their SQL here, so one query — with the same reading account, which `ArchiveReader.compile` adds to it —
/// selects the same messages in each.
///
/// With words the full-text index drives the scan in rowid (= time) order and LIMIT stops it early; without, the
/// messages table (or an index on a filter column) does. User text only travels as bound parameters.
struct MessageStatement {
    let query: CompiledQuery
    /// Restrictions on top of the query (an account id, a conversation, a time range, a page's keyset bound),
    /// each an SQL condition over `m` and the time-ordering column, with its parameters.
    private var conditions: [String] = []
    private var conditionParameters: [SQLValue] = []

    init(_ query: CompiledQuery) {
        self.query = query
    }

    /// The column that orders a read in time: the full-text index's rowid when words drive it (equal to `m.id`).
    var idColumn: String { query.ftsExpression == nil ? "m.id" : "f.rowid" }

    /// Adds `condition` (over `m` and `idColumn`) with its parameters.
    mutating func restrict(_ condition: String, _ parameters: [SQLValue] = []) {
        conditions.append(condition)
        conditionParameters += parameters
    }

    /// `SELECT columns` of the query's messages among the ids of the JSON array `ids` (watches: a batch of new rows),
    /// the ids driving the read (`CROSS JOIN` fixes the order): one row lookup each, and with words one probe of the
    /// full-text index by rowid, however large the archive and whatever indexes the query's filters could use.
    func select(_ columns: String, among ids: SQLValue) -> (String, [SQLValue]) {
        var parameters: [SQLValue] = [ids]
        var sql = "SELECT \(columns) FROM json_each(?) j CROSS JOIN "
        if let fts = query.ftsExpression {
            sql += "message_fts f CROSS JOIN messages m ON m.id = f.rowid WHERE f.rowid = j.value AND message_fts MATCH ?"
            parameters.append(.text(fts))
        } else {
            sql += "messages m WHERE m.id = j.value"
        }
        sql += " AND (\(query.whereSQL))" + conditions.map { " AND " + $0 }.joined()
        return (sql, parameters + query.parameters + conditionParameters)
    }

    /// `SELECT columns FROM … WHERE query AND restrictions`, then `ORDER BY` the time order `order` names (none: nil),
    /// `LIMIT`/`OFFSET` when `limit` is given (negative: no limit). `join`: more tables joined to `m`
    /// (`JOIN accounts a ON …`); `tail`: what follows the conditions in place of `order` (`GROUP BY …`, an order of
    /// its own), before the limit.
    func select(_ columns: String, join: String = "", order: SearchOrder? = nil, limit: Int? = nil, offset: Int = 0,
                tail: String = "") -> (String, [SQLValue]) {
        var from = "FROM messages m"
        if query.ftsExpression != nil { from = "FROM message_fts f JOIN messages m ON m.id = f.rowid" }
        if !join.isEmpty { from += " " + join }
        let whereSQL = ([query.ftsExpression == nil ? nil : "message_fts MATCH ?", "(\(query.whereSQL))"].compactMap { $0 }
                        + conditions).joined(separator: " AND ")
        let parameters = parameters(limit: limit, offset: offset)
        let paged = limit == nil ? "" : " LIMIT ? OFFSET ?"
        switch order {
        case nil:
            return ("SELECT \(columns) \(from) WHERE \(whereSQL)\(tail.isEmpty ? "" : " " + tail)\(paged)", parameters)
        case .newestFirst?, .oldestFirst?:
            let direction = order == .oldestFirst ? "ASC" : "DESC"
            return ("SELECT \(columns) \(from) WHERE \(whereSQL) ORDER BY \(idColumn) \(direction)\(paged)", parameters)
        case .rank?:
            guard query.ftsExpression != nil else {
                // No words, no score: newest first.
                return ("SELECT \(columns) \(from) WHERE \(whereSQL) ORDER BY m.id DESC\(paged)", parameters)
            }
            let sql = """
                SELECT \(columns) FROM (
                    SELECT f.rowid AS candidate, bm25(message_fts) AS score \(from) WHERE \(whereSQL)
                    ORDER BY f.rowid DESC LIMIT \(ArchiveReader.rankCandidateLimit)
                ) c JOIN messages m ON m.id = c.candidate
                ORDER BY c.score, m.id DESC\(paged)
                """
            return (sql, parameters)
        }
    }

    /// What `select(_:join:order:limit:offset:tail:)` binds, without building its SQL: for a reader that prepared
    /// the SQL of one shape once and reads it again with other values (the mail mirror, for every mail).
    func parameters(limit: Int? = nil, offset: Int = 0) -> [SQLValue] {
        var parameters: [SQLValue] = query.ftsExpression.map { [.text($0)] } ?? []
        parameters += query.parameters + conditionParameters
        if let limit { parameters += [.integer(Int64(limit)), .integer(Int64(offset))] }
        return parameters
    }
}
