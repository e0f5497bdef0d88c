internal import CSQLite

/// SQLite's "copy the bytes now" destructor sentinel, which Swift cannot import as a macro.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Owns its `sqlite3_stmt` and finalizes it in `deinit`.
/// Use `reset()` between executions when the statement is cached.
package final class Statement {
    let handle: OpaquePointer
    let sql: String
    private unowned let database: Database

    init(database: Database, sql: String) throws(SQLiteError) {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw database.error(code: rc, sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [SQLValue]) throws(SQLiteError) {
        for (index, value) in values.enumerated() {
            try bind(value, at: Int32(index + 1))
        }
    }

    func bind(_ value: SQLValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v):
            var copy = v
            rc = copy.withUTF8 { bytes -> Int32 in
                guard let base = bytes.baseAddress, bytes.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, transientDestructor)
                }
                return sqlite3_bind_text(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                         Int32(bytes.count), transientDestructor)
            }
        case .blob(let v):
            rc = v.withUnsafeBytes { bytes in
                sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), transientDestructor)
            }
        }
        guard rc == SQLITE_OK else { throw database.error(code: rc, sql: sql) }
    }

    /// Advances to the next row. Returns false when done.
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(code: rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows (or whose rows are ignored).
    package func run(_ values: [SQLValue] = []) throws(SQLiteError) {
        reset()
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Streams rows to `body`; the row view is only valid inside the call.
    package func forEachRow(_ values: [SQLValue] = [], _ body: (Row) throws(SQLiteError) -> Bool) throws(SQLiteError) {
        reset()
        try bind(values)
        defer { sqlite3_reset(handle) }
        while try step() {
            if try !body(Row(statement: self)) { break }
        }
    }

    /// The first row's first column as an integer, or nil when there is no row or it is NULL.
    package func scalarInt(_ values: [SQLValue] = []) throws(SQLiteError) -> Int64? {
        var result: Int64?
        try forEachRow(values) { row in
            result = row.optionalInt(0)
            return false
        }
        return result
    }

    /// A read-only view of the current row.
    package struct Row {
        let statement: Statement

        var columnCount: Int32 { sqlite3_column_count(statement.handle) }

        package func isNull(_ column: Int32) -> Bool {
            sqlite3_column_type(statement.handle, column) == SQLITE_NULL
        }

        package func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement.handle, column) }

        package func optionalInt(_ column: Int32) -> Int64? { isNull(column) ? nil : int(column) }

        package func bool(_ column: Int32) -> Bool { int(column) != 0 }

        func double(_ column: Int32) -> Double { sqlite3_column_double(statement.handle, column) }

        package func text(_ column: Int32) -> String { optionalText(column) ?? "" }

        package func optionalText(_ column: Int32) -> String? {
            textBytes(column).map { String(decoding: $0, as: UTF8.self) }
        }

        /// The column's text: `previous` itself when it holds the same bytes, else a new String kept in `previous`. A
        /// column whose value repeats from row to row (a conversation's JID, its senders') then costs a comparison,
        /// not a String.
        package func text(_ column: Int32, reusing previous: inout String) -> String {
            guard let bytes = textBytes(column) else { return "" }
            let same = previous.utf8.count == bytes.count && previous.utf8.withContiguousStorageIfAvailable { $0.elementsEqual(bytes) } == true
            if !same { previous = String(decoding: bytes, as: UTF8.self) }
            return previous
        }

        /// The column's text as SQLite holds it (nil for NULL), without making a String: valid until the
        /// statement steps or is reset.
        package func textBytes(_ column: Int32) -> UnsafeBufferPointer<UInt8>? {
            guard let bytes = sqlite3_column_text(statement.handle, column) else { return nil }
            return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement.handle, column)))
        }

        package func optionalBlob(_ column: Int32) -> [UInt8]? {
            if isNull(column) { return nil }
            let count = Int(sqlite3_column_bytes(statement.handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement.handle, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }
}
