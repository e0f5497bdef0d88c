import Foundation

/// A private, checked copy of another program's SQLite database, deleted when dropped.
///
/// The original is only ever opened read-only (`file:…?mode=ro`) and copied with SQLite's backup API, which
/// reads one consistent snapshot under a shared lock: a client that is running and writing is neither blocked
/// for long nor seen half-way, and its files are never written. When SQLite cannot open the original read-only
/// (a WAL database whose `-shm` file is missing in a folder Roost may not write), the database file and its
/// `-wal` are copied byte for byte instead and the copy is opened. The copy is then checked with
/// `PRAGMA quick_check` and read as `immutable`, so a truncated or damaged source fails before anything is
/// imported.
final class SourceSnapshot {
    let originalPath: String
    let database: Database
    private let folder: String

    init(path: String) throws(ImportError) {
        originalPath = path
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadable(path: path, errno: FileManager.default.fileExists(atPath: path) ? EACCES : ENOENT)
        }
        folder = NSTemporaryDirectory() + "roost-import-" + UUID().uuidString
        guard mkdir(folder, 0o700) == 0 else { throw .unreadable(path: folder, errno: errno) }
        let copy = folder + "/source.sqlite"
        do {
            do throws(SQLiteError) {
                let original = try Database(path: Self.uri(path, "mode=ro"), mode: .readOnlyURI)
                try original.backup(to: copy)
            } catch where error.isCorruption {
                throw error
            } catch {
                try Self.copyFiles(from: path, to: copy)
            }
            let snapshot = try Database(path: Self.uri(copy, "mode=ro&immutable=1"), mode: .readOnlyURI)
            var problems: [String] = []
            try snapshot.cached("PRAGMA quick_check(5)").forEachRow { row in
                let line = row.text(0)
                if line != "ok" { problems.append(line) }
                return true
            }
            if !problems.isEmpty { throw SQLiteError(code: 11, message: problems.joined(separator: "; ")) }
            database = snapshot
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw Self.importError(error, path: path)
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The tables of the database, lowercased.
    func tables() throws(ImportError) -> Set<String> {
        var names: Set<String> = []
        try query("SELECT lower(name) FROM sqlite_master WHERE type = 'table'") { row in
            names.insert(row.text(0))
        }
        return names
    }

    /// The columns of `table`, lowercased (empty when there is no such table).
    func columns(of table: String) throws(ImportError) -> Set<String> {
        var names: Set<String> = []
        try query("SELECT lower(name) FROM pragma_table_info(?)", [.text(table)]) { row in
            names.insert(row.text(0))
        }
        return names
    }

    func userVersion() throws(ImportError) -> Int {
        var version = 0
        try query("PRAGMA user_version") { row in version = Int(row.int(0)) }
        return version
    }

    /// Runs a query over the snapshot; SQLite errors become `ImportError.sourceDamaged` naming the original.
    func query(_ sql: String, _ values: [SQLValue] = [], _ body: (Statement.Row) throws(ImportError) -> Void) throws(ImportError) {
        var failure: ImportError?
        do throws(SQLiteError) {
            try database.prepare(sql).forEachRow(values) { row throws(SQLiteError) -> Bool in
                do throws(ImportError) {
                    try body(row)
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
        } catch {
            throw Self.importError(error, path: originalPath)
        }
        if let failure { throw failure }
    }

    private static func uri(_ path: String, _ parameters: String) -> String {
        var escaped = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%", "?", "#", " ": escaped += String(format: "%%%02X", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "file:\(escaped)?\(parameters)"
    }

    private static func copyFiles(from path: String, to copy: String) throws(SQLiteError) {
        for suffix in ["", "-wal"] {
            guard FileManager.default.fileExists(atPath: path + suffix) else { continue }
            do {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
            } catch {
                throw SQLiteError(code: 14, message: "cannot copy \(path + suffix): \(error.localizedDescription)")
            }
        }
        // Replays the copied WAL into the copy (the original stays untouched).
        let database = try Database(path: copy, mode: .readWrite, synchronous: .off)
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
    }

    private static func importError(_ error: any Error, path: String) -> ImportError {
        if let error = error as? ImportError { return error }
        guard let error = error as? SQLiteError else { return .sourceDamaged(path: path, detail: "\(error)") }
        switch error.primaryCode {
        case 26: return .unrecognised(path: path, reason: "not an SQLite database")
        case 5, 6: return .sourceDamaged(path: path, detail: "locked by the client for too long; close it and retry")
        default: return .sourceDamaged(path: path, detail: error.message)
        }
    }
}

extension SQLiteError {
    /// SQLITE_CORRUPT or SQLITE_NOTADB: the file itself is bad, copying it differently will not help.
    var isCorruption: Bool { primaryCode == 11 || primaryCode == 26 }
}
