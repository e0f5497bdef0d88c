import RoostCore
import Foundation

/// Dino's database: `dino.db` in `~/.local/share/dino/`, built by Dino's Qlite layer from the table classes in
/// libdino/src/service/database.vala; its version is the `_meta` row `version` (11 in Dino 0.1, 17 in 0.2,
/// 22 in 0.3, 25–26 in 0.4, 29 in 0.5, 32 on the development branch in 2026). Facts used here:
///
/// - `account` (id, bare_jid), `jid` (id, bare_jid);
/// - `message`: account_id, counterpart_id → jid, counterpart_resource (the peer's resource; the sender's nick
///   in rooms), our_resource (the own resource; the own nick in rooms), direction (1 sent, 0 received),
///   type (0 error, 1 chat, 2 group chat, 3 private message in a room), time (UTC seconds, the sender's or
///   server's stamp), local_time (UTC seconds of receipt), body, stanza_id (the message id), server_id (the
///   server archive's stanza-id, version 10 and up);
/// - `message_correction` (Dino 0.2 and later): message_id (the correcting message's row) → to_stanza_id (the
///   corrected message's id; in rooms Dino may name it by its server id), to_message_db_id (version 31 and up);
///   the corrected message keeps its row;
/// - `file_transfer`: direction, time, file_name, path (relative to `files/` beside `dino.db`), mime_type,
///   size, info (for HTTP uploads the row id of the message that carried the link);
/// - `content_item` (id, content_type: 1 message, 2 file transfer, 3 call; foreign_id: that row; a corrected
///   message's item names its newest correction's row);
/// - `reaction` (version 23, Dino 0.4, and later; libdino/src/service/reactions.vala): account_id,
///   content_item_id, jid_id (the reactor's bare JID in a chat, the account's for the user's own; in a room the
///   occupant's real JID when known), occupant_id → `occupant_id` (id, last_nick, jid_id = the room,
///   occupant_id = the XEP-0421 id), time (UTC milliseconds), emojis (comma-separated; empty: all taken back).
///   One row per reactor and item, replaced by the reactor's next set (its current set only). Dino names the
///   reacted message by its `stanza_id` in a chat, by its `server_id` in a room and in a private message;
/// - `call` (0.3 and later), which is not a message.
final class DinoHistory: ClientHistoryReader {
    private let snapshot: SourceSnapshot
    private let version: Int
    private let filesFolder: String
    private let files: ClientFileFolder

    static func open(_ snapshot: SourceSnapshot) throws(ImportError) -> DinoHistory? {
        let tables = try snapshot.tables()
        guard tables.isSuperset(of: ["_meta", "account", "jid", "message"]),
              try snapshot.columns(of: "message").isSuperset(of: ["counterpart_id", "counterpart_resource", "local_time"]) else {
            return nil
        }
        var version = 0
        try snapshot.query("SELECT int_val FROM _meta WHERE name = 'version'") { row in version = Int(row.int(0)) }
        return DinoHistory(snapshot: snapshot, version: version)
    }

    private init(snapshot: SourceSnapshot, version: Int) {
        self.snapshot = snapshot
        self.version = version
        filesFolder = (snapshot.originalPath as NSString).deletingLastPathComponent + "/files"
        files = ClientFileFolder(path: filesFolder, label: "Dino's files folder")
    }

    var description: String { "Dino: \(snapshot.originalPath) (database version \(version))" }

    func accounts() throws(ImportError) -> [String] {
        var accounts: Set<String> = []
        try snapshot.query("SELECT DISTINCT a.bare_jid FROM message m JOIN account a ON a.id = m.account_id") { row in
            if let jid = ClientText.bareJID(row.optionalText(0)) { accounts.insert(jid) }
        }
        return accounts.sorted()
    }

    private struct Transfer {
        let id: Int64
        let account: String?
        let conversation: String?
        let resource: String?
        let direction: MessageDirection
        let time: Int64
        let localTime: Int64?
        let fileName: String?
        let attachment: AttachmentRecord
        let messageRow: Int64?
        /// The path the row names, refused (`ClientFileFolder`): reported, never read.
        let refused: ClientFileFolder.Refusal?
    }

    func read(account wanted: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let tables = try snapshot.tables()
        let columns = try snapshot.columns(of: "message")
        let serverID = columns.contains("server_id") ? "m.server_id" : "NULL"

        var transfers: [Transfer] = []
        if tables.contains("file_transfer") {
            try snapshot.query("""
                SELECT f.id, a.bare_jid, j.bare_jid, f.counterpart_resource, f.direction, f.time, f.local_time, f.file_name,
                       f.path, f.mime_type, f.size, f.info
                FROM file_transfer f LEFT JOIN account a ON a.id = f.account_id LEFT JOIN jid j ON j.id = f.counterpart_id
                ORDER BY f.id
                """) { row in
                // Relative to files/, or absolute: taken only inside files/ (a path out of it is refused, issue 29).
                var local: String?
                var refused: ClientFileFolder.Refusal?
                switch row.optionalText(8).map({ files.file($0) }) {
                case .success(let path)?: local = path
                case .failure(let refusal)? where refusal.reason != "not on disk": refused = refusal
                default: break
                }
                let attachment = AttachmentRecord(url: local.map { "file://" + $0 } ?? "", localPath: local,
                                                  mime: row.optionalText(9), size: row.optionalInt(10).flatMap { $0 >= 0 ? $0 : nil })
                transfers.append(Transfer(
                    id: row.int(0), account: ClientText.bareJID(row.optionalText(1)), conversation: ClientText.bareJID(row.optionalText(2)),
                    resource: ClientText.nonEmpty(row.optionalText(3)), direction: row.int(4) == 1 ? .outgoing : .incoming,
                    time: row.int(5) * 1000, localTime: row.optionalInt(6).map { $0 * 1000 }, fileName: ClientText.nonEmpty(row.optionalText(7)),
                    attachment: attachment, messageRow: row.optionalText(11).flatMap { Int64($0) }, refused: refused))
            }
        }
        var transfersByMessage: [Int64: [Transfer]] = [:]
        for transfer in transfers { if let row = transfer.messageRow { transfersByMessage[row, default: []].append(transfer) } }
        for transfer in transfers {
            guard let refusal = transfer.refused, transfer.account.map({ wanted == nil || wanted == $0 }) ?? true else { continue }
            try body(.fileRefused(reason: refusal.reason, location: "file_transfer row \(transfer.id): \(refusal.path)"))
        }

        // Correcting message row → the id of the message it corrects (resolved below to the original's message id).
        var correctionOf: [Int64: (toStanzaID: String?, toRow: Int64?)] = [:]
        if tables.contains("message_correction") {
            let toRow = try snapshot.columns(of: "message_correction").contains("to_message_db_id") ? "to_message_db_id" : "NULL"
            try snapshot.query("SELECT message_id, to_stanza_id, \(toRow) FROM message_correction") { row in
                correctionOf[row.int(0)] = (ClientText.nonEmpty(row.optionalText(1)), row.optionalInt(2))
            }
        }

        // Rows that became messages: a file transfer whose message did not (no text) is imported on its own.
        var messageRows: Set<Int64> = []
        // Every message row with an account and a contact, imported or not, as reactions name it.
        var reactable: [Int64: Reactable] = [:]
        // The own nick in each room (`account|room|nick`), from the own messages there.
        var ownNicks: Set<String> = []
        var messageIDOfRow: [Int64: String] = [:]
        var messageIDByServerID: [String: String] = [:]
        var corrections: [(message: ClientMessage, row: Int64)] = []
        try snapshot.query("""
            SELECT m.id, a.bare_jid, j.bare_jid, m.counterpart_resource, m.our_resource, m.direction, m.type, m.time,
                   m.local_time, m.body, m.stanza_id, \(serverID)
            FROM message m LEFT JOIN account a ON a.id = m.account_id LEFT JOIN jid j ON j.id = m.counterpart_id
            ORDER BY m.time, m.id
            """) { row throws(ImportError) in
            let rowID = row.int(0)
            let location = "message row \(rowID)"
            guard let account = ClientText.bareJID(row.optionalText(1)) else {
                return try body(.refused(reason: "no valid account JID", location: location))
            }
            if let wanted, account != wanted { return }
            guard let conversation = ClientText.bareJID(row.optionalText(2)) else {
                return try body(.refused(reason: "no valid contact JID", location: location))
            }
            let type = row.int(6)
            // A private message in a room is the occupant's own conversation (`room@service/nick`), its reactions too.
            let occupant = type == 3 ? ClientText.occupantJID(room: conversation, nick: ClientText.nonEmpty(row.optionalText(3))) : nil
            reactable[rowID] = Reactable(account: account, conversation: occupant ?? conversation, type: type,
                                         messageID: ClientText.nonEmpty(row.optionalText(10)), serverID: ClientText.nonEmpty(row.optionalText(11)))
            if type == 2, row.int(5) == 1, let nick = ClientText.nonEmpty(row.optionalText(4)) { ownNicks.insert("\(account)|\(conversation)|\(nick)") }
            guard (1...3).contains(type) else {
                return try body(type == 0 ? .notMessage("error messages")
                                : .refused(reason: "unknown message type \(type)", location: location))
            }
            guard let text = ClientText.nonEmpty(row.optionalText(9)) else {
                // A file sent without a link (Jingle) is imported from its file_transfer row below.
                if transfersByMessage[rowID] != nil { return }
                return try body(.refused(reason: "empty message", location: location))
            }
            guard !row.isNull(7) else { return try body(.refused(reason: "no time recorded", location: location)) }
            let direction: MessageDirection = row.int(5) == 1 ? .outgoing : .incoming
            if type == 3 && occupant == nil {
                return try body(.refused(reason: "a private message in a room without the occupant's nick", location: location))
            }
            var message = ClientMessage(account: account, conversation: occupant ?? conversation, kind: type == 2 ? .groupchat : .chat,
                                        direction: direction, body: text, timestamp: row.int(7) * 1000,
                                        receivedAt: row.optionalInt(8).map { $0 * 1000 })
            let peerResource = ClientText.nonEmpty(row.optionalText(3))
            let ownResource = ClientText.nonEmpty(row.optionalText(4))
            switch (type, direction) {
            case (2, .outgoing): message.resource = ownResource ?? peerResource
            case (3, _): message.resource = nil
            case (_, .incoming): message.resource = peerResource
            default: message.resource = nil
            }
            message.undecryptable = EncryptedPlaceholder.recognise(text, client: .dino)
            message.messageId = ClientText.nonEmpty(row.optionalText(10))
            if let serverID = ClientText.nonEmpty(row.optionalText(11)) {
                message.stanzaId = serverID
                message.stanzaIdBy = type == 2 ? conversation : account
                if let id = message.messageId { messageIDByServerID[serverID] = id }
            }
            if let id = message.messageId { messageIDOfRow[rowID] = id }
            message.attachments = (transfersByMessage[rowID] ?? []).map { transfer in
                var attachment = transfer.attachment
                if attachment.url.isEmpty || Self.isLink(text) { attachment.url = text }
                return attachment
            }.filter { !$0.url.isEmpty }
            messageRows.insert(rowID)
            if correctionOf[rowID] != nil {
                corrections.append((message, rowID))
                return
            }
            try body(.message(message.record))
        }

        // Files sent without a message (Jingle file transfer): the file name stands for the text.
        for transfer in transfers where transfer.messageRow.map({ !messageRows.contains($0) }) ?? true {
            let location = "file_transfer row \(transfer.id)"
            guard let account = transfer.account else {
                try body(.refused(reason: "file transfer without a valid account JID", location: location))
                continue
            }
            if let wanted, account != wanted { continue }
            guard let conversation = transfer.conversation, let name = transfer.fileName ?? transfer.attachment.localPath else {
                try body(.refused(reason: "file transfer without a contact or file name", location: location))
                continue
            }
            var message = ClientMessage(account: account, conversation: conversation, direction: transfer.direction,
                                        body: name, timestamp: transfer.time, receivedAt: transfer.localTime)
            message.resource = transfer.direction == .incoming ? transfer.resource : nil
            if !transfer.attachment.url.isEmpty { message.attachments = [transfer.attachment] }
            try body(.message(message.record))
        }

        for (correction, row) in corrections {
            var message = correction
            let target = correctionOf[row]
            message.replaces = target?.toRow.flatMap { messageIDOfRow[$0] }
                ?? target?.toStanzaID.flatMap { messageIDByServerID[$0] } ?? target?.toStanzaID
            try body(.message(message.record))
        }

        if tables.isSuperset(of: ["reaction", "content_item"]) {
            try readReactions(account: wanted, tables: tables, reactable: reactable, correctionOf: correctionOf, ownNicks: ownNicks, body)
        }

        // Not messages, counted so the report says what stayed behind.
        if tables.contains("call") {
            try snapshot.query("""
                SELECT count(*) FROM call t JOIN account a ON a.id = t.account_id WHERE ?1 IS NULL OR lower(a.bare_jid) = ?1
                """, [SQLValue(wanted)]) { row throws(ImportError) in
                for _ in 0..<row.int(0) { try body(.notMessage("calls")) }
            }
        }
    }

    /// A message row as a reaction names it.
    private struct Reactable {
        let account: String
        let conversation: String
        let type: Int64
        let messageID: String?
        let serverID: String?
    }

    /// Each reactor's set, named the way the reaction was sent (so a live copy of the same reaction finds the same
    /// message): the message id in a chat, the room's id in a room. A reaction whose message Dino has is passed on
    /// even when that message was not imported (the archive keeps it until the message comes, as it does live);
    /// one that names nothing Roost can find — an item Dino no longer has, a call, a file sent without a
    /// message, a message without ids — is refused.
    private func readReactions(account wanted: String?, tables: Set<String>, reactable: [Int64: Reactable],
                               correctionOf: [Int64: (toStanzaID: String?, toRow: Int64?)], ownNicks: Set<String>,
                               _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError) {
        let occupants = tables.contains("occupant_id")
        let transfers = tables.contains("file_transfer")
        try snapshot.query("""
            SELECT r.id, a.bare_jid, r.time, r.emojis, j.bare_jid, \(occupants ? "o.occupant_id, o.last_nick" : "NULL, NULL"),
                   c.content_type, c.foreign_id, \(transfers ? "f.info, f.provider" : "NULL, NULL")
            FROM reaction r LEFT JOIN account a ON a.id = r.account_id LEFT JOIN jid j ON j.id = r.jid_id
                 LEFT JOIN content_item c ON c.id = r.content_item_id
                 \(occupants ? "LEFT JOIN occupant_id o ON o.id = r.occupant_id" : "")
                 \(transfers ? "LEFT JOIN file_transfer f ON c.content_type = 2 AND f.id = c.foreign_id" : "")
            ORDER BY r.time, r.id
            """) { row throws(ImportError) in
            let location = "reaction row \(row.int(0))"
            func refuse(_ reason: String) throws(ImportError) { try body(.refusedReaction(reason: reason, location: location)) }
            guard let account = ClientText.bareJID(row.optionalText(1)) else { return try refuse("no valid account JID") }
            if let wanted, account != wanted { return }
            guard !row.isNull(2) else { return try refuse("no time recorded") }
            var messageRow: Int64?
            switch row.optionalInt(7) {
            case nil: return try refuse("the reacted message is no longer in Dino's database")
            case 1: messageRow = row.optionalInt(8)
            case 2:
                // An HTTP upload's message; a file sent over Jingle has no message and no id.
                guard row.optionalInt(10) == 0, let info = row.optionalText(9).flatMap({ Int64($0) }) else {
                    return try refuse("a reaction to a file sent without a message (nothing names it)")
                }
                messageRow = info
            case 3: return try refuse("a reaction to a call")
            case let other?: return try refuse("a reaction to an unknown kind of item (\(other))")
            }
            // A corrected message's item names its newest correction; the reaction is to the corrected message (its
            // row when Dino linked it, else the id the correction names, which the archive finds it by).
            var message = messageRow.flatMap { reactable[$0] }
            var correctedID: String?
            if let messageRow, let correction = correctionOf[messageRow] {
                if let original = correction.toRow.flatMap({ reactable[$0] }) { message = original } else { correctedID = correction.toStanzaID }
            }
            guard let message else { return try refuse("the reacted message is no longer in Dino's database") }
            let inRoom = message.type == 2 || message.type == 3
            guard let target = correctedID ?? (inRoom ? message.serverID ?? message.messageID : message.messageID ?? message.serverID) else {
                return try refuse("the reacted message has no id")
            }
            let realJID = ClientText.bareJID(row.optionalText(4))
            let emojis = ReactionSet.normalized((row.optionalText(3) ?? "").split(separator: ",").map(String.init))
            let annotation: MessageAnnotation
            if message.type == 2 {
                // A room's reactor is its occupant id, as live (`MessageAnnotation.actor`); without one Dino kept the
                // real JID, and so does Roost.
                let occupantID = ClientText.nonEmpty(row.optionalText(5))
                let nick = ClientText.nonEmpty(row.optionalText(6))
                guard let from = occupantID.map({ _ in "\(message.conversation)/\(nick ?? "")" }) ?? realJID else {
                    return try refuse("no reactor recorded")
                }
                let own = realJID == account || nick.map { ownNicks.contains("\(account)|\(message.conversation)|\($0)") } == true
                annotation = MessageAnnotation(account: account, conversation: message.conversation, kind: .reactions(emojis), target: target,
                                               from: from, direction: own ? .outgoing : .incoming, groupchat: true, occupantId: occupantID,
                                               senderName: nick, timestamp: row.int(2), source: .import)
            } else {
                guard let reactor = realJID else { return try refuse("no reactor recorded") }
                annotation = MessageAnnotation(account: account, conversation: message.conversation, kind: .reactions(emojis), target: target,
                                               from: reactor, direction: reactor == account ? .outgoing : .incoming,
                                               timestamp: row.int(2), source: .import)
            }
            try body(.reaction(annotation))
        }
    }

    private static func isLink(_ text: String) -> Bool {
        !text.contains(where: \.isWhitespace) && (text.hasPrefix("https://") || text.hasPrefix("http://") || text.hasPrefix("aesgcm://"))
    }
}
