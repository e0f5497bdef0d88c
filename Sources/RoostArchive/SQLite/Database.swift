internal import CSQLite
import Foundation

/// One SQLite connection. Owns the `sqlite3*` handle and closes it in `deinit`.
/// Not thread-safe by itself: the archive wraps each connection in a lock.
/// `package`: the OMEMO key store (RoostOMEMO) uses the same wrapper for its own file.
package final class Database {
    package enum Mode: Equatable {
        /// Creates the file (0600) and folders (0700) when missing.
        case readWrite
        case readOnly
        /// `path` is an SQLite URI (`file:…?mode=ro`, `immutable=1`): for reading other programs' databases.
        case readOnlyURI
    }

    /// `PRAGMA synchronous` for the connection; the live writer uses `.full` so an acked message is on disk.
    package enum Synchronous: String, Sendable {
        case off = "OFF", normal = "NORMAL", full = "FULL"
    }

    let handle: OpaquePointer
    let path: String
    private var statementCache: [String: Statement] = [:]
    /// Indexes the archive's SQL names with `INDEXED BY` that this file lacks (an import's bulk load left them
    /// out: `DeferredIndexes`). The clause is left out of statements prepared here, so a reader still answers
    /// (by a scan) instead of failing with "no such index".
    var missingIndexes: [String] = []
    /// While set, an update of a message's text notes the row in `fts_pending` instead of updating the full-text
    /// index at once (`SchemaV14`); the writer sets it for the span of one batch and indexes the noted rows at its end.
    var defersFullTextUpdates = false
    /// Called after each `write` commits (the writer's `onCommit`: the mail mirror's wake-up).
    var afterCommit: (@Sendable () -> Void)?

    /// Process-wide settings that must precede SQLite's initialisation: evaluated once, before the first open.
    private static let configured: Void = {
        // Memory statistics off (see the shim); harmless if another library initialised SQLite first (ignored).
        _ = roost_sqlite_disable_memory_statistics()
    }()

    package init(path: String, mode: Mode, synchronous: Synchronous = .full, busyTimeoutMs: Int32 = Database.defaultBusyTimeoutMs) throws(SQLiteError) {
        Self.configured
        if mode == .readWrite { try DatabaseFile.prepare(path: path) }
        var db: OpaquePointer?
        let access = switch mode {
        case .readWrite: SQLITE_OPEN_READWRITE
        case .readOnly: SQLITE_OPEN_READONLY
        case .readOnlyURI: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
        }
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "cannot open archive \(path): \(message)")
        }
        self.handle = db
        self.path = path
        sqlite3_busy_timeout(db, busyTimeoutMs)
        sqlite3_extended_result_codes(db, 1)
        try SearchTextFunctions.register(on: self)
        try StoredStanza.register(on: self)
        try DedupKey.register(on: self)
        if mode == .readWrite {
            try execute("PRAGMA journal_mode = WAL")
            try execute("PRAGMA synchronous = \(synchronous.rawValue)")
            // 16 MiB page cache (an upper bound, not an allocation): keeps index pages of large archives hot.
            try execute("PRAGMA cache_size = -16384")
        }
        try execute("PRAGMA foreign_keys = ON")
    }

    /// The busy timeout a connection opens with, in milliseconds.
    package static let defaultBusyTimeoutMs: Int32 = 5000

    /// How long a statement waits for another connection's lock before failing with SQLITE_BUSY.
    package func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    func error(code: Int32, sql: String?) -> SQLiteError {
        let extended = sqlite3_extended_errcode(handle)
        let message = String(cString: sqlite3_errmsg(handle))
        return SQLiteError(code: extended != 0 ? extended : code, message: message, sql: sql)
    }

    /// Runs one or more statements without parameters (schema, pragmas).
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// A cached prepared statement for SQL the archive itself writes (never user text).
    package func cached(_ sql: String) throws(SQLiteError) -> Statement {
        if let statement = statementCache[sql] { return statement }
        let statement = try Statement(database: self, sql: withoutMissingIndexes(sql))
        statementCache[sql] = statement
        return statement
    }

    /// A one-off statement (generated search SQL varies per query; caching it would grow without bound).
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: self, sql: withoutMissingIndexes(sql))
    }

    private func withoutMissingIndexes(_ sql: String) -> String {
        missingIndexes.reduce(sql) { $0.replacingOccurrences(of: "INDEXED BY \($1)", with: "") }
    }

    package func run(_ sql: String, _ values: [SQLValue] = []) throws(SQLiteError) {
        try cached(sql).run(values)
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    package var changes: Int32 { sqlite3_changes(handle) }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so a concurrent
    /// writer waits at BEGIN (busy timeout) instead of failing halfway. Rolls back when `body` throws.
    package func write<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run("COMMIT")
            afterCommit?()
            return result
        } catch {
            try? run("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in a deferred read transaction so multi-statement reads see one snapshot.
    package func read<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try run("BEGIN DEFERRED")
        defer { try? run("COMMIT") }
        return try body()
    }
}
