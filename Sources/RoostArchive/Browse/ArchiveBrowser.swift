import RoostCore
package import Foundation

/// The URLs of the web view. `roost serve` owns its routes; the pages only ask for links.
package protocol BrowseLinks: Sendable {
    /// A conversation's page; with `at`, the page around that message (open in context).
    func conversation(accountID: Int64, jid: String, at messageID: Int64?) -> String
    /// A message's attachment file, by the message's id and the attachment's position (never a path).
    func attachment(messageID: Int64, index: Int) -> String
    /// A contact's stored picture.
    func avatar(accountID: Int64, jid: String) -> String
    /// What a page shows of a stored picture: a smaller copy when it is large (nil: the picture itself).
    func preview(messageID: Int64, index: Int) -> String?
}

/// What the web view shows, read from the archive and drawn with the export's renderer (`TranscriptHTML`):
/// the conversation list, pages of one conversation (keyset pagination on message ids, which are time
/// ordered, so a page costs the same at any depth of any archive), search results, and what arrived since a
/// page was drawn. Every call reads one snapshot through the reader's own read-only connection. The list is in
/// `ArchiveBrowser+List.swift`, a conversation's pages and their live continuation in
/// `ArchiveBrowser+Conversation.swift`, search in `ArchiveBrowser+Search.swift`.
package final class ArchiveBrowser: Sendable {
    package let reader: ArchiveReader
    package let links: any BrowseLinks
    let timeZone: TimeZone
    /// The account search keeps to, as `roost search` does (`--account`, else `default_account`); nil: every account.
    /// The conversation list and pages show every account.
    package let account: String?
    /// Messages per conversation page and per page of search results.
    package static let pageSize = 50
    /// Chat states or presence changes shown between two messages, at most (a years-long gap may hold many).
    static let sideEventLimit = 500
    /// Unread messages are counted up to this many (shown as "999+" beyond), so a list costs the same whether a
    /// conversation has ten unread messages or a million.
    package static let unreadLimit = 1000
    /// A picture larger than this (bytes, or pixels on its longer side) is shown through a copy of at most
    /// `previewSide` pixels: the html export's thresholds.
    package static let previewAboveBytes = HTMLWriter.thumbnailAboveBytes
    package static let previewAbovePixels = HTMLWriter.thumbnailAbovePixels
    package static let previewSide = HTMLWriter.thumbnailSide

    package init(reader: ArchiveReader, links: any BrowseLinks, timeZone: TimeZone = .current, account: String? = nil) {
        self.reader = reader
        self.links = links
        self.timeZone = timeZone
        self.account = account
    }

    /// Where a page's attachments link: files in the store, by ids (never a path).
    var attachmentLink: TranscriptHTML.AttachmentLink {
        let links = self.links
        return { attachment, message, index in
            // Stored in the file store (or, for old imports, a path outside it): served by ids, shown inline if a picture.
            guard attachment.state == .stored, let path = attachment.localPath, FileManager.default.isReadableFile(atPath: path) else {
                return nil
            }
            let href = links.attachment(messageID: message.id, index: index)
            guard attachment.isImage else { return TranscriptHTML.LocalFile(href: href) }
            var local = TranscriptHTML.LocalFile(href: href, image: links.preview(messageID: message.id, index: index) ?? href,
                                                 width: attachment.width, height: attachment.height)
            // A size announced by the sender (XEP-0446) is the original's: the box of a smaller copy keeps its shape.
            if local.image != href, let width = local.width, let height = local.height, max(width, height) > Self.previewSide {
                let scale = Double(Self.previewSide) / Double(max(width, height))
                local.width = max(1, Int((Double(width) * scale).rounded()))
                local.height = max(1, Int((Double(height) * scale).rounded()))
            }
            return local
        }
    }

    // MARK: Files and accounts

    /// The attachment at `index` of message `messageID` (files are served by these ids, never by path).
    package func attachment(messageID: Int64, index: Int) throws -> AttachmentRecord? {
        try reader.withSnapshot { database -> AttachmentRecord? in
            let attachments = try MessageRowReading(database, accounts: [:]).attachments(of: messageID)
            return attachments.indices.contains(index) ? attachments[index] : nil
        }
    }

    /// The stored picture of a contact, if any.
    package func avatarPath(accountID: Int64, jid: String) throws -> String? {
        try reader.withSnapshot { database -> String? in
            var path: String?
            try database.cached("SELECT photo_path FROM contacts WHERE account_id = ? AND jid = ?")
                .forEachRow([.integer(accountID), .text(jid)]) { row in
                    path = row.optionalText(0)
                    return false
                }
            return path
        }
    }

    /// The calendar day (`2026-01-15`) of a time, as the pages' day separators name it; nil for 0 (nothing yet).
    package func day(of timestamp: Int64) -> String? {
        timestamp == 0 ? nil : ZoneClock(timeZone: timeZone).civil(timestamp).dateText
    }

    /// The archive's accounts: id → bare JID.
    package func accounts() throws -> [Int64: String] {
        try reader.withSnapshot { database in try Self.accounts(database) }
    }

    static func accounts(_ database: Database) throws(SQLiteError) -> [Int64: String] {
        var accounts: [Int64: String] = [:]
        try database.cached("SELECT id, jid FROM accounts").forEachRow { row in
            accounts[row.int(0)] = row.text(1)
            return true
        }
        return accounts
    }
}
