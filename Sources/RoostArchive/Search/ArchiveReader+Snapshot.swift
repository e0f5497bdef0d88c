/// One consistent read for long operations (export): a single read transaction under the reader's lock.
extension ArchiveReader {
    /// Runs `body` inside one deferred read transaction, so everything it reads comes from one snapshot even
    /// while the agent keeps writing. SQLite failures become `ArchiveError.sqlite`; other errors pass through.
    func withSnapshot<T>(_ body: (Database) throws -> T) throws -> T {
        var failure: (any Error)?
        let result = try withDatabase { database throws(SQLiteError) -> T? in
            try database.read { () throws(SQLiteError) -> T? in
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
}
