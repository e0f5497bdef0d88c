import RoostCore
import Foundation

/// The web view's conversation list: every conversation of every account, with its newest message and unread count.
extension ArchiveBrowser {
    package struct ConversationEntry: Sendable, Equatable {
        package var accountID: Int64
        package var account: String
        package var jid: String
        package var title: String
        /// A multi-user chat: its newest message is of type groupchat.
        package var isRoom: Bool
        package var lastID: Int64
        package var lastTimestamp: Int64
        /// Unread messages (as `roost read` and `roost status` count them), at most `unreadLimit`.
        package var unread: Int
        /// The `<li>` of the list.
        package var html: String
    }

    /// Every conversation of every account, the most recently active first.
    package func conversations() throws -> [ConversationEntry] {
        try reader.withSnapshot { database in
            let accounts = try Self.accounts(database)
            let contacts = try ContactDirectory(database: database, accounts: accounts)
            let clock = ZoneClock(timeZone: timeZone)
            let reading = try MessageRowReading(database, accounts: accounts)
            // One seek per conversation on messages_account_conversation (schema v9): the next conversation of
            // the same account, else the first of the next account; then its newest id. (A row-value
            // comparison `(account_id, conversation) > (?, ?)` would seek on the account only and scan.)
            let nextInAccount = try database.prepare("""
                SELECT conversation FROM messages WHERE account_id = ? AND conversation > ? ORDER BY conversation LIMIT 1
                """)
            let firstOfNextAccount = try database.prepare("""
                SELECT account_id, conversation FROM messages WHERE account_id > ? ORDER BY account_id, conversation LIMIT 1
                """)
            let newest = try database.prepare("SELECT id FROM messages WHERE account_id = ? AND conversation = ? ORDER BY id DESC LIMIT 1")
            var pairs: [(Int64, String, Int64)] = []
            var key: (Int64, String)? = nil
            while true {
                var found: (Int64, String)?
                if let (account, conversation) = key {
                    try nextInAccount.forEachRow([.integer(account), .text(conversation)]) { row in
                        found = (account, row.text(0))
                        return false
                    }
                }
                if found == nil {
                    try firstOfNextAccount.forEachRow([.integer(key?.0 ?? Int64.min)]) { row in
                        found = (row.int(0), row.text(1))
                        return false
                    }
                }
                guard let pair = found else { break }
                if let id = try newest.scalarInt([.integer(pair.0), .text(pair.1)]) { pairs.append((pair.0, pair.1, id)) }
                key = pair
            }
            pairs.sort { $0.2 > $1.2 }
            let last = try database.prepare("SELECT \(MessageRowReading.columns) FROM messages m WHERE m.id = ?")
            let today = clock.civil(Timestamp.now()).dateText
            var entries: [ConversationEntry] = []
            for (accountID, jid, id) in pairs {
                var message: MessageRow?
                try last.forEachRow([.integer(id)]) { row throws(SQLiteError) in
                    message = try reading.row(row)
                    return false
                }
                guard let message else { continue }
                let contact = contacts.contact(accountID: accountID, jid: jid)
                let room = contacts.rooms.room(accountID: accountID, jid: jid)
                let title = contacts.title(accountID: accountID, jid: jid)
                let isRoom = room != nil || message.kind == .groupchat
                let avatar = TranscriptHTML.avatar(name: title, key: jid,
                                                   link: contact?.photoPath == nil ? nil : links.avatar(accountID: accountID, jid: jid))
                var detail: [String] = []
                if isRoom { detail.append("<span class=\"badge\">room</span>") }
                if title != jid { detail.append(HTMLText.escape(jid)) }
                if accounts.count > 1 { detail.append("account " + HTMLText.escape(accounts[accountID] ?? "")) }
                let time = clock.civil(message.timestamp)
                detail.append("<time datetime=\"\(time.rfc3339)\">\(time.dateText == today ? time.minuteText : time.dateText)</time>")
                let sender = contacts.isOwn(message, accountID: accountID) ? "me" : contacts.sender(of: message, accountID: accountID)
                var text = TranscriptPhrases.shownBody(of: message) ?? TranscriptPhrases.placeholder(for: message)
                if text.isEmpty, let file = message.attachments.first { text = "(\(file.isImage ? "picture" : "file")) " + file.displayName }
                let snippet = "<span class=\"snippet\">" + HTMLText.escape(Self.snippet(VisibleText.name(sender) + ": " + text))
                    + "</span>"
                let unread = try ArchiveReader.unreadCount(database, accountID: accountID, conversation: jid, limit: Self.unreadLimit)
                let classes = (isRoom ? ["room"] : []) + (unread > 0 ? ["unread"] : [])
                let html = TranscriptHTML.listItem(href: links.conversation(accountID: accountID, jid: jid, at: nil), avatar: avatar,
                                                   title: title, detail: detail.joined(separator: " · ") + "<br>" + snippet,
                                                   attributes: classes.isEmpty ? "" : " class=\"\(classes.joined(separator: " "))\"",
                                                   badge: Self.unreadBadge(unread))
                entries.append(ConversationEntry(accountID: accountID, account: accounts[accountID] ?? "", jid: jid, title: title,
                                                 isRoom: isRoom, lastID: id, lastTimestamp: message.timestamp, unread: unread, html: html))
            }
            return entries
        }
    }

    /// The count beside a conversation's title (HTML), empty when all is read.
    package static func unreadBadge(_ unread: Int) -> String {
        guard unread > 0 else { return "" }
        let shown = unread >= unreadLimit ? "\(unreadLimit - 1)+" : String(unread)
        return "<span class=\"count\" title=\"\(shown) unread\" aria-label=\"\(shown) unread\">\(shown)</span>"
    }

    /// The first line of a message, shortened for the list.
    static func snippet(_ text: String, limit: Int = 90) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? text
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }
}
