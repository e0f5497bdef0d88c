import RoostCore
import Foundation

/// Gajim's message history: `logs.db` in Gajim's data folder (`~/.local/share/gajim/`). One file, two schemas
/// (facts from Gajim's source, gajim/common/storage/):
///
/// - **Gajim 0.16 – 1.8** (`PRAGMA user_version` 0–7): tables `jids` (jid_id, jid, type: 0 contact, 1 room) and
///   `logs` (log_line_id, account_id → jids, jid_id → jids, contact_name = nick in rooms, time = UTC seconds
///   (float), kind, message, subject, additional_data (JSON), stanza_id, message_id, …). Kinds: 2 group chat,
///   3/5 normal message in/out, 4/6 chat in/out; 0/1 status changes, 7 errors, 8–11 file transfers and calls.
///   A correction rewrote `message` and kept the first text in `additional_data.corrected.original_text`;
///   XEP-0066 links are in `additional_data.gajim.oob_url`. Before 1.0 (version 0) rows have no account and
///   no ids. Messages Gajim sent itself have `stanza_id = message_id` (its own id, not the server's).
///   A private message in a room has the occupant's full JID as its `jid` (kind 4 in, 6 out). A group chat row
///   (kind 2) has the sender's nick and no direction: the user's own are told by the nick (`OwnNames`: `--me`, or
///   the nicks the archive imported into knows as the user's in that room). Checked on Gajim 1.7.3 (version 7).
/// - **Gajim 1.9 and later** (version 8 and up; 19 in Gajim 2.4): tables `account` (pk, jid), `remote` (pk, jid),
///   `occupant` (pk, nickname, …) and `message` (fk_account_pk, fk_remote_pk, resource (the sender's resource
///   or nick), type (1 chat, 2 group chat, 3 private message in a room), direction (1 in, 2 out), timestamp =
///   UTC seconds (float), id (message id), stanza_id (the server archive's id: the account's in chats, the
///   room's in rooms), text, correction_id (a correction is a row of its own naming the corrected message's
///   id), fk_occupant_pk, …), with `oob` (links), `filetransfer`, `retraction` and `moderation` beside it, and
///   `reaction` (all of these schemas; gajim/common/modules/reactions.py): fk_account_pk, fk_remote_pk (the
///   conversation), fk_occupant_pk (the reactor in a room: `occupant.id` is its XEP-0421 id), id (the reacted
///   message's id as the reaction named it: its message id in a chat, the room's stanza-id in a room and in a
///   private message there), direction (1 someone else's, 2 the user's), emojis (joined by `;`), timestamp (UTC
///   seconds, float). One row per reactor and message, replaced by the next set and deleted when all are taken
///   back. Gajim 1.8 and earlier kept no reactions.
///
/// Files Gajim downloaded (previews) are in `downloads/` beside `logs.db`, named `STEM_SHA1(URL)EXT`.
final class GajimHistory: ClientHistoryReader {
    private let snapshot: SourceSnapshot
    private let legacy: Bool
    private let version: Int
    private let downloads: DownloadFolder
    private let ownNames: OwnNames

    /// nil when the database is not Gajim's.
    static func open(_ snapshot: SourceSnapshot, ownNames: OwnNames = OwnNames()) throws(ImportError) -> GajimHistory? {
        let tables = try snapshot.tables()
        if tables.isSuperset(of: ["jids", "logs"]) {
            return GajimHistory(snapshot: snapshot, legacy: true, version: try snapshot.userVersion(), ownNames: ownNames)
        }
        if tables.isSuperset(of: ["account", "remote", "message"]),
           try snapshot.columns(of: "message").isSuperset(of: ["fk_account_pk", "fk_remote_pk", "direction", "text"]) {
            return GajimHistory(snapshot: snapshot, legacy: false, version: try snapshot.userVersion(), ownNames: ownNames)
        }
        return nil
    }

    private init(snapshot: SourceSnapshot, legacy: Bool, version: Int, ownNames: OwnNames) {
        self.snapshot = snapshot
        self.legacy = legacy
        self.version = version
        self.ownNames = ownNames
        downloads = DownloadFolder(path: (snapshot.originalPath as NSString).deletingLastPathComponent + "/downloads")
    }

    var description: String {
        "\(legacy ? "Gajim 1.8 or earlier" : "Gajim 1.9 or later"): \(snapshot.originalPath) (history schema \(version))"
    }

    func accounts() throws(ImportError) -> [String] {
        var accounts: Set<String> = []
        let sql = legacy
            ? (try snapshot.columns(of: "logs").contains("account_id")
                ? "SELECT DISTINCT a.jid FROM logs l JOIN jids a ON a.jid_id = l.account_id" : "SELECT NULL WHERE 0")
            : "SELECT DISTINCT a.jid FROM message m JOIN account a ON a.pk = m.fk_account_pk"
        try snapshot.query(sql) { row in
            if let jid = ClientText.bareJID(row.optionalText(0)) { accounts.insert(jid) }
        }
        return accounts.sorted()
    }

    func read(account: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        if legacy { try readLegacy(account: account, body) } else { try readCurrent(account: account, body) }
    }

    // MARK: Gajim 1.8 and earlier

    private func readLegacy(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let columns = try snapshot.columns(of: "logs")
        guard columns.contains("account_id") || wanted != nil else {
            throw .accountNeeded(path: snapshot.originalPath, reason: "Gajim before 1.0 kept no account in its history")
        }
        func column(_ name: String) -> String { columns.contains(name) ? "l.\(name)" : "NULL" }
        let known = try accounts()
        // Rows written before Gajim 1.0 name no account: they belong to the one named, or the only one there is.
        let fallbackAccount = wanted ?? (known.count == 1 ? known[0] : nil)
        let accountJoin = columns.contains("account_id") ? "LEFT JOIN jids a ON a.jid_id = l.account_id" : ""
        let accountColumn = columns.contains("account_id") ? "a.jid" : "NULL"
        var corrections: [ClientMessage] = []
        try snapshot.query("""
            SELECT l.log_line_id, \(accountColumn), j.jid, l.contact_name, l.time, l.kind, l.message,
                   \(column("additional_data")), \(column("stanza_id")), \(column("message_id"))
            FROM logs l LEFT JOIN jids j ON j.jid_id = l.jid_id \(accountJoin)
            ORDER BY l.time, l.log_line_id
            """) { row throws(ImportError) in
            let location = "logs row \(row.int(0))"
            let kind = row.int(5)
            let (messageKind, direction): (MessageKind, MessageDirection)
            switch kind {
            case 2: (messageKind, direction) = (.groupchat, .incoming)
            case 3: (messageKind, direction) = (.normal, .incoming)
            case 4: (messageKind, direction) = (.chat, .incoming)
            case 5: (messageKind, direction) = (.normal, .outgoing)
            case 6: (messageKind, direction) = (.chat, .outgoing)
            case 0, 1: return try body(.notMessage("status changes"))
            case 7: return try body(.notMessage("error notices"))
            case 8, 9: return try body(.notMessage("file transfer notices"))
            case 10, 11: return try body(.notMessage("calls"))
            default: return try body(.refused(reason: "unknown kind of entry (\(kind))", location: location))
            }
            let rowAccount = ClientText.bareJID(row.optionalText(1))
            if let wanted, let rowAccount, rowAccount != wanted { return }
            guard let account = rowAccount ?? fallbackAccount else {
                return try body(.refused(reason: "no account recorded (written by Gajim before 1.0)", location: location))
            }
            guard let jidText = row.optionalText(2), let conversation = ClientText.bareJID(jidText) else {
                return try body(.refused(reason: "no valid contact JID", location: location))
            }
            guard !row.isNull(4) else { return try body(.refused(reason: "no time recorded", location: location)) }
            guard let text = ClientText.nonEmpty(row.optionalText(6)) else {
                return try body(.refused(reason: "empty message", location: location))
            }
            let extra = Self.json(row.optionalText(7))
            if extra?["retracted"] != nil {
                return try body(.refused(reason: "retracted by a moderator", location: location))
            }
            let nick = ClientText.nonEmpty(row.optionalText(3))
            // Group chat rows carry no direction: the user's own are those of the user's nicks in that room.
            let groupDirection: MessageDirection = nick.map { ownNames.inRoom(conversation, account: account).contains($0) } == true
                ? .outgoing : .incoming
            // A private message in a room: the jid is the occupant's full JID, its own conversation.
            let occupant = messageKind == .groupchat ? nil : ClientText.occupantJID(room: conversation, nick: JIDText.resource(jidText))
            var message = ClientMessage(account: account, conversation: occupant ?? conversation, kind: messageKind,
                                        direction: messageKind == .groupchat ? groupDirection : direction,
                                        body: text, timestamp: ClientText.milliseconds(seconds: row.double(4)))
            if messageKind == .groupchat { message.resource = nick }
            message.undecryptable = EncryptedPlaceholder.recognise(text, client: .gajim)
            let messageID = ClientText.nonEmpty(row.optionalText(9))
            message.messageId = messageID
            if let stanzaID = ClientText.nonEmpty(row.optionalText(8)), stanzaID != messageID {
                message.stanzaId = stanzaID
                message.stanzaIdBy = messageKind == .groupchat ? conversation : account
            }
            if let url = extra?["gajim"]?["oob_url"]?.string {
                message.attachments = [try downloads.attachment(url: url, at: location, body)]
            }
            if let original = extra?["corrected"]?["original_text"]?.string, original != text, let messageID {
                // Gajim kept the first text and the last; the edits in between are gone.
                var correction = message
                correction.replaces = messageID
                correction.messageId = nil
                correction.stanzaId = nil
                correction.attachments = []
                message.body = original
                corrections.append(correction)
            }
            try body(.message(message.record))
        }
        for correction in corrections { try body(.message(correction.record)) }
    }

    // MARK: Gajim 1.9 and later

    private func readCurrent(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let tables = try snapshot.tables()
        let occupantJoin = tables.contains("occupant") ? "LEFT JOIN occupant o ON o.pk = m.fk_occupant_pk" : ""
        let nick = tables.contains("occupant") ? "o.nickname" : "NULL"
        var retracted: Set<String> = []
        if tables.contains("retraction") {
            // XEP-0424: the sender took the message back (by message id in chats, stanza-id in rooms).
            try snapshot.query("SELECT fk_account_pk, fk_remote_pk, id, direction FROM retraction") { row in
                retracted.insert("\(row.int(0))|\(row.int(1))|\(row.text(2))|\(row.int(3))")
            }
        }
        var moderated: Set<String> = []
        if tables.contains("moderation") {
            try snapshot.query("SELECT fk_account_pk, fk_remote_pk, stanza_id FROM moderation") { row in
                moderated.insert("\(row.int(0))|\(row.int(1))|\(row.text(2))")
            }
        }
        var links: [Int64: [String]] = [:]
        if tables.contains("oob") {
            try snapshot.query("SELECT fk_message_pk, url FROM oob ORDER BY pk") { row in
                links[row.int(0), default: []].append(row.text(1))
            }
        }
        var transfers: [Int64: [AttachmentRecord]] = [:]
        var refusedFiles: [Int64: [ClientFileFolder.Refusal]] = [:]
        if tables.contains("filetransfer") {
            let columns = try snapshot.columns(of: "filetransfer")
            let path = columns.contains("path") ? "path" : "NULL"
            // Only transfers whose file is still on disk, in Gajim's downloads folder, add anything to the message's
            // links; a path elsewhere is refused (issue 29: a history may name any file).
            try snapshot.query("SELECT fk_message_pk, media_type, size, \(path) FROM filetransfer ORDER BY pk") { row in
                guard let named = row.optionalText(3) else { return }
                switch downloads.folder.file(named) {
                case .success(let local):
                    transfers[row.int(0), default: []].append(AttachmentRecord(url: "file://" + local, localPath: local,
                                                                               mime: row.optionalText(1), size: row.optionalInt(2)))
                case .failure(let refusal) where refusal.reason != "not on disk":
                    refusedFiles[row.int(0), default: []].append(refusal)
                case .failure: break
                }
            }
        }
        var corrections: [ClientMessage] = []
        try snapshot.query("""
            SELECT m.pk, a.jid, r.jid, m.resource, m.type, m.direction, m.timestamp, m.id, m.stanza_id, m.text,
                   m.correction_id, \(nick), m.fk_account_pk, m.fk_remote_pk
            FROM message m JOIN account a ON a.pk = m.fk_account_pk JOIN remote r ON r.pk = m.fk_remote_pk \(occupantJoin)
            ORDER BY m.timestamp, m.pk
            """) { row throws(ImportError) in
            let location = "message row \(row.int(0))"
            guard let account = ClientText.bareJID(row.optionalText(1)) else {
                return try body(.refused(reason: "no valid account JID", location: location))
            }
            if let wanted, account != wanted { return }
            let remote = row.text(2)
            guard let conversation = ClientText.bareJID(remote) else {
                return try body(.refused(reason: "no valid contact JID", location: location))
            }
            let type = row.int(4)
            guard (1...3).contains(type) else {
                return try body(.refused(reason: "unknown message type \(type)", location: location))
            }
            let direction: MessageDirection = row.int(5) == 2 ? .outgoing : .incoming
            guard let text = ClientText.nonEmpty(row.optionalText(9)) else {
                return try body(.refused(reason: "empty message", location: location))
            }
            let messageID = ClientText.nonEmpty(row.optionalText(7))
            let stanzaID = ClientText.nonEmpty(row.optionalText(8))
            let scope = "\(row.int(12))|\(row.int(13))"
            let retractionKey = type == 2 ? stanzaID : messageID
            if let retractionKey, retracted.contains("\(scope)|\(retractionKey)|\(row.int(5))") {
                return try body(.refused(reason: "retracted by its sender", location: location))
            }
            if let stanzaID, moderated.contains("\(scope)|\(stanzaID)") {
                return try body(.refused(reason: "retracted by a moderator", location: location))
            }
            // A private message in a room: the occupant's own conversation (`room@service/nick`).
            let occupant = type == 3
                ? ClientText.occupantJID(room: conversation, nick: ClientText.nonEmpty(row.optionalText(3)) ?? JIDText.resource(remote)) : nil
            if type == 3 && occupant == nil {
                return try body(.refused(reason: "a private message in a room without the occupant's nick", location: location))
            }
            var message = ClientMessage(account: account, conversation: occupant ?? conversation, kind: type == 2 ? .groupchat : .chat,
                                        direction: direction, body: text,
                                        timestamp: ClientText.milliseconds(seconds: row.double(6)))
            switch type {
            case 2: message.resource = ClientText.nonEmpty(row.optionalText(3)) ?? ClientText.nonEmpty(row.optionalText(11))
            case 3: message.resource = nil
            default: message.resource = direction == .incoming ? ClientText.nonEmpty(row.optionalText(3)) : nil
            }
            message.undecryptable = EncryptedPlaceholder.recognise(text, client: .gajim)
            message.messageId = messageID
            if let stanzaID {
                message.stanzaId = stanzaID
                message.stanzaIdBy = type == 2 ? conversation : account
            }
            let pk = row.int(0)
            for refusal in refusedFiles[pk] ?? [] {
                try body(.fileRefused(reason: refusal.reason, location: "\(location): \(refusal.path)"))
            }
            message.attachments = try (links[pk] ?? []).map { url throws(ImportError) in try downloads.attachment(url: url, at: location, body) }
            message.attachments += transfers[pk] ?? []
            if let corrected = ClientText.nonEmpty(row.optionalText(10)) {
                message.replaces = corrected
                corrections.append(message)
                return
            }
            try body(.message(message.record))
        }
        for correction in corrections { try body(.message(correction.record)) }
        if tables.contains("reaction") { try readReactions(account: wanted, occupants: tables.contains("occupant"), body) }
    }

    /// Each reactor's set, with the id Gajim kept (the one the reaction named, as a live copy names it). A reaction
    /// whose message is not imported is passed on too: the archive keeps it until the message comes, as it does
    /// live (Gajim stores reactions to messages it never had, e.g. older than its history).
    private func readReactions(account wanted: String?, occupants: Bool,
                               _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        try snapshot.query("""
            SELECT r.pk, a.jid, rm.jid, r.id, r.direction, r.emojis, r.timestamp, \(occupants ? "o.id, o.nickname" : "NULL, NULL"),
                   coalesce((SELECT m.type FROM message m WHERE m.stanza_id = r.id AND m.fk_remote_pk = r.fk_remote_pk
                                 AND m.fk_account_pk = r.fk_account_pk LIMIT 1),
                            (SELECT m.type FROM message m WHERE m.id = r.id AND m.fk_remote_pk = r.fk_remote_pk
                                 AND m.fk_account_pk = r.fk_account_pk LIMIT 1))
            FROM reaction r LEFT JOIN account a ON a.pk = r.fk_account_pk LEFT JOIN remote rm ON rm.pk = r.fk_remote_pk
                 \(occupants ? "LEFT JOIN occupant o ON o.pk = r.fk_occupant_pk" : "")
            ORDER BY r.timestamp, r.pk
            """) { row throws(ImportError) in
            let location = "reaction row \(row.int(0))"
            func refuse(_ reason: String) throws(ImportError) { try body(.refusedReaction(reason: reason, location: location)) }
            guard let account = ClientText.bareJID(row.optionalText(1)) else { return try refuse("no valid account JID") }
            if let wanted, account != wanted { return }
            let remote = row.optionalText(2) ?? ""
            guard let conversation = ClientText.bareJID(remote) else { return try refuse("no valid contact JID") }
            guard let target = ClientText.nonEmpty(row.optionalText(3)) else { return try refuse("the reaction names no message") }
            guard !row.isNull(6) else { return try refuse("no time recorded") }
            let occupantID = ClientText.nonEmpty(row.optionalText(7))
            let nick = ClientText.nonEmpty(row.optionalText(8))
            // The reacted message's type; a message Gajim does not have is in a room when the reactor is an occupant.
            let type = row.optionalInt(9) ?? (occupantID != nil ? 2 : 1)
            let direction: MessageDirection = row.int(4) == 2 ? .outgoing : .incoming
            let emojis = ReactionSet.normalized((row.optionalText(5) ?? "").split(separator: ";").map(String.init))
            let timestamp = ClientText.milliseconds(seconds: row.double(6))
            let annotation: MessageAnnotation
            switch type {
            case 2:
                // Gajim keeps reactions in rooms only from occupants with an XEP-0421 id.
                guard occupantID != nil else { return try refuse("no reactor recorded") }
                annotation = MessageAnnotation(account: account, conversation: conversation, kind: .reactions(emojis), target: target,
                                               from: "\(conversation)/\(nick ?? "")", direction: direction, groupchat: true,
                                               occupantId: occupantID, senderName: nick, timestamp: timestamp, source: .import)
            default:
                // A chat, or a private message in a room (the occupant's JID, as its messages have it: their conversation).
                let peer = type == 3 ? nick.map { "\(conversation)/\($0)" } ?? remote : conversation
                let privateConversation = type == 3 ? ClientText.occupantJID(room: conversation, nick: JIDText.resource(peer)) : nil
                annotation = MessageAnnotation(account: account, conversation: privateConversation ?? conversation, kind: .reactions(emojis), target: target,
                                               from: direction == .outgoing ? account : peer, direction: direction,
                                               senderName: type == 3 ? nick : nil, timestamp: timestamp, source: .import)
            }
            try body(.reaction(annotation))
        }
    }

    private static func json(_ text: String?) -> JSONNode? {
        guard let text, !text.isEmpty else { return nil }
        return try? JSONParser.parse(Array(text.utf8))
    }
}

extension JSONNode {
    subscript(key: String) -> JSONNode? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

/// The folder where a client keeps files it downloaded, looked up by the link they came from.
///
/// Gajim names a download `STEM_SHA1(URL)EXT`, STEM and EXT taken from the URL's path (STEM cut to fit 50
/// characters). Without hashing the URL a file is recognised by STEM, EXT and the 40 hex digits in between,
/// and attached only when exactly one file fits — and only a regular file inside the folder (`ClientFileFolder`).
struct DownloadFolder {
    private var byName: [String: [String]] = [:]
    let folder: ClientFileFolder

    init(path: String) {
        folder = ClientFileFolder(path: path, label: "Gajim's downloads folder")
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names {
            let ext = (name as NSString).pathExtension
            let stemAndHash = ext.isEmpty ? name : String(name.dropLast(ext.count + 1))
            guard stemAndHash.count > 41, let underscore = stemAndHash.lastIndex(of: "_") else { continue }
            let hash = stemAndHash[stemAndHash.index(after: underscore)...]
            guard hash.count == 40, hash.allSatisfy(\.isHexDigit) else { continue }
            let key = Self.key(stem: String(stemAndHash[..<underscore]), ext: ext)
            byName[key, default: []].append(path + "/" + name)
        }
    }

    /// The link, with the downloaded copy when it is still on disk; a copy that may not be taken (a link out of the
    /// folder) is reported through `body` and left out.
    func attachment(url: String, at location: String, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) -> AttachmentRecord {
        var record = AttachmentRecord(url: url)
        let fileName = (URL(string: url)?.path).flatMap { ($0.removingPercentEncoding ?? $0) as String? } ?? ""
        let ext = (fileName as NSString).pathExtension
        var stem = ((fileName as NSString).lastPathComponent as NSString).deletingPathExtension
        stem.removeAll { $0 == "\u{202E}" }
        let limit = max(0, 50 - (ext.isEmpty ? 0 : min(ext.count + 1, 11)))
        if let files = byName[Self.key(stem: String(stem.prefix(limit)), ext: ext)], files.count == 1 {
            switch folder.file(files[0]) {
            case .success(let local):
                record.localPath = local
                if let size = (try? FileManager.default.attributesOfItem(atPath: local))?[.size] as? NSNumber {
                    record.size = size.int64Value
                }
            case .failure(let refusal):
                try body(.fileRefused(reason: refusal.reason, location: "\(location): \(refusal.path)"))
            }
        }
        return record
    }

    private static func key(stem: String, ext: String) -> String {
        "\(stem)\u{0}\(ext.lowercased())"
    }
}
