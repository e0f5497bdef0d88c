/// One consistent read for long operations (export): a single read transaction under the reader's lock.
extension ArchiveReader {
    /// Runs `body` inside one deferred read transaction, so everything it reads comes from one snapshot even
    /// while the agent keeps writing. SQLite failures become `ArchiveError.sqlite`; other errors pass through.
    ///
    /// `mapped`: read the database file through a memory map for the duration (export). An export walks the
    /// messages conversation by conversation, so each table page (rows of many conversations, in time order) is
    /// wanted once per conversation on it: through `pread` every visit copied the page again (14–23 % of an mbox
    /// or html export); mapped, only its first visit faults it in.
    func withSnapshot<T: Sendable>(mapped: Bool = false, _ body: (Database) throws -> T) throws -> T {
        var failure: (any Error)?
        let result = try withDatabase { database throws(SQLiteError) -> T? in
            if mapped { try database.execute("PRAGMA mmap_size = \(Self.exportMapBytes)") }
            defer { if mapped { try? database.execute("PRAGMA mmap_size = 0") } }
            return try database.read { () throws(SQLiteError) -> T? in
                do {
                    return try body(database)
                } catch let error as SQLiteError {
                    throw error
                } catch {
                    failure = error
                    return nil
                }
            }
        }
        if let failure { throw failure }
        guard let result else { preconditionFailure("a snapshot body returned neither a value nor an error") }
        return result
    }

    /// At most this much of the file is mapped (the rest is read as before); address space, not memory.
    static let exportMapBytes: Int64 = 1 << 32
}
