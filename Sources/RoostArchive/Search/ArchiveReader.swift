public import Foundation
import Synchronization

/// A read-only connection to the archive (WAL: reads never block the live writer and see committed data).
/// Calls are serialised by a lock; do not call the reader again from inside one of its callbacks.
public final class ArchiveReader: Sendable {
    /// Ranked search scores only the newest this-many matches, so a very common word costs bounded time.
    public static let rankCandidateLimit = 20_000

    /// Only touched while `lock` is held, which is what makes sharing the reader across tasks safe.
    nonisolated(unsafe) private let database: Database
    private let lock = Mutex(())
    public let path: String

    public init(path: String) throws(ArchiveError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .notAnArchive(path: path) }
        let database: Database
        let version: Int
        do throws(SQLiteError) {
            database = try Database(path: path, mode: .readOnly)
            version = try Migrator.currentVersion(database)
        } catch {
            throw .sqlite(error)
        }
        if version == 0 { throw .notAnArchive(path: path) }
        if version > Migrator.latestVersion { throw .unsupportedSchemaVersion(found: version, supported: Migrator.latestVersion) }
        self.path = path
        self.database = database
    }

    /// Parses and checks a query without running it (for `--dry-run`-style validation and tests).
    public static func parse(_ query: String) throws(QueryError) -> QueryNode {
        try QueryParser.parse(query)
    }

    /// Runs a query (see design.md "Query language"). Malformed queries throw `.query(QueryError)`.
    public func search(query: String, order: SearchOrder = .newestFirst, limit: Int = 50, offset: Int = 0,
                       now: Date = Date(), timeZone: TimeZone = .current) throws(ArchiveError) -> [MessageRow] {
        var rows: [MessageRow] = []
        do {
            try search(query: query, order: order, limit: limit, offset: offset, now: now, timeZone: timeZone) { row in
                rows.append(row)
                return true
            }
        } catch let error as ArchiveError {
            throw error
        } catch {
            preconditionFailure("the collecting body does not throw")
        }
        return rows
    }

    /// The same, streaming each row to `body` as it is read (`roost search --limit 0` on millions of matches
    /// holds one row at a time). Throws `ArchiveError` or whatever `body` throws; `body` returns false to stop.
    public func search(query: String, order: SearchOrder = .newestFirst, limit: Int = 50, offset: Int = 0,
                       now: Date = Date(), timeZone: TimeZone = .current, _ body: (MessageRow) throws -> Bool) throws {
        let compiled = try compile(query, now: now, timeZone: timeZone)
        let (sql, parameters) = Self.searchSQL(compiled, order: order, limit: max(0, limit), offset: max(0, offset))
        let highlighter = Highlighter(terms: compiled.highlightTerms)
        let store = FileStore(archivePath: path)
        var bodyError: (any Error)?
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                try database.prepare(sql).forEachRow(parameters) { row in
                    do {
                        return try body(MessageRowReading.row(row, highlighter: highlighter, store: store))
                    } catch {
                        bodyError = error
                        return false
                    }
                }
            }
        }
        if let bodyError { throw bodyError }
    }

    /// Streams every message matching `query` (all messages for "") to `body` without loading them all,
    /// oldest first by default. Throws `ArchiveError` or whatever `body` throws; `body` returns false to stop.
    public func forEachMessage(matching query: String, order: SearchOrder = .oldestFirst, now: Date = Date(),
                               timeZone: TimeZone = .current, _ body: (MessageRow) throws -> Bool) throws {
        let compiled = try compile(query, now: now, timeZone: timeZone)
        let effectiveOrder: SearchOrder = order == .rank ? .newestFirst : order
        let (sql, parameters) = Self.searchSQL(compiled, order: effectiveOrder, limit: -1, offset: 0)
        let highlighter = Highlighter(terms: compiled.highlightTerms)
        let store = FileStore(archivePath: path)
        var bodyError: (any Error)?
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                try database.prepare(sql).forEachRow(parameters) { row in
                    do {
                        return try body(MessageRowReading.row(row, highlighter: highlighter, store: store))
                    } catch {
                        bodyError = error
                        return false
                    }
                }
            }
        }
        if let bodyError { throw bodyError }
    }

    /// One conversation oldest first, optionally with its chat states and the contact's presence changes
    /// interleaved in time order. `account` nil means every account. Streams to `body` (return false to stop).
    public func transcript(account: String? = nil, conversation: String, includeStates: Bool = false,
                           includePresence: Bool = false, _ body: (TranscriptEvent) throws -> Bool) throws {
        var bodyError: (any Error)?
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                try TranscriptMerge(database: database, account: account, conversation: conversation,
                                    includeStates: includeStates, includePresence: includePresence).run { event in
                    do {
                        return try body(event)
                    } catch {
                        bodyError = error
                        return false
                    }
                }
            }
        }
        if let bodyError { throw bodyError }
    }

    /// Counts per account and conversation, and the archive's size on disk.
    public func stats() throws(ArchiveError) -> ArchiveStats {
        let path = self.path
        return try withDatabase { database throws(SQLiteError) -> ArchiveStats in
            try database.read { () throws(SQLiteError) -> ArchiveStats in
                try StatsQuery.run(database, path: path)
            }
        }
    }

    func compile(_ query: String, now: Date, timeZone: TimeZone) throws(ArchiveError) -> CompiledQuery {
        let node: QueryNode
        do throws(QueryError) {
            node = try QueryParser.parse(query)
        } catch {
            throw .query(error)
        }
        return QueryCompiler.compile(node, now: now, timeZone: timeZone)
    }

    /// Internal (not private) so that export, import and the contact queries, in their own files, read under the same lock.
    func withDatabase<T>(_ body: (Database) throws(SQLiteError) -> T) throws(ArchiveError) -> T {
        try lock.withLock { _ throws(ArchiveError) -> T in
            do throws(SQLiteError) {
                return try body(database)
            } catch {
                throw .sqlite(error)
            }
        }
    }

    /// Builds the statement. With words, the FTS index drives the scan in rowid (= time) order and LIMIT stops
    /// it early; without, the messages table (or an index on a filter column) does.
    static func searchSQL(_ query: CompiledQuery, order: SearchOrder, limit: Int, offset: Int) -> (String, [SQLValue]) {
        let columns = MessageRowReading.columns
        let paging: [SQLValue] = [.integer(Int64(limit)), .integer(Int64(offset))]
        guard let fts = query.ftsExpression else {
            let direction = order == .oldestFirst ? "ASC" : "DESC"
            return ("SELECT \(columns) FROM messages m WHERE \(query.whereSQL) ORDER BY m.id \(direction) LIMIT ? OFFSET ?",
                    query.parameters + paging)
        }
        let matches = "FROM message_fts f JOIN messages m ON m.id = f.rowid WHERE message_fts MATCH ? AND \(query.whereSQL)"
        switch order {
        case .newestFirst, .oldestFirst:
            let direction = order == .oldestFirst ? "ASC" : "DESC"
            return ("SELECT \(columns) \(matches) ORDER BY f.rowid \(direction) LIMIT ? OFFSET ?",
                    [.text(fts)] + query.parameters + paging)
        case .rank:
            let sql = """
                SELECT \(columns) FROM (
                    SELECT f.rowid AS candidate, bm25(message_fts) AS score \(matches)
                    ORDER BY f.rowid DESC LIMIT \(rankCandidateLimit)
                ) c JOIN messages m ON m.id = c.candidate
                ORDER BY c.score, m.id DESC LIMIT ? OFFSET ?
                """
            return (sql, [.text(fts)] + query.parameters + paging)
        }
    }
}
