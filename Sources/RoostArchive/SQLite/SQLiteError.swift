/// A failure reported by SQLite. Carries the primary/extended result code, SQLite's message and the SQL text
/// that failed. Bound values are never included: they may hold private message text.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (`sqlite3_extended_errcode`), e.g. 2067 for SQLITE_CONSTRAINT_UNIQUE.
    public let code: Int32
    public let message: String
    /// The statement that failed, without bound values; nil for failures outside a statement (open, pragma).
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The primary result code (low byte), e.g. 19 for any SQLITE_CONSTRAINT_*.
    public var primaryCode: Int32 { code & 0xff }

    public var isBusy: Bool { primaryCode == 5 || primaryCode == 6 }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(200)))" }
        if isBusy {
            text += ". The archive is locked by another process; retry, or stop the other writer."
        } else if primaryCode == 13 {
            text += ". The disk is full; free some space and retry."
        } else if primaryCode == 11 || primaryCode == 26 {
            text += ". The archive file is damaged or not an SQLite database; restore it from a backup."
        }
        return text
    }
}
