import RoostCore
import Foundation

/// Pidgin's (libpurple 2.x) XMPP logs: `~/.purple/logs/jabber/ACCOUNT/CONVERSATION/FILE`, facts from
/// libpurple/log.c. ACCOUNT is the account's bare JID and CONVERSATION the contact's bare JID, a room's JID
/// followed by `.chat`, or `ROOM/NICK` for a private message in a room, all with characters other than
/// letters, digits and `@-_.#` written `%xx`; `.system` holds connection logs. One file per conversation
/// session, named after its start in local time with the zone: `2010-01-15.102345+0100CET.html` (or `.txt`).
///
/// - HTML: a header line (`<title>Conversation with … on ACCOUNT/RESOURCE (jabber)</title>…<h1>…</h1><p>`),
///   then one line per message, in one of two markups: libpurple 2.14 (checked on Finch 2.14.12) writes
///   `<span style="color: #A82F2F"><span style="font-size: smaller">(TIME)</span> <b>NAME:</b></span> TEXT<br>`,
///   older 2.x `<font color="#A82F2F"><font size="2">(TIME)</font> <b>NAME:</b></font> TEXT<br/>`. The colour says
///   the direction (#16569E sent, #A82F2F received, #062585 `/me`, #6C2585 whisper, #FF0000 error) and TEXT is the
///   message's XHTML (its line breaks `<br/>`). System lines have no colour and no `NAME:`. A closed file ends with
///   `</p>`, `</body>`, `</html>`.
/// - Text: a header line `Conversation with … on ACCOUNT/RESOURCE (jabber)`, then `(TIME) NAME: TEXT`,
///   `(TIME) ***NAME TEXT` for `/me`, and `(TIME) TEXT` for system lines; a message's line breaks continue it
///   on the next lines. NAME is a display name (an alias, a nick, a JID), so whose a line is must be inferred:
///   see `speakers(in:)`. In a room some system lines look like messages: `(TIME) List of 2 users: [ bob, carol ]`,
///   and the topic, written in the room's name: `(TIME) room@service/nick: The topic is: …`.
///
/// A room is logged in `ROOM/NICK.chat` (escaped: `room%40…%2fnick.chat`), a private message in a room in
/// `ROOM/NICK` — imported into the occupant's conversation, `room@service/nick`.
///
/// TIME is the local time in the locale's format (`%X`: `10:23:45`, `10:23:45 AM`, …), with the date
/// (`%x %X`) for messages older than 20 minutes when written (offline messages, a room's older history:
/// libpurple/log.c `log_get_timestamp`). The file name's offset turns local times into UTC. A time without a date is
/// at most 20 minutes older than the moment it was written, and lines are written in order: one more than 20
/// minutes earlier than the latest seen (the session's start at first) is on the next day — a session that crosses
/// midnight — and one earlier by less (the history a room sends at the join) is not.
final class PidginHistory: ClientHistoryReader {
    /// The `logs/jabber` folder, and the part of it to import (everything, one account, one conversation or one file).
    private let jabberRoot: String
    private let only: (account: String, conversation: String?, file: String?)?
    private let extraOwnNames: Set<String>
    private let knownNames: OwnNames
    private let clock: ZoneClock
    /// Per account: the names Pidgin's HTML logs show on the account's own lines (learned in a first pass).
    private var learnedOwnNames: [String: Set<String>]?

    init(path: String, ownNames: OwnNames, timeZone: TimeZone) throws(ImportError) {
        extraOwnNames = ownNames.given
        knownNames = ownNames
        clock = ZoneClock(timeZone: timeZone)
        var url = URL(fileURLWithPath: path).standardizedFileURL
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw .unreadable(path: path, errno: ENOENT)
        }
        var tail: [String] = []
        if !isFolder.boolValue {
            tail.insert(url.lastPathComponent, at: 0)
            url.deleteLastPathComponent()
        }
        for candidate in [url.path + "/.purple/logs/jabber", url.path + "/logs/jabber", url.path + "/jabber"]
        where FileManager.default.fileExists(atPath: candidate) && tail.isEmpty {
            url = URL(fileURLWithPath: candidate)
            break
        }
        while url.lastPathComponent != "jabber" && url.path != "/" && tail.count < 3 {
            tail.insert(url.lastPathComponent, at: 0)
            url.deleteLastPathComponent()
        }
        guard url.lastPathComponent == "jabber" else {
            throw .unrecognised(path: path, reason: "not a Pidgin log folder (expected …/logs/jabber/ACCOUNT/CONTACT/FILE)")
        }
        jabberRoot = url.path
        if let account = tail.first {
            only = (account, tail.count > 1 ? tail[1] : nil, tail.count > 2 ? tail[2] : nil)
        } else {
            only = nil
        }
    }

    var description: String {
        var text = "Pidgin XMPP logs: \(jabberRoot)"
        if let only { text += "/" + ([only.account] + [only.conversation, only.file].compactMap { $0 }).joined(separator: "/") }
        return text
    }

    func accounts() throws(ImportError) -> [String] {
        accountFolders().compactMap { ClientText.bareJID(ClientText.percentDecoded($0)) }.sorted()
    }

    private func accountFolders() -> [String] {
        if let only { return [only.account] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: jabberRoot)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    private func conversationFolders(_ account: String) -> [String] {
        if let conversation = only?.conversation { return [conversation] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: jabberRoot + "/" + account)) ?? []).sorted()
    }

    private func files(_ account: String, _ conversation: String) -> [String] {
        if let file = only?.file { return [file] }
        let folder = jabberRoot + "/" + account + "/" + conversation
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasSuffix(".html") || $0.hasSuffix(".txt") }.sorted()
    }

    func read(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let learned = try ownNamesFromHTML()
        for accountFolder in accountFolders() {
            guard let account = ClientText.bareJID(ClientText.percentDecoded(accountFolder)) else {
                try body(.refused(reason: "folder name is not an account JID", location: jabberRoot + "/" + accountFolder))
                continue
            }
            if let wanted, wanted != account { continue }
            var own = extraOwnNames.union(learned[account] ?? [])
            own.insert(account)
            if let local = account.split(separator: "@").first, account.contains("@") { own.insert(String(local)) }
            for conversationFolder in conversationFolders(accountFolder) {
                let folder = jabberRoot + "/" + accountFolder + "/" + conversationFolder
                if conversationFolder == ".system" {
                    for _ in files(accountFolder, conversationFolder) { try body(.notMessage("Pidgin system logs")) }
                    continue
                }
                let name = ClientText.percentDecoded(conversationFolder)
                let isRoom = name.hasSuffix(".chat")
                let jidText = isRoom ? String(name.dropLast(5)) : name
                guard let bare = ClientText.bareJID(jidText) else {
                    try body(.refused(reason: "folder name is not a contact or room JID", location: folder))
                    continue
                }
                // A conversation with a full JID is a private message with an occupant of a room (libpurple names a
                // contact's conversation by the bare JID).
                let occupant = isRoom ? nil : JIDText.resource(jidText).flatMap { ClientText.occupantJID(room: bare, nick: $0) }
                var roomOwn = own
                if isRoom || occupant != nil {
                    roomOwn.formUnion(knownNames.inRoom(bare, account: account))
                    // The room's folder names the nick the user joined with (`ROOM/NICK.chat`).
                    if isRoom, let nick = JIDText.resource(jidText) { roomOwn.insert(nick) }
                }
                let context = Conversation(account: account, conversation: occupant ?? bare, room: isRoom ? bare : nil,
                                           peerNames: Self.names(of: jidText), ownNames: roomOwn)
                let paths = files(accountFolder, conversationFolder).map { folder + "/" + $0 }
                let speakers = isRoom ? [:] : try speakers(in: paths, context)
                for path in paths {
                    try readFile(path, context, speakers: speakers, body)
                }
            }
        }
    }

    // MARK: Whose lines

    private struct Conversation {
        let account: String
        /// The contact's bare JID, the room's, or `room@service/nick` for a private message in a room.
        let conversation: String
        /// A room's bare JID (its system lines are written in its name).
        let room: String?
        var isRoom: Bool { room != nil }
        /// Names the peer goes by: its JID, full JID, local part.
        let peerNames: Set<String>
        /// Names the account goes by: its JID and local part, full JIDs from the headers, names the HTML logs
        /// showed on sent lines, and `--me`.
        var ownNames: Set<String>
    }

    private static func names(of jid: String) -> Set<String> {
        var names: Set<String> = [jid, JIDText.bare(jid)]
        if let local = JIDText.bare(jid).split(separator: "@").first, jid.contains("@") { names.insert(String(local)) }
        if let resource = JIDText.resource(jid) { names.insert(resource) }
        return names
    }

    /// For the plain-text files of a one-to-one conversation (where lines carry only a display name): which
    /// names are the account's. A name is the account's when it is one of its known names; the peer's when it
    /// is one of the peer's; of the other names, one is the peer's when the account's lines are known, and the
    /// account's when the peer's are; two or more unknown names cannot be told apart (their lines are refused).
    private func speakers(in paths: [String], _ context: Conversation) throws(ImportError) -> [String: MessageDirection?] {
        var names: Set<String> = []
        for path in paths where path.hasSuffix(".txt") {
            try parseText(path) { entry throws(ImportError) in
                if case .message(let line) = entry, let name = line.name { names.insert(name) }
            }
        }
        var result: [String: MessageDirection?] = [:]
        var unknown: [String] = []
        for name in names {
            if context.ownNames.contains(name) || context.ownNames.contains(JIDText.bare(name)) {
                result[name] = .outgoing
            } else if context.peerNames.contains(name) || context.peerNames.contains(JIDText.bare(name)) {
                result[name] = .incoming
            } else {
                unknown.append(name)
            }
        }
        let ownKnown = result.values.contains(.outgoing)
        let peerKnown = result.values.contains(.incoming)
        for name in unknown {
            if ownKnown || unknown.count == 1 && !peerKnown {
                result[name] = .incoming
            } else if unknown.count == 1 {
                result[name] = .outgoing
            } else {
                result[name] = .some(nil)
            }
        }
        return result
    }

    /// Names on the sent (blue) lines of every HTML log, per account.
    private func ownNamesFromHTML() throws(ImportError) -> [String: Set<String>] {
        if let learnedOwnNames { return learnedOwnNames }
        var names: [String: Set<String>] = [:]
        for accountFolder in accountFolders() {
            guard let account = ClientText.bareJID(ClientText.percentDecoded(accountFolder)) else { continue }
            for conversationFolder in conversationFolders(accountFolder) where conversationFolder != ".system" {
                for file in files(accountFolder, conversationFolder) where file.hasSuffix(".html") {
                    try parseHTML(jabberRoot + "/" + accountFolder + "/" + conversationFolder + "/" + file) { entry throws(ImportError) in
                        switch entry {
                        case .message(let line) where line.color == Self.sentColor:
                            if let name = line.name { names[account, default: []].insert(name) }
                        case .header(let fullJID):
                            names[account, default: []].insert(fullJID)
                        default: break
                        }
                    }
                }
            }
        }
        learnedOwnNames = names
        return names
    }

    // MARK: Files

    private static let sentColor = "#16569e"
    private static let receivedColor = "#a82f2f"
    private static let actionColor = "#062585"
    private static let whisperColor = "#6c2585"

    private struct Line {
        var number: Int
        var time: String
        /// nil for a system line.
        var name: String?
        var color: String?
        var isAction: Bool
        var text: String
    }

    private enum Entry {
        case header(accountFullJID: String)
        case message(Line)
        case system(String)
        case refused(reason: String, line: Int)
        /// A line in no format the reader knows.
        case unread(reason: String, line: Int)
    }

    /// When the session began (local milliseconds since 1970) and the UTC offset in seconds its name gives.
    private static func sessionStart(_ file: String) -> (local: Int64, offset: Int?)? {
        let scalars = Array(file.unicodeScalars)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= scalars.count else { return nil }
            var value = 0
            for scalar in scalars[from..<(from + count)] {
                guard let digit = scalar.properties.numericType != nil ? Int(String(scalar)) : nil else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), scalars.count > 17, scalars[4] == "-", let month = number(5, 2), scalars[7] == "-",
              let day = number(8, 2), scalars[10] == ".", let hour = number(11, 2), let minute = number(13, 2),
              let second = number(15, 2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60 else { return nil }
        let local = (CivilTime.days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1000
        var offset: Int?
        if scalars.count > 21, scalars[17] == "+" || scalars[17] == "-", let hours = number(18, 2), let minutes = number(20, 2) {
            offset = (hours * 3600 + minutes * 60) * (scalars[17] == "-" ? -1 : 1)
        }
        return (local, offset)
    }

    private func readFile(_ path: String, _ context: Conversation, speakers: [String: MessageDirection?],
                          _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let file = (path as NSString).lastPathComponent
        guard let start = Self.sessionStart(file) else {
            return try body(.refused(reason: "file name is not a session start (YYYY-MM-DD.HHMMSS+ZZZZ…)", location: path))
        }
        func utc(_ local: Int64) -> Int64 {
            if let offset = start.offset { return local - Int64(offset) * 1000 }
            return clock.utc(fromLocal: local)
        }
        let startDay = CivilTime.floorDivide(start.local, 86_400_000).0
        var latest = start.local
        let html = path.hasSuffix(".html")
        var read = 0
        var unread: [(reason: String, line: Int)] = []
        let handle = { (entry: Entry) throws(ImportError) -> Void in
            switch entry {
            case .header: return
            case .system:
                read += 1
                return try body(.notMessage("Pidgin status and system lines"))
            case .refused(let reason, let line):
                read += 1
                return try body(.refused(reason: reason, location: "\(path):\(line)"))
            case .unread(let reason, let line):
                unread.append((reason, line))
                return try body(.unread(reason: reason, location: "\(path):\(line)"))
            case .message(let line):
                read += 1
                if context.isRoom, let name = line.name, Self.isSystemName(name, room: context.room ?? "") {
                    return try body(.notMessage("Pidgin status and system lines"))
                }
                let location = "\(path):\(line.number)"
                guard let time = PidginTime(line.time) else {
                    return try body(.refused(reason: "unreadable time (\(line.time))", location: location))
                }
                var local: Int64
                if let date = time.date(near: startDay) {
                    local = date * 86_400_000 + time.millisecondOfDay
                } else {
                    local = startDay * 86_400_000 + time.millisecondOfDay
                    // An undated line is at most 20 minutes older than when it was written, and lines are written in
                    // order: one more than 20 minutes before the latest is on the next day.
                    while local < latest - Self.undatedAge { local += 86_400_000 }
                    latest = max(latest, local)
                }
                let direction: MessageDirection
                if context.isRoom {
                    direction = line.color == Self.sentColor || (line.color == nil || line.isAction) && context.ownNames.contains(line.name ?? "")
                        ? .outgoing : .incoming
                } else if html && !line.isAction, let color = line.color {
                    direction = color == Self.sentColor ? .outgoing : .incoming
                } else if let known = speakers[line.name ?? ""] {
                    guard let known else {
                        return try body(.refused(reason: "cannot tell whether \(line.name ?? "") is you; name yourself with --me NAME",
                                                 location: location))
                    }
                    direction = known
                } else {
                    let name = line.name ?? ""
                    direction = context.ownNames.contains(name) || context.ownNames.contains(JIDText.bare(name)) ? .outgoing : .incoming
                }
                var text = html ? HTMLText.plainText(line.text) : line.text
                if line.isAction { text = "/me " + text }
                guard ClientText.nonEmpty(text) != nil else { return try body(.refused(reason: "empty message", location: location)) }
                var message = ClientMessage(account: context.account, conversation: context.conversation,
                                            kind: context.isRoom ? .groupchat : .chat, direction: direction, body: text,
                                            timestamp: utc(local))
                if context.isRoom {
                    message.resource = line.name
                } else {
                    message.senderName = line.name
                }
                message.undecryptable = EncryptedPlaceholder.recognise(text, client: .pidgin)
                try body(.message(message.record))
            }
        }
        if html { try parseHTML(path, handle) } else { try parseText(path, handle) }
        try ClientLogFile.check(path, read: read, unread: unread)
    }

    /// How much older than the moment it was written an undated line can be (libpurple writes a date beyond).
    private static let undatedAge: Int64 = 20 * 60_000

    /// A room's lines that look like messages but are libpurple's own: the topic, written in the room's name
    /// (`room@service/nick: The topic is: …`), and the occupant list at the join (`List of 2 users: [ … ]`).
    private static func isSystemName(_ name: String, room: String) -> Bool {
        if ClientText.bareJID(name) == room.lowercased() { return true }
        let words = name.split(separator: " ")
        return words.count == 4 && words[0] == "List" && words[1] == "of" && Int(words[2]) != nil && (words[3] == "user" || words[3] == "users")
    }

    private func parseHTML(_ path: String, _ handle: (Entry) throws(ImportError) -> Void) throws(ImportError) {
        var pending: Line?
        func flush() throws(ImportError) {
            if let line = pending { try handle(.message(line)) }
            pending = nil
        }
        try TextLogFile.forEachLine(path) { number, text throws(ImportError) in
            guard let text else {
                try flush()
                return try handle(.refused(reason: "not valid UTF-8", line: number))
            }
            if text.contains("<title>") || text.contains("<h3>") || text.contains("<h1>") {
                if let on = text.range(of: " on "), let end = text[on.upperBound...].range(of: " (") {
                    try handle(.header(accountFullJID: String(text[on.upperBound..<end.lowerBound])))
                }
                return
            }
            guard text.hasPrefix("<font") || text.hasPrefix("<span") else {
                // The file's frame (`</p>`, `</body></html>`): nothing of a message.
                if Self.isFrame(text) { return }
                // A line break inside the previous message (older logs wrote them as they came).
                if pending != nil {
                    pending?.text += "<br/>" + text
                } else {
                    try handle(.unread(reason: "a line in no format Roost knows of Pidgin's HTML logs", line: number))
                }
                return
            }
            try flush()
            // The time: `<font size="2">(TIME)</font>` (libpurple before 2.14) or `<span style="font-size: smaller">(TIME)</span>`.
            guard let timeOpen = text.range(of: "\">("),
                  let timeClose = text[timeOpen.upperBound...].range(of: ")</") else {
                return try handle(.unread(reason: "no time in the line", line: number))
            }
            let color = Self.color(text)
            var rest = text[timeClose.upperBound...]
            guard let boldOpen = rest.range(of: "<b>"), let boldClose = rest[boldOpen.upperBound...].range(of: "</b>") else {
                return try handle(.unread(reason: "no sender in the line", line: number))
            }
            var label = HTMLText.plainText(String(rest[boldOpen.upperBound..<boldClose.lowerBound]))
            rest = rest[boldClose.upperBound...]
            for close in ["</font>", "</span>"] where rest.hasPrefix(close) { rest = rest.dropFirst(close.count) }
            if rest.hasPrefix(" ") { rest = rest.dropFirst() }
            var message = String(rest)
            for end in ["<br/>", "<br>"] where message.hasSuffix(end) { message = String(message.dropLast(end.count)) }
            let time = String(text[timeOpen.upperBound..<timeClose.lowerBound])
            if color == Self.actionColor, label.hasPrefix("***") {
                pending = Line(number: number, time: time, name: String(label.dropFirst(3)), color: color, isAction: true, text: message)
            } else if label.hasSuffix(":") {
                label.removeLast()
                if label.hasSuffix(" <AUTO-REPLY>") { label.removeLast(13) }
                pending = Line(number: number, time: time, name: label, color: color, isAction: false, text: message)
            } else {
                try handle(.system(label))
            }
        }
        try flush()
    }

    /// A line of nothing but the document's own tags (`<p>`, `</p>`, `</body></html>`) or blanks.
    private static func isFrame(_ line: String) -> Bool {
        var rest = Substring(line.trimmingCharacters(in: .whitespaces))
        while !rest.isEmpty {
            guard let tag = ["<html>", "</html>", "<body>", "</body>", "<p>", "</p>"].first(where: { rest.hasPrefix($0) }) else { return false }
            rest = rest.dropFirst(tag.count).drop { $0 == " " }
        }
        return true
    }

    /// The line's colour, lowercase: `<font color="#16569E">` or `<span style="color: #16569E">`; nil for none.
    private static func color(_ line: String) -> String? {
        for opening in ["<font color=\"", "<span style=\"color: "] where line.hasPrefix(opening) {
            let value = line.dropFirst(opening.count).prefix { $0 != "\"" && $0 != ";" }
            return value.lowercased()
        }
        return nil
    }

    private func parseText(_ path: String, _ handle: (Entry) throws(ImportError) -> Void) throws(ImportError) {
        var pending: Line?
        // A system line's further lines (the occupant list of older versions) belong to it.
        var inSystemLine = false
        func flush() throws(ImportError) {
            if let line = pending { try handle(.message(line)) }
            pending = nil
            inSystemLine = false
        }
        try TextLogFile.forEachLine(path) { number, text throws(ImportError) in
            guard let text else {
                try flush()
                return try handle(.refused(reason: "not valid UTF-8", line: number))
            }
            if number == 1, text.hasPrefix("Conversation with "), let on = text.range(of: " on ", options: .backwards),
               let end = text[on.upperBound...].range(of: " (") {
                return try handle(.header(accountFullJID: String(text[on.upperBound..<end.lowerBound])))
            }
            guard text.hasPrefix("("), let close = text.firstIndex(of: ")"), PidginTime(String(text[text.index(after: text.startIndex)..<close])) != nil else {
                if pending != nil {
                    pending?.text += "\n" + text
                } else if !text.isEmpty && !inSystemLine {
                    try handle(.unread(reason: "no time at the start of the line", line: number))
                }
                return
            }
            try flush()
            let time = String(text[text.index(after: text.startIndex)..<close])
            var rest = text[text.index(after: close)...]
            if rest.hasPrefix(" ") { rest = rest.dropFirst() }
            if rest.hasPrefix("***"), let space = rest.firstIndex(of: " ") {
                pending = Line(number: number, time: time, name: String(rest[rest.index(rest.startIndex, offsetBy: 3)..<space]),
                               color: nil, isAction: true, text: String(rest[rest.index(after: space)...]))
            } else if let colon = rest.range(of: ": ") {
                var name = String(rest[..<colon.lowerBound])
                if name.hasSuffix(" <AUTO-REPLY>") { name.removeLast(13) }
                pending = Line(number: number, time: time, name: name, color: nil, isAction: false, text: String(rest[colon.upperBound...]))
            } else {
                try handle(.system(String(rest)))
                inSystemLine = true
            }
        }
        try flush()
    }
}

/// A time as Pidgin's locale wrote it: `%X` (`10:23:45`, `10:23:45 PM`, `22時23分45秒`) or `%x %X`
/// (`01/15/2010 10:23:45 AM`, `15.01.2010 10:23:45`, `2010-01-15 10:23:45`).
struct PidginTime {
    let millisecondOfDay: Int64
    /// The date's three numbers as written (none for a time alone), whether the year came first, and the
    /// character between the first two.
    private let dateFields: [(value: Int, digits: Int)]
    private let dateSeparator: Character?

    init?(_ text: String) {
        var groups: [(value: Int, digits: Int)] = []
        var current = ""
        var separator: Character?
        for character in text + " " {
            if character.isASCII && character.isNumber {
                current.append(character)
                continue
            }
            if !current.isEmpty {
                groups.append((Int(current) ?? 0, current.count))
                current = ""
            }
            if groups.count == 1 && separator == nil && (character == "/" || character == "." || character == "-") {
                separator = character
            }
        }
        // A time is h:m or h:m:s; a date adds three numbers in front.
        guard [2, 3, 5, 6].contains(groups.count) else { return nil }
        let time = groups.suffix(groups.count % 3 == 0 ? 3 : 2).map(\.value)
        let lower = text.lowercased()
        var hour = time[0]
        if (lower.contains("pm") || lower.contains("p.m.") || text.contains("下午") || text.contains("午後")) && hour < 12 { hour += 12 }
        if (lower.contains("am") || lower.contains("a.m.") || text.contains("上午") || text.contains("午前")) && hour == 12 { hour = 0 }
        let second = time.count == 3 ? time[2] : 0
        guard hour < 24, time[1] < 60, second < 61 else { return nil }
        millisecondOfDay = Int64(hour * 3600 + time[1] * 60 + second) * 1000
        dateFields = groups.count > 3 ? Array(groups.prefix(3)) : []
        dateSeparator = groups.count > 3 ? separator : nil
    }

    /// Days since 1970 of the written date, when there is one. A four-digit first number is the year (ISO
    /// order); otherwise day and month order is read from the separator (`.` day first, `/` month first as in
    /// the US and C locales) unless a field over 12 settles it, and when both readings remain the one nearer
    /// the session's day wins.
    func date(near sessionDay: Int64) -> Int64? {
        guard dateFields.count == 3 else { return nil }
        if dateFields[0].digits == 4 {
            return CivilTime.days(year: dateFields[0].value, month: dateFields[1].value, day: dateFields[2].value)
        }
        var year = dateFields[2].value
        if dateFields[2].digits <= 2 { year += year < 70 ? 2000 : 1900 }
        let (a, b) = (dateFields[0].value, dateFields[1].value)
        var readings: [(month: Int, day: Int)] = []
        let dayFirst = dateSeparator == "."
        for (month, day) in dayFirst ? [(b, a), (a, b)] : [(a, b), (b, a)]
        where (1...12).contains(month) && (1...31).contains(day) && !readings.contains(where: { $0 == (month, day) }) {
            readings.append((month, day))
        }
        let days = readings.map { CivilTime.days(year: year, month: $0.month, day: $0.day) }
        return days.min { abs($0 - sessionDay) < abs($1 - sessionDay) }
    }
}
