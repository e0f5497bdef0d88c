/// One schema step. Versions are applied in order, once, and recorded in `schema_migrations`.
struct Migration: Sendable {
    let version: Int
    let name: String
    let sql: String
    /// Work on existing rows done before `sql`, in batches that commit on their own (a large archive must not
    /// migrate in one transaction). It must be idempotent: a kill -9 between batches leaves the version
    /// unrecorded, and the next open runs it again from the start.
    var batches: (@Sendable (Database) throws(SQLiteError) -> Void)? = nil
}
