public import Foundation
import Synchronization

/// A read-only connection to the archive (WAL: reads never block the live writer and see committed data).
/// Calls are serialised by a lock; do not call the reader again from inside one of its callbacks.
public final class ArchiveReader: Sendable {
    /// Ranked search scores only the newest this-many matches, so a very common word costs bounded time.
    public static let rankCandidateLimit = 20_000

    /// The connection, only reachable inside the lock: that is what makes sharing the reader across tasks safe.
    private let database: Mutex<Database>
    public let path: String
    /// Indexes an import drops for its load and builds at its end (`DeferredIndexes`) that the archive lacks: an
    /// import is under way, or one was killed (the next writer to open the archive builds them). Reads work without
    /// them, but those by conversation or sender scan the table.
    public let missingIndexes: [String]

    public init(path: String) throws(ArchiveError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .notAnArchive(path: path) }
        let database: Database
        let version: Int
        do throws(SQLiteError) {
            database = try Database(path: path, mode: .readOnly)
            version = try Migrator.currentVersion(database)
            database.missingIndexes = try DeferredIndexes.missing(database)
        } catch {
            throw .sqlite(error)
        }
        if version == 0 { throw .notAnArchive(path: path) }
        if version > Migrator.latestVersion { throw .unsupportedSchemaVersion(found: version, supported: Migrator.latestVersion) }
        self.path = path
        missingIndexes = database.missingIndexes
        self.database = Mutex(database)
    }

    /// Parses and checks a query without running it (for `--dry-run`-style validation and tests).
    public static func parse(_ query: String) throws(QueryError) -> QueryNode {
        try QueryParser.parse(query)
    }

    /// Runs a query (see design.md "Query language"). Malformed queries throw `.query(QueryError)`.
    public func search(query: String, account: String? = nil, order: SearchOrder = .newestFirst, limit: Int = 50, offset: Int = 0,
                       now: Date = Date(), timeZone: TimeZone = .current) throws(ArchiveError) -> [MessageRow] {
        var rows: [MessageRow] = []
        do {
            try search(query: query, account: account, order: order, limit: limit, offset: offset, now: now, timeZone: timeZone) { row in
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
    /// `forLines`: the rows are printed as text lines, which leave out the recipient and the ids (see
    /// `MessageRowReading.lineColumns`); those fields are then empty.
    public func search(query: String, account: String? = nil, order: SearchOrder = .newestFirst, limit: Int = 50, offset: Int = 0,
                       now: Date = Date(), timeZone: TimeZone = .current, forLines: Bool = false,
                       _ body: (MessageRow) throws -> Bool) throws {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        let (sql, parameters) = MessageStatement(compiled).select(forLines ? MessageRowReading.lineColumns : MessageRowReading.columns,
                                                                  order: order, limit: max(0, limit), offset: max(0, offset))
        try streamRows(sql, parameters, highlighting: compiled.highlightTerms, history: !forLines, body)
    }

    /// `search(…, forLines: true)` for a text writer that renders plain messages from their columns (`roost search`
    /// without `--json` or colour): those come as `.line` views, valid only during the call (see `MessageLine`), every
    /// other match as `.event(.message(row))`. The rows with attachments or reactions are read once from those tables'
    /// side when that costs no more rows than `limit` (the highest ids of the two tables bound their rows); else,
    /// and for a small page of a large archive, every match is a `MessageRow` as in `search`.
    package func searchLines(query: String, account: String? = nil, order: SearchOrder = .newestFirst, limit: Int = 50,
                             offset: Int = 0, now: Date = Date(), timeZone: TimeZone = .current,
                             _ body: (TranscriptItem) -> Bool) throws(ArchiveError) {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        let highlighter = Highlighter(terms: compiled.highlightTerms)
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                let reading = try MessageRowReading(database, history: false)
                let decorated = try DecoratedRows.read(database, costingAtMost: limit)
                let (sql, parameters) = MessageStatement(compiled).select(
                    decorated == nil ? MessageRowReading.lineColumns : MessageLine.columns, order: order, limit: max(0, limit),
                    offset: max(0, offset))
                let statement = try database.prepare(sql)
                guard let decorated else {
                    return try statement.forEachRow(parameters) { row throws(SQLiteError) in
                        body(.event(.message(try reading.row(row, highlighter: highlighter))))
                    }
                }
                let whole = try database.prepare("SELECT \(MessageRowReading.lineColumns) FROM messages m WHERE m.id = ?1")
                try statement.forEachRow(parameters) { row throws(SQLiteError) in
                    let line = MessageLine(row, accounts: reading.accounts)
                    // Receipt marks matter to outgoing lines only.
                    let marks = line.incoming || reading.marks.isEmpty ? nil
                        : reading.marks.of(account: line.accountID, conversation: line.conversation)
                    if line.isPlain(decorated: decorated, marks: marks) { return body(.line(line)) }
                    var event: TranscriptItem?
                    try whole.forEachRow([.integer(line.id)]) { row throws(SQLiteError) in
                        event = .event(.message(try reading.row(row, highlighter: highlighter)))
                        return false
                    }
                    return event.map(body) ?? true
                }
            }
        }
    }

    /// Streams every message matching `query` (all messages for "") to `body` without loading them all,
    /// oldest first by default. Throws `ArchiveError` or whatever `body` throws; `body` returns false to stop.
    public func forEachMessage(matching query: String, account: String? = nil, order: SearchOrder = .oldestFirst, now: Date = Date(),
                               timeZone: TimeZone = .current, _ body: (MessageRow) throws -> Bool) throws {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        let effectiveOrder: SearchOrder = order == .rank ? .newestFirst : order
        let (sql, parameters) = MessageStatement(compiled).select(MessageRowReading.columns, order: effectiveOrder, limit: -1)
        try streamRows(sql, parameters, highlighting: compiled.highlightTerms, body)
    }

    /// Runs a message query in one read transaction, handing each row to `body` as it is read; stops when `body`
    /// returns false, rethrows what `body` throws.
    private func streamRows(_ sql: String, _ parameters: [SQLValue], highlighting terms: [String], history: Bool = true,
                            _ body: (MessageRow) throws -> Bool) throws {
        let highlighter = Highlighter(terms: terms)
        var bodyError: (any Error)?
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                let reading = try MessageRowReading(database, history: history)
                try database.prepare(sql).forEachRow(parameters) { row throws(SQLiteError) in
                    let message = try reading.row(row, highlighter: highlighter)
                    do {
                        return try body(message)
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
    /// interleaved in time order, within `[from, until)` (UTC milliseconds; nil: open) and from the message
    /// `fromMessage` on (its id, see `firstOfLast`). `account` nil means every account. Streams to `body`
    /// (return false to stop).
    public func transcript(account: String? = nil, conversation: String, includeStates: Bool = false,
                           includePresence: Bool = false, from: Int64? = nil, until: Int64? = nil, fromMessage: Int64? = nil,
                           forLines: Bool = false,
                           _ body: (TranscriptEvent) throws -> Bool) throws {
        var bodyError: (any Error)?
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                try TranscriptMerge(database: database, account: account, conversation: conversation,
                                    includeStates: includeStates, includePresence: includePresence, from: from, until: until,
                                    fromMessage: fromMessage, forLines: forLines).run { event in
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

    /// `transcript(…, forLines: true)` for a text writer that renders plain messages from their columns: those
    /// come as `.line` views, valid only during the call (see `MessageLine`), everything else as events.
    package func transcriptLines(account: String? = nil, conversation: String, includeStates: Bool = false,
                                 includePresence: Bool = false, from: Int64? = nil, until: Int64? = nil, fromMessage: Int64? = nil,
                                 _ body: (TranscriptItem) -> Bool) throws(ArchiveError) {
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                try TranscriptMerge(database: database, account: account, conversation: conversation,
                                    includeStates: includeStates, includePresence: includePresence, from: from, until: until,
                                    fromMessage: fromMessage, forLines: true).runLines(body)
            }
        }
    }

    /// The `count`-th newest message of a conversation, by time then by the order it was stored in (its id and
    /// timestamp; nil when the conversation has fewer): where a transcript of its last `count` messages starts.
    /// Counted in messages, not milliseconds: a burst stored within one millisecond is cut where the count ends.
    public func firstOfLast(_ count: Int, account: String?, conversation: String) throws(ArchiveError) -> (id: Int64, timestamp: Int64)? {
        try withDatabase { database throws(SQLiteError) -> (id: Int64, timestamp: Int64)? in
            var found: (id: Int64, timestamp: Int64)?
            // Ids are time-ordered (the millisecond, then the order stored in; see `MessageID`).
            try database.prepare("""
                SELECT m.id, m.timestamp FROM messages m WHERE m.conversation = ?1
                    AND (?2 IS NULL OR m.account_id IN (SELECT id FROM accounts WHERE jid = ?2))
                ORDER BY m.id DESC LIMIT 1 OFFSET ?3
                """).forEachRow([.text(conversation), SQLValue(account), .integer(Int64(max(count - 1, 0)))]) { row in
                found = (row.int(0), row.int(1))
                return false
            }
            return found
        }
    }

    /// The ids of a conversation's messages (every account's), read from its index only: what
    /// `roost log --follow` compares to find the messages archived since it last looked — live ones, and
    /// those that arrive late with older times (the server archive's, an import's).
    public func messageIDs(conversation: String) throws(ArchiveError) -> Set<Int64> {
        try withDatabase { database throws(SQLiteError) -> Set<Int64> in
            var ids = Set<Int64>()
            try database.prepare("SELECT id FROM messages WHERE conversation = ?").forEachRow([.text(conversation)]) { row in
                ids.insert(row.int(0))
                return true
            }
            return ids
        }
    }

    /// These messages, of `account` only when given, in time order.
    public func messages(ids: Set<Int64>, account: String?) throws(ArchiveError) -> [MessageRow] {
        var rows: [MessageRow] = []
        try withDatabase { database throws(SQLiteError) in
            let reading = try MessageRowReading(database)
            let statement = try database.prepare("""
                SELECT \(MessageRowReading.columns) FROM messages m WHERE m.id = ?1
                    AND (?2 IS NULL OR m.account_id IN (SELECT id FROM accounts WHERE jid = ?2))
                """)
            for id in ids.sorted() {
                try statement.forEachRow([.integer(id), SQLValue(account)]) { row throws(SQLiteError) in
                    rows.append(try reading.row(row))
                    return false
                }
            }
        }
        return rows
    }

    /// How many messages match `query` (all of them for ""), without reading them.
    public func count(query: String, account: String? = nil, now: Date = Date(), timeZone: TimeZone = .current) throws(ArchiveError) -> Int {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        var (sql, parameters) = MessageStatement(compiled).select("count(*)")
        let unfiltered = compiled.whereSQL == "1" && compiled.parameters.isEmpty
        if let fts = compiled.ftsExpression, unfiltered {
            // Words only: the index alone answers (every indexed row is a message), no row is read.
            sql = "SELECT count(*) FROM message_fts WHERE message_fts MATCH ?"
            parameters = [.text(fts)]
        }
        return try withDatabase { database throws(SQLiteError) -> Int in
            if unfiltered && compiled.ftsExpression == nil, try StatsQuery.keepsCounters(database) {
                // Everything: the counters the writer keeps per conversation (SchemaV10), O(conversations).
                return Int(try database.prepare("SELECT coalesce(sum(messages), 0) FROM conversation_counts").scalarInt() ?? 0)
            }
            return Int(try database.prepare(sql).scalarInt(parameters) ?? 0)
        }
    }

    /// Counts per account and conversation, and the archive's size on disk.
    public func stats(account: String? = nil) throws(ArchiveError) -> ArchiveStats {
        let path = self.path
        return try withDatabase { database throws(SQLiteError) -> ArchiveStats in
            try database.read { () throws(SQLiteError) -> ArchiveStats in
                try StatsQuery.run(database, path: path, account: account)
            }
        }
    }

    /// The messages matching `query` counted per account and conversation (and per time bucket).
    public func counts(query: String, account: String? = nil, by bucket: StatsBucket? = nil, now: Date = Date(),
                       timeZone: TimeZone = .current) throws(ArchiveError) -> [ConversationCount] {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        return try withDatabase { database throws(SQLiteError) -> [ConversationCount] in
            try StatsQuery.counts(database, query: compiled, bucket: bucket)
        }
    }

    /// Parses `query`, keeps only `account`'s messages (nil: every account's) and `conversation`'s (a value, never
    /// parsed: see `QueryFilter.conversation`), resolves the query's names (see `QueryNames`) within that account,
    /// and compiles it. `database`: a connection the caller already holds (an export's snapshot); else the
    /// reader's own is taken.
    func compile(_ query: String, now: Date, timeZone: TimeZone, account: String? = nil, conversation: String? = nil,
                 database: Database? = nil) throws(ArchiveError) -> CompiledQuery {
        let (node, counted) = try resolve(query, account: account, conversation: conversation, database: database)
        return QueryCompiler.compile(node, now: now, timeZone: timeZone, conversationsCounted: counted)
    }

    /// What `compile` compiles: the parsed query with the account and conversation it keeps to and its names resolved,
    /// and whether the archive lists its conversations (`SchemaV10`).
    func resolve(_ query: String, account: String? = nil, conversation: String? = nil,
                 database: Database? = nil) throws(ArchiveError) -> (node: QueryNode, conversationsCounted: Bool) {
        var node: QueryNode
        do throws(QueryError) {
            node = try QueryParser.parse(query)
        } catch {
            throw .query(error)
        }
        for filter in [conversation.map(QueryFilter.conversation), account.map(QueryFilter.account)].compactMap({ $0 }) {
            node = node == .all ? .filter(filter) : .and([.filter(filter), node])
        }
        var counted = false
        if Self.mentionsNames(node) {
            // With the names, whether the archive lists its conversations (`SchemaV10`): `from:` then reads rooms only
            // where it looks for nicks (see `QueryCompiler`).
            let parsed = node
            let lookUp = { (database: Database) throws(ArchiveError) -> (QueryNode, Bool) in
                let resolved = try QueryNames.resolve(parsed, account: account, database: database)
                do throws(SQLiteError) { return (resolved, try StatsQuery.keepsCounters(database)) } catch { throw .sqlite(error) }
            }
            if let database {
                (node, counted) = try lookUp(database)
            } else {
                (node, counted) = try withDatabaseResult(lookUp)
            }
        }
        return (node, counted)
    }

    /// Whether the query has a `with:`, `in:`, `from:` or `to:` filter to resolve.
    private static func mentionsNames(_ node: QueryNode) -> Bool {
        switch node {
        case .all, .text: false
        case .and(let children), .or(let children): children.contains(where: mentionsNames)
        case .not(let inner): mentionsNames(inner)
        case .filter(let filter):
            switch filter {
            case .with, .room, .from, .to: true
            default: false
            }
        }
    }

    /// `withDatabase` for a body that fails with an `ArchiveError` of its own.
    func withDatabaseResult<T: Sendable>(_ body: (Database) throws(ArchiveError) -> T) throws(ArchiveError) -> T {
        try database.withLock { database throws(ArchiveError) -> T in
            try body(database)
        }
    }

    /// Internal (not private) so that export, import and the contact queries, in their own files, read under the same lock.
    func withDatabase<T: Sendable>(_ body: (Database) throws(SQLiteError) -> T) throws(ArchiveError) -> T {
        try database.withLock { database throws(ArchiveError) -> T in
            do throws(SQLiteError) {
                return try body(database)
            } catch {
                throw .sqlite(error)
            }
        }
    }
}

extension DateExpression {
    /// A date as the query language writes it (`2026-01-15`, `2026-01`, `7d`, `yesterday`, …) as the UTC
    /// milliseconds `[start, end)` it spans (an instant for relative dates), for options such as
    /// `roost log --since`. `option` names the option in the error.
    public static func span(of text: String, option: String, now: Date = Date(),
                            timeZone: TimeZone = .current) throws(QueryError) -> (start: Int64, end: Int64) {
        let expression = try FilterParser.date(text, column: 1, query: text)
        return DateResolver(now: now, timeZone: timeZone).span(expression)
    }
}
