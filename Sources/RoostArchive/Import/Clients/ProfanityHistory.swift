import RoostCore
import Foundation

/// Profanity's chat log database (Profanity 0.10 and later): `database/ACCOUNT/chatlog.db` in
/// `~/.local/share/profanity/`, ACCOUNT being the account's bare JID with `@` written `_at_`. Facts from
/// src/database.c: one table `ChatLogs` (id, from_jid, to_jid, from_resource, to_resource, message,
/// timestamp = ISO 8601 text with the local offset, type = chat | muc | mucpm, stanza_id = the message id,
/// archive_id = the server archive's stanza-id, encryption, marked_read, replace_id = the id of the message a
/// correction replaces; version 2 (Profanity 0.15) adds replaces_db_id and replaced_by_db_id, version 3 (0.18) makes
/// archive_id unique) and `DbVersion` (version; no row before 0.15). Before version 2 empty strings stood
/// for missing values. The account's own messages have the account as `from_jid`, in rooms too (its nick is
/// not kept); others' room messages have the room as `from_jid` and the nick as `from_resource`.
final class ProfanityDatabase: ClientHistoryReader {
    private let snapshot: SourceSnapshot
    private let version: Int
    private let folderAccount: String?

    static func open(_ snapshot: SourceSnapshot) throws(ImportError) -> ProfanityDatabase? {
        let tables = try snapshot.tables()
        guard tables.contains("chatlogs"),
              try snapshot.columns(of: "ChatLogs").isSuperset(of: ["from_jid", "to_jid", "message", "timestamp"]) else { return nil }
        var version = 1
        if tables.contains("dbversion") {
            try snapshot.query("SELECT max(version) FROM DbVersion") { row in version = Int(row.optionalInt(0) ?? 1) }
        }
        return ProfanityDatabase(snapshot: snapshot, version: version)
    }

    private init(snapshot: SourceSnapshot, version: Int) {
        self.snapshot = snapshot
        self.version = version
        let folder = ((snapshot.originalPath as NSString).deletingLastPathComponent as NSString).lastPathComponent
        folderAccount = folder.contains("_at_") ? ClientText.bareJID(folder.replacingOccurrences(of: "_at_", with: "@")) : nil
    }

    var description: String { "Profanity chat log database: \(snapshot.originalPath) (version \(version))" }

    /// The folder names the account; failing that, the JID found on every row (as sender or recipient).
    func accounts() throws(ImportError) -> [String] {
        if let folderAccount { return [folderAccount] }
        var counts: [String: Int] = [:]
        var rows = 0
        try snapshot.query("SELECT lower(from_jid), lower(to_jid) FROM ChatLogs") { row in
            rows += 1
            for jid in Set([row.text(0), row.text(1)]) { counts[jid, default: 0] += 1 }
        }
        return counts.filter { $0.value == rows }.keys.compactMap { ClientText.bareJID($0) }.sorted()
    }

    func read(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let found = try accounts()
        guard let account = folderAccount ?? wanted ?? (found.count == 1 ? found[0] : nil) else {
            throw .accountNeeded(path: snapshot.originalPath, reason: "the database does not say whose it is")
        }
        if let wanted, wanted != account { return }
        let columns = try snapshot.columns(of: "ChatLogs")
        func column(_ name: String) -> String { columns.contains(name) ? "nullif(\(name), '')" : "NULL" }
        let clock = ZoneClock(timeZone: .current)
        var corrections: [ClientMessage] = []
        var messageIDOfRow: [Int64: String] = [:]
        var replacesRow: [Int64: Int64] = [:]
        try snapshot.query("""
            SELECT id, from_jid, \(column("from_resource")), to_jid, \(column("to_resource")), message, timestamp,
                   \(column("type")), \(column("stanza_id")), \(column("archive_id")), \(column("replace_id")),
                   \(column("replaces_db_id"))
            FROM ChatLogs ORDER BY timestamp, id
            """) { row throws(ImportError) in
            let rowID = row.int(0)
            let location = "ChatLogs row \(rowID)"
            guard let from = ClientText.bareJID(row.optionalText(1)), let to = ClientText.bareJID(row.optionalText(3)) else {
                return try body(.refused(reason: "no valid sender or recipient JID", location: location))
            }
            guard let text = ClientText.nonEmpty(row.optionalText(5)) else {
                return try body(.refused(reason: "empty message", location: location))
            }
            if text == "[REDACTED]" || text == "[redacted]" {
                return try body(.refused(reason: "text not kept (Profanity's redact setting)", location: location))
            }
            guard let stamp = row.optionalText(6), let timestamp = ClientTime.iso8601(stamp, clock: clock) else {
                return try body(.refused(reason: "no readable time", location: location))
            }
            let type = row.optionalText(7) ?? "chat"
            guard ["chat", "muc", "mucpm"].contains(type) else {
                return try body(.refused(reason: "unknown message type \(type)", location: location))
            }
            let direction: MessageDirection = from == account ? .outgoing : .incoming
            var message = ClientMessage(account: account, conversation: direction == .outgoing ? to : from,
                                        kind: type == "muc" ? .groupchat : .chat, direction: direction, body: text,
                                        timestamp: timestamp)
            let peerResource = direction == .incoming ? row.optionalText(2) : row.optionalText(4)
            message.resource = type == "chat" && direction == .outgoing ? nil : ClientText.nonEmpty(peerResource)
            if type == "muc" && direction == .outgoing { message.resource = nil }
            message.messageId = ClientText.nonEmpty(row.optionalText(8))
            if let archiveID = ClientText.nonEmpty(row.optionalText(9)) {
                message.stanzaId = archiveID
                message.stanzaIdBy = type == "muc" ? message.conversation : account
            }
            if let id = message.messageId { messageIDOfRow[rowID] = id }
            if let replaces = ClientText.nonEmpty(row.optionalText(10)) {
                message.replaces = replaces
                if let original = row.optionalInt(11) { replacesRow[Int64(corrections.count)] = original }
                corrections.append(message)
                return
            }
            try body(.message(message.record))
        }
        for (index, correction) in corrections.enumerated() {
            var message = correction
            // Version 2 links a correction to the row it corrects; the original's id is what the archive knows.
            if let original = replacesRow[Int64(index)], let id = messageIDOfRow[original] { message.replaces = id }
            try body(.message(message.record))
        }
    }
}

/// Profanity's plain-text chat logs (`/logging chat on`, every version): `chatlogs/ACCOUNT/CONTACT/YYYY_MM_DD.log`
/// and `chatlogs/ACCOUNT/rooms/ROOM/YYYY_MM_DD.log` in `~/.local/share/profanity/`, JIDs with `@` written
/// `_at_` (a private message in a room: `ROOM_NICK`). One line per message (continued on the next lines when
/// the text has line breaks): `TIME - me: text`, `TIME - NAME: text`, `TIME - *NAME text` for `/me`. TIME is
/// `HH:MM:SS` local time up to Profanity 0.12 (the date is the file's; the zone is the machine's, or
/// `--time-zone`), ISO 8601 with its offset from 0.13 on (facts from src/chatlog.c and, before 0.13, src/log.c).
final class ProfanityTextLogs: ClientHistoryReader {
    let root: String
    private let account: String
    private let clock: ZoneClock

    init(accountFolder: String, timeZone: TimeZone) throws(ImportError) {
        root = accountFolder
        let name = (accountFolder as NSString).lastPathComponent.replacingOccurrences(of: "_at_", with: "@")
        guard let account = ClientText.bareJID(name) else {
            throw .accountNeeded(path: accountFolder, reason: "the folder name is not an account JID")
        }
        self.account = account
        clock = ZoneClock(timeZone: timeZone)
    }

    var description: String { "Profanity chat logs (text): \(root)" }

    func accounts() throws(ImportError) -> [String] { [account] }

    func read(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        if let wanted, wanted != account { return }
        let fm = FileManager.default
        for entry in (try? fm.contentsOfDirectory(atPath: root))?.sorted() ?? [] {
            let folder = root + "/" + entry
            if entry == "rooms" {
                for room in (try? fm.contentsOfDirectory(atPath: folder))?.sorted() ?? [] {
                    guard let jid = ClientText.bareJID(room.replacingOccurrences(of: "_at_", with: "@")) else {
                        try body(.refused(reason: "folder name is not a room JID", location: folder + "/" + room))
                        continue
                    }
                    try readFolder(folder + "/" + room, conversation: jid, kind: .groupchat, nick: nil, body)
                }
                continue
            }
            var name = entry.replacingOccurrences(of: "_at_", with: "@")
            var nick: String?
            // ROOM_NICK: a private message in a room (a domain has no "_").
            if let at = name.firstIndex(of: "@"), let underscore = name[at...].lastIndex(of: "_") {
                nick = String(name[name.index(after: underscore)...])
                name = String(name[..<underscore])
            }
            guard let jid = ClientText.bareJID(name) else {
                try body(.refused(reason: "folder name is not a contact JID", location: folder))
                continue
            }
            try readFolder(folder, conversation: jid, kind: .chat, nick: nick, body)
        }
    }

    private func readFolder(_ folder: String, conversation: String, kind: MessageKind, nick: String?,
                            _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        for file in (try? FileManager.default.contentsOfDirectory(atPath: folder))?.sorted() ?? [] where file.hasSuffix(".log") {
            let path = folder + "/" + file
            let parts = file.dropLast(4).split(separator: "_").compactMap { Int($0) }
            guard parts.count == 3 else {
                try body(.refused(reason: "file name is not a date (YYYY_MM_DD.log)", location: path))
                continue
            }
            let day = CivilTime.days(year: parts[0], month: parts[1], day: parts[2])
            var pending: (message: ClientMessage, line: Int)?
            func flush() throws(ImportError) {
                if let pending { try body(.message(pending.message.record)) }
                pending = nil
            }
            try TextLogFile.forEachLine(path) { number, line throws(ImportError) in
                guard let line else {
                    try flush()
                    return try body(.refused(reason: "not valid UTF-8", location: "\(path):\(number)"))
                }
                guard let (timestamp, rest) = timePrefix(line, day: day) else {
                    // A line break inside the previous message.
                    if pending != nil { pending?.message.body += "\n" + line } else if !line.isEmpty {
                        try body(.refused(reason: "no time at the start of the line", location: "\(path):\(number)"))
                    }
                    return
                }
                try flush()
                var speaker: String
                var text: String
                if rest.hasPrefix("*"), let space = rest.firstIndex(of: " ") {
                    speaker = String(rest[rest.index(after: rest.startIndex)..<space])
                    text = "/me " + rest[rest.index(after: space)...]
                } else if let colon = rest.range(of: ": ") {
                    speaker = String(rest[..<colon.lowerBound])
                    text = String(rest[colon.upperBound...])
                } else {
                    return try body(.refused(reason: "no sender on the line", location: "\(path):\(number)"))
                }
                speaker = speaker.trimmingCharacters(in: .whitespaces)
                let mine = kind == .chat && speaker == "me"
                var message = ClientMessage(account: account, conversation: conversation, kind: kind,
                                            direction: mine ? .outgoing : .incoming, body: text, timestamp: timestamp)
                message.resource = kind == .groupchat ? speaker : (mine ? nil : nick)
                pending = (message, number)
            }
            try flush()
        }
    }

    /// `HH:MM:SS - ` (local time of the file's day) or `ISO8601 - `, and the rest of the line.
    private func timePrefix(_ line: String, day: Int64) -> (Int64, Substring)? {
        guard let dash = line.range(of: " - ") else { return nil }
        let stamp = line[..<dash.lowerBound]
        let rest = line[dash.upperBound...]
        if stamp.count == 8, stamp.dropFirst(2).first == ":", stamp.dropFirst(5).first == ":" {
            let fields = stamp.split(separator: ":").compactMap { Int($0) }
            guard fields.count == 3, fields[0] < 24, fields[1] < 60, fields[2] < 61 else { return nil }
            let local = day * 86_400_000 + Int64(fields[0] * 3600 + fields[1] * 60 + fields[2]) * 1000
            return (clock.utc(fromLocal: local), rest)
        }
        guard let timestamp = ClientTime.iso8601(String(stamp), clock: clock) else { return nil }
        return (timestamp, rest)
    }
}

/// Times as clients write them in text.
enum ClientTime {
    /// ISO 8601 / RFC 3339 with an offset (`2020-03-24T11:12:14.123456+01:00`, `…Z`, `+0100`, `+01`); without
    /// one (`2020-03-24 11:12:14`, `2020/03/24 11:12:14`) the time is read in `clock`'s zone.
    static func iso8601(_ text: String, clock: ZoneClock) -> Int64? {
        var text = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "/", with: "-")
        if let milliseconds = Timestamp.parse(text) { return milliseconds }
        // +0100 → +01:00, +01 → +01:00
        let scalars = Array(text.unicodeScalars)
        if let sign = scalars.lastIndex(where: { $0 == "+" || $0 == "-" }), sign > 10 {
            let digits = String(String.UnicodeScalarView(scalars[(sign + 1)...]))
            if digits.count == 4, digits.allSatisfy(\.isNumber) {
                text = String(text.dropLast(4)) + digits.prefix(2) + ":" + digits.suffix(2)
            } else if digits.count == 2, digits.allSatisfy(\.isNumber) {
                text += ":00"
            }
            if let milliseconds = Timestamp.parse(text) { return milliseconds }
        }
        // No offset: local time.
        guard let asUTC = Timestamp.parse(text + "Z") else { return nil }
        return clock.utc(fromLocal: asUTC)
    }
}

/// Reads a text log line by line (LF or CRLF); a line that is not UTF-8 (or is longer than 16 MiB) is handed
/// on as nil.
enum TextLogFile {
    static func forEachLine(_ path: String, _ body: (Int, String?) throws(ImportError) -> Void) throws(ImportError) {
        let reader = try LineReader(path: path)
        var failure: ImportError?
        do {
            try reader.forEachLine { number, bytes in
                do throws(ImportError) {
                    try body(number, bytes.flatMap { String(validating: $0, as: UTF8.self) })
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw .unreadable(path: path, errno: EIO)
        }
        if let failure { throw failure }
    }
}
