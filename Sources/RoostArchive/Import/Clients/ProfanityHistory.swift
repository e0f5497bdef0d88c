import RoostCore
import Foundation

/// One Profanity account's history: its chat log database and its text logs together. Profanity 0.10 and later write
/// every message to both (the database always, the text logs with `/logging chat on` and `/logging group on`; checked
/// on Profanity 0.13.1), so they are one source: the database is read, and a text line only where the database has no
/// message of the same conversation with the same text within `sameMessageWindow` — messages from before the database
/// (Profanity before 0.10) or missing from it. A text line also says what the database does not: the user's own nick
/// in a room (the database keeps the account's JID), which a database row of the user's own takes from its line.
/// Either part may be missing (a copy of the database alone, logs of an old Profanity).
final class ProfanityHistory: ClientHistoryReader {
    private let database: ProfanityDatabase?
    private let textLogs: ProfanityTextLogs?
    /// Profanity writes the line and the row at the same moment; their stamps differ by microseconds.
    static let sameMessageWindow: Int64 = 2_000

    init(database: ProfanityDatabase?, textLogs: ProfanityTextLogs?) {
        self.database = database
        self.textLogs = textLogs
    }

    var description: String {
        switch (database, textLogs) {
        case (let database?, let logs?): "Profanity: \(database.description) with its text logs \(logs.root)"
        case (let database?, nil): "Profanity: \(database.description)"
        case (nil, let logs?): "Profanity chat logs (text): \(logs.root)"
        case (nil, nil): "Profanity"
        }
    }

    func accounts() throws(ImportError) -> [String] {
        var accounts = Set(try database?.accounts() ?? [])
        if let logs = textLogs { accounts.insert(logs.account) }
        return accounts.sorted()
    }

    func read(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        guard let database else {
            try textLogs?.read(account: wanted, message: { message throws(ImportError) in try body(.message(message.record)) }, other: body)
            return
        }
        // The text lines first (kept in memory, a line per message), then the rows, each taking the line it is.
        var lines: [ClientMessage] = []
        var linesByKey: [String: [Int]] = [:]
        try textLogs?.read(account: wanted, message: { message in
            linesByKey[Self.key(message), default: []].append(lines.count)
            lines.append(message)
        }, other: body)
        var taken = Set<Int>()
        try database.read(account: wanted, message: { row throws(ImportError) in
            var message = row
            let candidates = (linesByKey[Self.key(row)] ?? []).filter { !taken.contains($0) && abs(lines[$0].timestamp - row.timestamp) <= Self.sameMessageWindow }
            if let line = candidates.min(by: { abs(lines[$0].timestamp - row.timestamp) < abs(lines[$1].timestamp - row.timestamp) }) {
                taken.insert(line)
                if row.kind == .groupchat && row.direction == .outgoing && row.resource == nil { message.resource = lines[line].resource }
            }
            try body(.message(message.record))
        }, other: body)
        for (index, line) in lines.enumerated() where !taken.contains(index) {
            try body(.message(line.record))
        }
    }

    /// What a row and its text line share: the conversation and the text (whitespace folded; the log writes what the
    /// database keeps).
    private static func key(_ message: ClientMessage) -> String {
        message.conversation.lowercased() + "\u{0}" + CrossSourceMatch.comparableText(message.undecryptable == nil ? message.body : "\u{0}")
    }
}

/// Profanity's chat log database (Profanity 0.10 and later): `database/ACCOUNT/chatlog.db` in
/// `~/.local/share/profanity/`, ACCOUNT being the account's bare JID with `@` written `_at_`. Facts from
/// src/database.c: one table `ChatLogs` (id, from_jid, to_jid, from_resource, to_resource, message,
/// timestamp = ISO 8601 text with the local offset, type = chat | muc | mucpm, stanza_id = the message id,
/// archive_id = the server archive's stanza-id, encryption, marked_read, replace_id = the id of the message a
/// correction replaces; version 2 (Profanity 0.15) adds replaces_db_id and replaced_by_db_id, version 3 (0.18) makes
/// archive_id unique) and `DbVersion` (version; 1 in 0.13, none before). Before version 2 empty strings stood
/// for missing values. The account's own messages have the account as `from_jid`, in rooms too (its nick is
/// not kept); others' room messages have the room as `from_jid` and the nick as `from_resource`. A private message
/// in a room (`mucpm`) has the room as its peer and the occupant's nick as the peer's resource.
final class ProfanityDatabase {
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

    var description: String { "chat log database \(snapshot.originalPath) (version \(version))" }

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

    /// Every message (originals before their corrections); refusals go to `other`.
    func read(account wanted: String?, message body: (ClientMessage) throws(ImportError) -> Void,
              other: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
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
                return try other(.refused(reason: "no valid sender or recipient JID", location: location))
            }
            guard let text = ClientText.nonEmpty(row.optionalText(5)) else {
                return try other(.refused(reason: "empty message", location: location))
            }
            if text == "[REDACTED]" || text == "[redacted]" {
                return try other(.refused(reason: "text not kept (Profanity's redact setting)", location: location))
            }
            guard let stamp = row.optionalText(6), let timestamp = ClientTime.iso8601(stamp, clock: clock) else {
                return try other(.refused(reason: "no readable time", location: location))
            }
            let type = row.optionalText(7) ?? "chat"
            guard ["chat", "muc", "mucpm"].contains(type) else {
                return try other(.refused(reason: "unknown message type \(type)", location: location))
            }
            let direction: MessageDirection = from == account ? .outgoing : .incoming
            let peer = direction == .outgoing ? to : from
            let peerResource = ClientText.nonEmpty(direction == .incoming ? row.optionalText(2) : row.optionalText(4))
            var message: ClientMessage
            if type == "mucpm" {
                guard let occupant = ClientText.occupantJID(room: peer, nick: peerResource) else {
                    return try other(.refused(reason: "a private message in a room without the occupant's nick", location: location))
                }
                message = ClientMessage(account: account, conversation: occupant, kind: .chat, direction: direction, body: text,
                                        timestamp: timestamp)
            } else {
                message = ClientMessage(account: account, conversation: peer, kind: type == "muc" ? .groupchat : .chat,
                                        direction: direction, body: text, timestamp: timestamp)
                // The user's own nick in a room is not kept (its text line may say it: `ProfanityHistory`).
                message.resource = direction == .outgoing ? nil : peerResource
            }
            message.messageId = ClientText.nonEmpty(row.optionalText(8))
            if let archiveID = ClientText.nonEmpty(row.optionalText(9)) {
                message.stanzaId = archiveID
                message.stanzaIdBy = type == "muc" ? message.conversation : account
            }
            message.undecryptable = EncryptedPlaceholder.recognise(text, client: .profanity)
            if let id = message.messageId { messageIDOfRow[rowID] = id }
            if let replaces = ClientText.nonEmpty(row.optionalText(10)) {
                message.replaces = replaces
                if let original = row.optionalInt(11) { replacesRow[Int64(corrections.count)] = original }
                corrections.append(message)
                return
            }
            try body(message)
        }
        for (index, correction) in corrections.enumerated() {
            var message = correction
            // Version 2 links a correction to the row it corrects; the original's id is what the archive knows.
            if let original = replacesRow[Int64(index)], let id = messageIDOfRow[original] { message.replaces = id }
            try body(message)
        }
    }
}

/// Profanity's plain-text chat logs (`/logging chat on`, every version): `chatlogs/ACCOUNT/CONTACT/YYYY_MM_DD.log`
/// and `chatlogs/ACCOUNT/rooms/ROOM/YYYY_MM_DD.log` in `~/.local/share/profanity/`, JIDs with `@` written
/// `_at_` (a private message in a room: `ROOM_NICK`). One line per message (continued on the next lines when
/// the text has line breaks): `TIME - me: text`, `TIME - NAME: text`, `TIME - *NAME text` for `/me`. TIME is
/// `HH:MM:SS` local time up to Profanity 0.12 (the date is the file's; the zone is the machine's, or
/// `--time-zone`), ISO 8601 with its offset from 0.13 on (facts from src/chatlog.c and, before 0.13, src/log.c).
/// A correction is a line of its own (Profanity 0.13.1 writes the corrected text as a new line). In a room every
/// line is a nick, the user's own too: a line is the user's when its nick is one of theirs (`OwnNames`).
final class ProfanityTextLogs {
    let root: String
    let account: String
    private let clock: ZoneClock
    private let ownNames: OwnNames

    init(accountFolder: String, timeZone: TimeZone, ownNames: OwnNames) throws(ImportError) {
        root = accountFolder
        let name = (accountFolder as NSString).lastPathComponent.replacingOccurrences(of: "_at_", with: "@")
        guard let account = ClientText.bareJID(name) else {
            throw .accountNeeded(path: accountFolder, reason: "the folder name is not an account JID")
        }
        self.account = account
        clock = ZoneClock(timeZone: timeZone)
        self.ownNames = ownNames
    }

    func read(account wanted: String?, message: (ClientMessage) throws(ImportError) -> Void,
              other body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
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
                    try readFolder(folder + "/" + room, conversation: jid, kind: .groupchat, message, body)
                }
                continue
            }
            var name = entry.replacingOccurrences(of: "_at_", with: "@")
            var conversation: String?
            // ROOM_NICK: a private message in a room (a domain has no "_").
            if let at = name.firstIndex(of: "@"), let underscore = name[at...].lastIndex(of: "_") {
                let nick = String(name[name.index(after: underscore)...])
                name = String(name[..<underscore])
                conversation = ClientText.occupantJID(room: name, nick: nick)
            } else {
                conversation = ClientText.bareJID(name)
            }
            guard let conversation else {
                try body(.refused(reason: "folder name is not a contact JID", location: folder))
                continue
            }
            try readFolder(folder, conversation: conversation, kind: .chat, message, body)
        }
    }

    private func readFolder(_ folder: String, conversation: String, kind: MessageKind,
                            _ emit: (ClientMessage) throws(ImportError) -> Void,
                            _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let roomNicks = kind == .groupchat ? ownNames.inRoom(conversation, account: account) : ownNames.given
        for file in (try? FileManager.default.contentsOfDirectory(atPath: folder))?.sorted() ?? [] where file.hasSuffix(".log") {
            let path = folder + "/" + file
            let parts = file.dropLast(4).split(separator: "_").compactMap { Int($0) }
            guard parts.count == 3 else {
                try body(.unread(reason: "file name is not a date (YYYY_MM_DD.log)", location: path))
                continue
            }
            let day = CivilTime.days(year: parts[0], month: parts[1], day: parts[2])
            var pending: ClientMessage?
            var read = 0
            var unread: [(reason: String, line: Int)] = []
            func flush() throws(ImportError) {
                if var message = pending {
                    message.undecryptable = EncryptedPlaceholder.recognise(message.body, client: .profanity)
                    try emit(message)
                }
                pending = nil
            }
            try TextLogFile.forEachLine(path) { number, line throws(ImportError) in
                guard let line else {
                    try flush()
                    read += 1
                    return try body(.refused(reason: "not valid UTF-8", location: "\(path):\(number)"))
                }
                guard let (timestamp, rest) = timePrefix(line, day: day) else {
                    // A line break inside the previous message.
                    if pending != nil { pending?.body += "\n" + line } else if !line.isEmpty {
                        unread.append(("no time at the start of the line", number))
                        try body(.unread(reason: "no time at the start of the line", location: "\(path):\(number)"))
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
                    unread.append(("no sender on the line", number))
                    return try body(.unread(reason: "no sender on the line", location: "\(path):\(number)"))
                }
                read += 1
                speaker = speaker.trimmingCharacters(in: .whitespaces)
                let mine = kind == .chat ? speaker == "me" : roomNicks.contains(speaker)
                var message = ClientMessage(account: account, conversation: conversation, kind: kind,
                                            direction: mine ? .outgoing : .incoming, body: text, timestamp: timestamp)
                if kind == .groupchat { message.resource = speaker }
                pending = message
            }
            try flush()
            try ClientLogFile.check(path, read: read, unread: unread)
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
