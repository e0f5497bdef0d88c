public import Foundation

/// Watch queries (`[watch NAME]`, `highlight_words`), compiled by the search's own parser and compiler
/// (`ArchiveReader.compile`) for one account. Compiled again after `lifetime`: relative dates (`date:1d..`) and the
/// names a query resolves (`from:boss`) follow the clock and the roster.
public struct WatchQueries: Sendable {
    fileprivate let compiled: [CompiledQuery]
    public let account: String?
    public let compiledAt: Date
    public static let lifetime: TimeInterval = 60

    public var count: Int { compiled.count }

    public func isStale(now: Date = Date()) -> Bool { now.timeIntervalSince(compiledAt) >= Self.lifetime }
}

extension ArchiveReader {
    /// Compiles each of `queries` as `roost search` would for `account` (nil: every account's messages).
    public func compileWatches(_ queries: [String], account: String?, now: Date = Date(),
                               timeZone: TimeZone = .current) throws(ArchiveError) -> WatchQueries {
        var compiled: [CompiledQuery] = []
        for query in queries { compiled.append(try compile(query, now: now, timeZone: timeZone, account: account)) }
        return WatchQueries(compiled: compiled, account: account, compiledAt: now)
    }

    /// For each of `ids` (messages just archived) that some watch selects, the indexes of those watches. One
    /// statement for the whole batch: each watch's search statement restricted to the batch's rows, the watches
    /// joined by `UNION ALL` (with words, the full-text index is probed by rowid for these rows only).
    public func watchMatches(_ watches: WatchQueries, ids: [Int64]) throws(ArchiveError) -> [Int64: [Int]] {
        guard !ids.isEmpty, !watches.compiled.isEmpty else { return [:] }
        let list = SQLValue.text("[" + ids.map(String.init).joined(separator: ",") + "]")
        var parts: [String] = []
        var parameters: [SQLValue] = []
        for (index, query) in watches.compiled.enumerated() {
            var statement = MessageStatement(query)
            statement.restrict("\(statement.idColumn) IN (SELECT value FROM json_each(?))", [list])
            let (sql, values) = statement.select("\(index), m.id")
            parts.append(sql)
            parameters += values
        }
        let sql = parts.joined(separator: " UNION ALL ")
        return try withDatabase { database throws(SQLiteError) -> [Int64: [Int]] in
            var matches: [Int64: [Int]] = [:]
            // The SQL is the same from batch to batch (the rows travel as a parameter): prepared once per compilation.
            try database.cached(sql).forEachRow(parameters) { row in
                matches[row.int(1), default: []].append(Int(row.int(0)))
                return true
            }
            return matches
        }
    }

    /// What a watch on `query` would have notified: the incoming messages it selects since `since` (milliseconds),
    /// oldest first, as `roost watch test` lists them.
    public func watchHistory(query: String, account: String?, since: Int64, now: Date = Date(), timeZone: TimeZone = .current,
                             _ body: (MessageRow) -> Bool) throws(ArchiveError) {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        var statement = MessageStatement(compiled)
        statement.restrict("\(statement.idColumn) >= ?", [.integer(MessageID.base(forTimestamp: since))])
        statement.restrict("m.direction = 'in'")
        let (sql, parameters) = statement.select(MessageRowReading.columns, order: .oldestFirst)
        let highlighter = Highlighter(terms: compiled.highlightTerms)
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                let reading = try MessageRowReading(database)
                try database.prepare(sql).forEachRow(parameters) { body(reading.row($0, highlighter: highlighter)) }
            }
        }
    }
}
