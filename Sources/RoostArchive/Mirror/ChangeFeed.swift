import RoostCore

/// The change feed of `SchemaV18`: which messages changed after a position, and the named cursors kept beside it
/// (`roost export --since-last NAME`, the mail mirror's `mirror`). See docs/mirror.md.
enum ChangeFeed {
    /// The newest change's number; 0 when nothing changed since the archive had a feed.
    static func latest(_ database: Database) throws(SQLiteError) -> Int64 {
        try database.cached("SELECT coalesce(max(seq), 0) FROM message_changes").scalarInt() ?? 0
    }

    /// Where the cursor `name` stands; nil when it was never set.
    static func cursor(_ name: String, _ database: Database) throws(SQLiteError) -> Int64? {
        try database.cached("SELECT seq FROM export_cursors WHERE name = ?").scalarInt([.text(name)])
    }

    /// How many messages changed after `position` (one seek and a count over `message_changes_seq`).
    static func backlog(after position: Int64, _ database: Database) throws(SQLiteError) -> Int64 {
        try database.cached("SELECT count(*) FROM message_changes WHERE seq > ?").scalarInt([.integer(position)]) ?? 0
    }

    /// The messages whose latest change lies in `(after, upTo]`, oldest change first, at most `limit`.
    static func changes(after: Int64, upTo: Int64, limit: Int, _ database: Database) throws(SQLiteError) -> [(seq: Int64, row: Int64)] {
        var changes: [(seq: Int64, row: Int64)] = []
        try database.cached("SELECT seq, message_row FROM message_changes WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?")
            .forEachRow([.integer(after), .integer(upTo), .integer(Int64(limit))]) { row in
                changes.append((row.int(0), row.int(1)))
                return true
            }
        return changes
    }

    /// The condition (over `m`) of the messages changed in `(after, upTo]`.
    static func changedCondition(after: Int64, upTo: Int64) -> (String, [SQLValue]) {
        ("m.id IN (SELECT message_row FROM message_changes WHERE seq > ? AND seq <= ?)", [.integer(after), .integer(upTo)])
    }
}

/// Where a named cursor of the change feed stands.
public struct FeedPosition: Sendable, Equatable {
    /// The cursor; nil when it was never set (its first reader reads everything).
    public var cursor: Int64?
    /// The newest change.
    public var latest: Int64
    /// Messages changed after the cursor (every change's message when it was never set).
    public var backlog: Int64
}

extension ArchiveReader {
    /// Where the cursor `name` stands in the change feed, and how much lies after it.
    public func feedPosition(cursor name: String) throws(ArchiveError) -> FeedPosition {
        try withDatabase { database throws(SQLiteError) -> FeedPosition in
            try database.read { () throws(SQLiteError) -> FeedPosition in
                let cursor = try ChangeFeed.cursor(name, database)
                return FeedPosition(cursor: cursor, latest: try ChangeFeed.latest(database),
                                    backlog: try ChangeFeed.backlog(after: cursor ?? 0, database))
            }
        }
    }
}

extension ArchiveReader {
    /// The account and conversation of a message row; nil when it is not archived.
    public func conversation(ofRow row: Int64) throws(ArchiveError) -> (account: String, conversation: String)? {
        try withDatabase { database throws(SQLiteError) -> (account: String, conversation: String)? in
            var found: (account: String, conversation: String)?
            try database.cached("SELECT a.jid, m.conversation FROM messages m JOIN accounts a ON a.id = m.account_id WHERE m.id = ?")
                .forEachRow([.integer(row)]) { row in
                    found = (row.text(0), row.text(1))
                    return false
                }
            return found
        }
    }
}

extension ArchiveWriter {
    /// Moves the cursor `name` to `seq` (forward or back) in a transaction of its own, durable when it returns.
    public func setCursor(_ name: String, to seq: Int64) throws(ArchiveError) {
        try perform { ingestor throws(ArchiveError) in
            do throws(SQLiteError) {
                try ingestor.database.write { () throws(SQLiteError) in
                    try ingestor.database.run("""
                        INSERT INTO export_cursors (name, seq, updated_at) VALUES (?, ?, ?)
                        ON CONFLICT (name) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at
                        """, [.text(name), .integer(seq), .integer(Timestamp.now())])
                }
            } catch {
                throw .sqlite(error)
            }
        }
    }

    /// Calls `wake` after every commit of this writer's connection (messages, downloads, forgets, cursors), on the
    /// committing thread: it must only note that there is something new (the mail mirror's wake-up).
    public func onCommit(_ wake: @escaping @Sendable () -> Void) {
        // Set on the writer thread, which alone uses the connection; a stopped writer commits nothing more to tell.
        try? perform { ingestor throws(ArchiveError) in
            let previous = ingestor.database.afterCommit
            ingestor.database.afterCommit = { previous?(); wake() }
        }
    }
}
