internal import CSQLite

extension Database {
    /// Copies the whole database into a new file at `path` with SQLite's online backup API: one consistent
    /// snapshot, taken under a read lock, so a program that keeps writing to the source (a running client, a
    /// running agent) is neither disturbed nor seen half-way. The new file is created 0600.
    func backup(to path: String) throws(SQLiteError) {
        try DatabaseFile.prepare(path: path)
        var destination: OpaquePointer?
        let rc = sqlite3_open_v2(path, &destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let destination else {
            let message = destination.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let destination { sqlite3_close_v2(destination) }
            throw SQLiteError(code: rc, message: "cannot create \(path): \(message)")
        }
        defer { sqlite3_close_v2(destination) }
        guard let backup = sqlite3_backup_init(destination, "main", handle, "main") else {
            throw SQLiteError(code: sqlite3_extended_errcode(destination), message: String(cString: sqlite3_errmsg(destination)))
        }
        let step = sqlite3_backup_step(backup, -1)
        let finish = sqlite3_backup_finish(backup)
        if step != SQLITE_DONE {
            // The source's error (busy, damaged page) is the one worth reporting.
            let source = sqlite3_extended_errcode(handle)
            throw SQLiteError(code: source != 0 ? source : step, message: String(cString: sqlite3_errstr(step)))
        }
        if finish != SQLITE_OK {
            throw SQLiteError(code: finish, message: String(cString: sqlite3_errmsg(destination)))
        }
    }
}
