import RoostCore
package import Foundation

/// The web view's search: the matches of `MessageStatement` for the reading account, newest first, grouped by
/// conversation.
extension ArchiveBrowser {
    package struct SearchResults: Sendable {
        package var html: String
        package var count: Int
        /// `before=` of the next (older) page of results, nil when this is the last.
        package var next: Int64?
    }

    /// Newest first, `limit` per page, keyset-paged by message id: the messages `roost search` finds for the same
    /// query and reading account (`MessageStatement`). A malformed query throws `ArchiveError.query`.
    package func search(_ query: String, before: Int64?, limit: Int = ArchiveBrowser.pageSize, now: Date = Date()) throws -> SearchResults {
        let compiled = try reader.compile(query, now: now, timeZone: timeZone, account: account)
        return try reader.withSnapshot { database in
            let accounts = try Self.accounts(database)
            let contacts = try ContactDirectory(database: database, accounts: accounts)
            let reading = try MessageRowReading(database, accounts: accounts)
            var statement = MessageStatement(compiled)
            if let before { statement.restrict("\(statement.idColumn) < ?", [.integer(before)]) }
            let (sql, parameters) = statement.select(MessageRowReading.columns, order: .newestFirst, limit: limit + 1)
            var hits: [(Int64, MessageRow)] = []
            try database.prepare(sql).forEachRow(parameters) { row throws(SQLiteError) in
                hits.append((row.int(1), try reading.row(row)))
                return true
            }
            let more = hits.count > limit
            hits = Array(hits.prefix(limit))
            let highlighter = Highlighter(terms: compiled.highlightTerms)
            let clock = ZoneClock(timeZone: timeZone)
            var html = ""
            var transcript: TranscriptHTML?
            var group: SliceKey?
            for (accountID, message) in hits {
                let key = SliceKey(accountID: accountID, conversation: message.conversation.lowercased())
                if key != group {
                    if group != nil { html += "</section>\n" }
                    group = key
                    let contact = contacts.contact(accountID: accountID, jid: message.conversation)
                    let title = contacts.title(accountID: accountID, jid: message.conversation)
                    let avatar = TranscriptHTML.avatar(name: title, key: message.conversation,
                                                       link: contact?.photoPath == nil ? nil : links.avatar(accountID: accountID, jid: message.conversation))
                    transcript = TranscriptHTML(clock: clock, contacts: contacts, accountID: accountID, peerAvatar: avatar)
                    transcript?.highlighter = highlighter
                    let href = links.conversation(accountID: accountID, jid: message.conversation, at: nil)
                    html += "<section class=\"hits\"><h2><a href=\"\(HTMLText.escape(href))\">\(HTMLText.name(title))</a>"
                    if title != message.conversation { html += " <span class=\"detail\">\(HTMLText.escape(message.conversation))</span>" }
                    if accounts.count > 1 { html += " <span class=\"detail\">account \(HTMLText.escape(message.account))</span>" }
                    html += "</h2>\n"
                }
                let context = links.conversation(accountID: accountID, jid: message.conversation, at: message.id) + "#m\(message.id)"
                html += try transcript!.render(.message(message), attachmentLink: attachmentLink,
                                           extraMeta: " · <a class=\"context\" href=\"\(HTMLText.escape(context))\">in context</a>")
            }
            if group != nil { html += "</section>\n" }
            return SearchResults(html: html, count: hits.count, next: more ? hits.last?.1.id : nil)
        }
    }

}
