import RoostCore
import Foundation

/// poezio's logs (facts from poezio/logger.py, checked on poezio 0.14): `~/.local/share/poezio/logs/JID`, one file per
/// conversation (every account's together), a private message in a room as `ROOM\NICK` (`/` written `\`), beside
/// `roster.log` and `errors.log`. Each line of a file:
///
///     MR 20261206T03:06:31Z 000 <bob>  text     a message: UTC time in whole seconds, how many further lines it has
///      second line                               (each starting with a space), the nick in <>, a space and a no-break
///                                                space (U+00A0), the text
///     MI 20261206T03:06:28Z 000 ---> You (Alice) joined the room      information: joins, leaves, status
///
/// poezio writes neither the account nor the direction. The account is poezio's (`jid =` in
/// `~/.config/poezio/poezio.cfg`, found beside the data folder) or `--account`. In a chat a line is the user's when its
/// nick is poezio's own nick there (`default_nick`, else the account's local part) or a `--me` name; in a room when it
/// is the nick the user joined with (`You (NICK) joined the room`), a `--me` name, or a nick the archive knows as the
/// user's there; in a private message in a room every line not of the occupant is the user's. A file is a room's when
/// a private message names it, or it has join or leave lines. A correction is a second line with the corrected text
/// (poezio logs what it shows), so it imports as two messages unless the archive already holds the corrected one. The
/// same private message logged twice in a row (the server delivers one copy per session of the nick) is one.
final class PoezioHistory: ClientHistoryReader {
    private let logs: String
    /// One file (a path given), or every conversation file of `logs`.
    private let only: String?
    private let configAccount: String?
    private let configNick: String?
    private let ownNames: OwnNames

    /// The poezio history at `path` (its data folder, its logs folder, a log file, or a home folder), nil when there is none.
    static func open(_ path: String, ownNames: OwnNames) throws(ImportError) -> PoezioHistory? {
        let fm = FileManager.default
        var isFolder: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isFolder) else { return nil }
        let standardized = URL(fileURLWithPath: path).standardizedFileURL.path
        if !isFolder.boolValue {
            guard isLogFile(standardized) else { return nil }
            return PoezioHistory(logs: (standardized as NSString).deletingLastPathComponent, only: standardized, ownNames: ownNames)
        }
        for candidate in [standardized + "/logs", standardized, standardized + "/.local/share/poezio/logs"]
        where fm.fileExists(atPath: candidate) {
            let names = (try? fm.contentsOfDirectory(atPath: candidate)) ?? []
            // poezio's logs folder: its roster log, or a conversation file in its format.
            if names.contains("roster.log") || names.contains(where: { isLogFile(candidate + "/" + $0) }) {
                return PoezioHistory(logs: candidate, only: nil, ownNames: ownNames)
            }
        }
        return nil
    }

    /// A file whose first line is a poezio log line.
    private static func isLogFile(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 32)) ?? Data(), as: UTF8.self)
        return parseHeader(Substring(head)) != nil
    }

    private init(logs: String, only: String?, ownNames: OwnNames) {
        self.logs = logs
        self.only = only
        self.ownNames = ownNames
        // ~/.local/share/poezio/logs → ~/.config/poezio/poezio.cfg
        var config: [String: String] = [:]
        if logs.hasSuffix("/.local/share/poezio/logs") {
            let home = String(logs.dropLast("/.local/share/poezio/logs".count))
            config = Self.readConfig(home + "/.config/poezio/poezio.cfg")
        }
        configAccount = ClientText.bareJID(config["jid"])
        configNick = config["default_nick"].flatMap(ClientText.nonEmpty)
    }

    /// The `[Poezio]` section of poezio's config (key = value lines).
    private static func readConfig(_ path: String) -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var values: [String: String] = [:]
        var section = ""
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") { section = trimmed.lowercased() }
            guard section == "[poezio]", let equals = trimmed.firstIndex(of: "="), !trimmed.hasPrefix("#") else { continue }
            values[trimmed[..<equals].trimmingCharacters(in: .whitespaces)] = trimmed[trimmed.index(after: equals)...]
                .trimmingCharacters(in: .whitespaces)
        }
        return values
    }

    var description: String { "poezio logs: \(only ?? logs)" }

    func accounts() throws(ImportError) -> [String] { configAccount.map { [$0] } ?? [] }

    private var files: [String] {
        if let only { return [(only as NSString).lastPathComponent] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? [])
            .filter { !["roster.log", "errors.log"].contains($0) && !$0.hasPrefix(".") }.sorted()
    }

    // MARK: Lines

    private struct Entry {
        var isMessage: Bool
        var time: Int64
        var nick: String?
        var text: String
        var line: Int
    }

    /// `MR 20261206T03:06:31Z 000 ` → (message?, UTC milliseconds, further lines, the rest).
    private static func parseHeader(_ line: Substring) -> (isMessage: Bool, time: Int64, more: Int, rest: Substring)? {
        let scalars = Array(line.utf8.prefix(30))
        guard scalars.count >= 28, scalars[0] == UInt8(ascii: "M"), scalars[1] == UInt8(ascii: "R") || scalars[1] == UInt8(ascii: "I"),
              scalars[2] == 0x20, scalars[11] == UInt8(ascii: "T"), scalars[14] == UInt8(ascii: ":"), scalars[17] == UInt8(ascii: ":"),
              scalars[20] == UInt8(ascii: "Z"), scalars[21] == 0x20, scalars[25] == 0x20 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for byte in scalars[from..<(from + count)] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(3, 4), let month = number(7, 2), let day = number(9, 2), let hour = number(12, 2),
              let minute = number(15, 2), let second = number(18, 2), let more = number(22, 3),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let time = (CivilTime.days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1000
        return (scalars[1] == UInt8(ascii: "R"), time, more, line.dropFirst(26))
    }

    private func entries(_ path: String, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) -> [Entry] {
        var entries: [Entry] = []
        var expected = 0
        var read = 0
        var unread: [(reason: String, line: Int)] = []
        try TextLogFile.forEachLine(path) { number, text throws(ImportError) in
            guard let text else {
                read += 1
                return try body(.refused(reason: "not valid UTF-8", location: "\(path):\(number)"))
            }
            if expected > 0, text.hasPrefix(" "), !entries.isEmpty {
                expected -= 1
                entries[entries.count - 1].text += "\n" + text.dropFirst()
                return
            }
            expected = 0
            guard !text.isEmpty else { return }
            guard let (isMessage, time, more, rest) = Self.parseHeader(Substring(text)) else {
                unread.append(("not a poezio log line (MR/MI, a time, a count)", number))
                return try body(.unread(reason: "not a poezio log line (MR/MI, a time, a count)", location: "\(path):\(number)"))
            }
            read += 1
            expected = more
            // The nick and the text are separated by a space and a no-break space (U+00A0; logger.py).
            if isMessage, rest.hasPrefix("<"), let close = rest.range(of: "> \u{A0}") ?? rest.range(of: ">  ") {
                entries.append(Entry(isMessage: true, time: time, nick: String(rest[rest.index(after: rest.startIndex)..<close.lowerBound]),
                                     text: String(rest[close.upperBound...]), line: number))
            } else {
                entries.append(Entry(isMessage: false, time: time, nick: nil, text: String(rest), line: number))
            }
        }
        try ClientLogFile.check(path, read: read, unread: unread)
        return entries
    }

    // MARK: Reading

    func read(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        guard let account = configAccount ?? wanted else {
            throw .accountNeeded(path: logs, reason: "poezio's logs do not say whose they are (its poezio.cfg is not beside them)")
        }
        if let wanted, wanted != account { return }
        let names = files
        // Rooms: those a private message names (`ROOM\NICK`), and those with join or leave lines (found per file below).
        let privateRooms = Set(names.compactMap { name in name.firstIndex(of: "\\").flatMap { ClientText.bareJID(String(name[..<$0])) } })
        for name in names {
            let path = logs + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
            let parts = name.split(separator: "\\", maxSplits: 1).map(String.init)
            guard let jid = ClientText.bareJID(parts[0]) else {
                try body(.unread(reason: "file name is not a JID", location: path))
                continue
            }
            let entries = try entries(path, body)
            for entry in entries where !entry.isMessage { try body(.notMessage("poezio information lines")) }
            if parts.count == 2 {
                try readPrivate(entries, account: account, room: jid, nick: parts[1], path: path, body)
            } else {
                let joinNicks = Set(entries.compactMap { $0.isMessage ? nil : Self.ownJoinNick($0.text) })
                let isRoom = privateRooms.contains(jid) || !joinNicks.isEmpty
                    || entries.contains { !$0.isMessage && ($0.text.hasSuffix(" joined the room") || $0.text.contains(" left the room")) }
                try readConversation(entries, account: account, jid: jid, isRoom: isRoom, joinNicks: joinNicks, path: path, body)
            }
        }
    }

    /// `---> You (Alice) joined the room`, `<--- You (Alice) left the room (…)`: the user's nick.
    private static func ownJoinNick(_ text: String) -> String? {
        guard let open = text.range(of: "You ("), let close = text[open.upperBound...].range(of: ") ") else { return nil }
        let after = text[close.upperBound...]
        guard after.hasPrefix("joined the room") || after.hasPrefix("left the room") else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    private func readConversation(_ entries: [Entry], account: String, jid: String, isRoom: Bool, joinNicks: Set<String>, path: String,
                                  _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let own: Set<String>
        if isRoom {
            own = joinNicks.union(ownNames.inRoom(jid, account: account))
        } else {
            // poezio's own nick in chats: `default_nick`, else the account's local part.
            own = ownNames.given.union([configNick ?? String(account.prefix { $0 != "@" })])
        }
        for entry in entries where entry.isMessage {
            guard let nick = entry.nick else { continue }
            var message = ClientMessage(account: account, conversation: jid, kind: isRoom ? .groupchat : .chat,
                                        direction: own.contains(nick) ? .outgoing : .incoming, body: entry.text, timestamp: entry.time)
            if isRoom { message.resource = nick } else { message.senderName = nick }
            try emit(message, at: "\(path):\(entry.line)", body)
        }
    }

    private func readPrivate(_ entries: [Entry], account: String, room: String, nick: String, path: String,
                             _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        guard let occupant = ClientText.occupantJID(room: room, nick: nick) else {
            return try body(.unread(reason: "file name is not a room occupant's address", location: path))
        }
        var previous: Entry?
        for entry in entries where entry.isMessage {
            defer { previous = entry }
            // The same message twice in a row, in the same second: one message logged once per copy received.
            if let previous, previous.nick == entry.nick, previous.time == entry.time, previous.text == entry.text { continue }
            let message = ClientMessage(account: account, conversation: occupant, kind: .chat,
                                        direction: entry.nick == nick ? .incoming : .outgoing, body: entry.text, timestamp: entry.time)
            try emit(message, at: "\(path):\(entry.line)", body)
        }
    }

    private func emit(_ message: ClientMessage, at location: String, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        guard ClientText.nonEmpty(message.body) != nil else { return try body(.refused(reason: "empty message", location: location)) }
        var message = message
        message.undecryptable = EncryptedPlaceholder.recognise(message.body, client: .poezio)
        try body(.message(message.record))
    }
}
