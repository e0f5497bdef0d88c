import Foundation

/// Finds the histories at a path: a client's database file, a client's data folder, a log folder or file, or a
/// home folder (where every client's usual place is looked at). With a format, only that client's are taken,
/// and finding none is an error naming what was expected.
enum ClientSources {
    static func open(path: String, format: ClientFormat?, timeZone: TimeZone, ownNames: OwnNames) throws(ImportError)
        -> [(format: ClientFormat, reader: any ClientHistoryReader)] {
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isFolder) else { throw .unreadable(path: path, errno: ENOENT) }
        guard fm.isReadableFile(atPath: path) else { throw .unreadable(path: path, errno: EACCES) }
        var found: [(format: ClientFormat, reader: any ClientHistoryReader)] = []
        func wants(_ client: ClientFormat) -> Bool { format == nil || format == client }

        if !isFolder.boolValue {
            if isSQLite(path) {
                let snapshot = try SourceSnapshot(path: path)
                if let reader = try GajimHistory.open(snapshot, ownNames: ownNames) {
                    found.append((.gajim, reader))
                } else if let reader = try DinoHistory.open(snapshot) {
                    found.append((.dino, reader))
                } else if let reader = try ProfanityDatabase.open(snapshot) {
                    found.append((.profanity, ProfanityHistory(database: reader, textLogs: nil)))
                } else {
                    throw .unrecognised(path: path, reason: "an SQLite database, but not the history of Gajim, Dino or Profanity")
                }
            } else if (path.hasSuffix(".html") || path.hasSuffix(".txt")) && wants(.pidgin) {
                found.append((.pidgin, try PidginHistory(path: path, ownNames: ownNames, timeZone: timeZone)))
            } else if wants(.poezio), let reader = try PoezioHistory.open(path, ownNames: ownNames) {
                found.append((.poezio, reader))
            }
            if let format, let other = found.first, other.format != format {
                throw .unrecognised(path: path, reason: "this is \(other.format.displayName)'s history, not \(format.displayName)'s; "
                                    + "use --format \(other.format.rawValue) or --format auto")
            }
        } else {
            let folder = URL(fileURLWithPath: path).standardizedFileURL.path
            if wants(.gajim) {
                for base in [folder, folder + "/.local/share/gajim"] where fm.fileExists(atPath: base + "/logs.db") {
                    let snapshot = try SourceSnapshot(path: base + "/logs.db")
                    guard let reader = try GajimHistory.open(snapshot, ownNames: ownNames) else {
                        throw .unrecognised(path: base + "/logs.db", reason: "not a Gajim history database")
                    }
                    found.append((.gajim, reader))
                    break
                }
            }
            if wants(.dino) {
                for base in [folder, folder + "/.local/share/dino"] where fm.fileExists(atPath: base + "/dino.db") {
                    let snapshot = try SourceSnapshot(path: base + "/dino.db")
                    guard let reader = try DinoHistory.open(snapshot) else {
                        throw .unrecognised(path: base + "/dino.db", reason: "not a Dino database")
                    }
                    found.append((.dino, reader))
                    break
                }
            }
            if wants(.profanity) {
                found += try profanity(folder, timeZone: timeZone, ownNames: ownNames).map { (.profanity, $0) }
            }
            if wants(.pidgin), let root = pidginRoot(folder) {
                found.append((.pidgin, try PidginHistory(path: root, ownNames: ownNames, timeZone: timeZone)))
            }
            if wants(.poezio), let reader = try PoezioHistory.open(folder, ownNames: ownNames) {
                found.append((.poezio, reader))
            }
        }
        if found.isEmpty {
            let expected = switch format {
            case .gajim?: "Gajim's logs.db or its data folder (~/.local/share/gajim)"
            case .dino?: "Dino's dino.db or its data folder (~/.local/share/dino)"
            case .profanity?: "Profanity's data folder (~/.local/share/profanity), a database/ACCOUNT/chatlog.db or a chatlogs/ACCOUNT folder"
            case .pidgin?: "Pidgin's ~/.purple, its logs or logs/jabber folder, or a folder or file inside it"
            case .poezio?: "poezio's data folder (~/.local/share/poezio), its logs folder or a log file"
            case nil: "the history of Gajim, Dino, Profanity, Pidgin or poezio, or a jsonl export"
            }
            throw .unrecognised(path: path, reason: "found no history here; expected \(expected)")
        }
        return found
    }

    private static func isSQLite(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        return header == Data("SQLite format 3\u{0}".utf8)
    }

    /// Profanity's histories under its data folder, a `database` or `chatlogs` folder, or one account's folder in
    /// either: one source per account, its chat log database and its text logs together (Profanity 0.10 and later
    /// write both, the same messages: `ProfanityHistory`).
    private static func profanity(_ folder: String, timeZone: TimeZone, ownNames: OwnNames) throws(ImportError) -> [any ClientHistoryReader] {
        let fm = FileManager.default
        func list(_ path: String) -> [String] { ((try? fm.contentsOfDirectory(atPath: path)) ?? []).sorted() }
        var databases: [String] = []
        var logFolders: [String] = []
        let parent = (folder as NSString).deletingLastPathComponent
        switch (folder as NSString).lastPathComponent {
        case _ where fm.fileExists(atPath: folder + "/chatlog.db"):
            databases.append(folder + "/chatlog.db")
        case "database":
            databases = list(folder).map { folder + "/" + $0 + "/chatlog.db" }
        case "chatlogs":
            logFolders = list(folder).map { folder + "/" + $0 }
        case _ where (parent as NSString).lastPathComponent == "chatlogs":
            logFolders.append(folder)
        default:
            for base in [folder, folder + "/.local/share/profanity"]
            where fm.fileExists(atPath: base + "/database") || fm.fileExists(atPath: base + "/chatlogs") {
                databases = list(base + "/database").map { base + "/database/" + $0 + "/chatlog.db" }
                logFolders = list(base + "/chatlogs").map { base + "/chatlogs/" + $0 }
                break
            }
        }
        // Account folder name (`me_at_example.org`) → its database and its text logs.
        var accounts: [String: (database: String?, logs: String?)] = [:]
        for path in databases where fm.fileExists(atPath: path) {
            accounts[((path as NSString).deletingLastPathComponent as NSString).lastPathComponent, default: (nil, nil)].database = path
        }
        for path in logFolders {
            var isFolder: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { continue }
            accounts[(path as NSString).lastPathComponent, default: (nil, nil)].logs = path
        }
        var readers: [any ClientHistoryReader] = []
        for name in accounts.keys.sorted() {
            let (databasePath, logsPath) = accounts[name]!
            var database: ProfanityDatabase?
            if let databasePath {
                guard let reader = try ProfanityDatabase.open(try SourceSnapshot(path: databasePath)) else {
                    throw .unrecognised(path: databasePath, reason: "not a Profanity chat log database")
                }
                database = reader
            }
            let logs = try logsPath.map { path throws(ImportError) in
                try ProfanityTextLogs(accountFolder: path, timeZone: timeZone, ownNames: ownNames)
            }
            readers.append(ProfanityHistory(database: database, textLogs: logs))
        }
        return readers
    }

    /// `~/.purple`, its `logs/jabber`, or anything inside that tree.
    private static func pidginRoot(_ folder: String) -> String? {
        let fm = FileManager.default
        // ~/.purple, ~/.purple/logs (the folder a user sees), a home folder.
        var candidates = [folder + "/logs/jabber", folder + "/.purple/logs/jabber"]
        if (folder as NSString).lastPathComponent == "logs" { candidates.append(folder + "/jabber") }
        for candidate in candidates where fm.fileExists(atPath: candidate) {
            return candidate
        }
        var url = URL(fileURLWithPath: folder)
        for _ in 0..<4 {
            if url.lastPathComponent == "jabber" && url.deletingLastPathComponent().lastPathComponent == "logs" { return folder }
            url.deleteLastPathComponent()
        }
        return nil
    }
}
