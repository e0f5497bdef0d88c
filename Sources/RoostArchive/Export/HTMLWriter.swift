import RoostCore
import Foundation

/// `--format html`: a folder with `index.html` and one self-contained page per conversation (per month with
/// `--split month`): chat bubbles in and out, day separators, names, avatars when a photo is stored, every
/// text escaped, inline CSS only, a viewport for phones, no scripts and nothing fetched from the network.
final class HTMLWriter: ExportWriter {
    let byConversation = true

    private struct IndexEntry {
        var month: String?
        var account: String
        var title: String
        var jid: String
        var link: String
        var avatar: String
        var messages: Int
        var first: Int64?
        var last: Int64?
    }

    private var partitionFolder: [String] = []
    private var month: String?
    private var names: [String: FileNameAllocator] = [:]
    private var page: ByteSink?
    private var depth = 0
    private var slice: ConversationSlice?
    private var currentDay: String?
    private var lastSender: String?
    private var peerAvatar = ""
    private var entries: [IndexEntry] = []
    private var messagesOnPage = 0

    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws {
        guard case .folder(let components) = target else { preconditionFailure("html writes a folder") }
        partitionFolder = components
        month = partition.month
    }

    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        let components = context.conversationComponents(slice, ext: "html", allocator: &names, in: partitionFolder)
        let page = try context.createFile(components)
        self.page = page
        self.slice = slice
        depth = components.count - 1
        currentDay = nil
        lastSender = nil
        messagesOnPage = 0
        let title = context.contacts.title(of: slice)
        let contact = context.contacts.contact(accountID: slice.accountID, jid: slice.conversation)
        let avatarLink = try contact?.photoPath.flatMap { path in
            try context.attachments?.copy(path, into: "avatars", preferredName: slice.conversation + Self.fileExtension(path))
        }
        peerAvatar = Self.avatar(name: title, key: slice.conversation, link: avatarLink.map { up + $0 })
        entries.append(IndexEntry(month: month, account: slice.account, title: title, jid: slice.conversation,
                                  link: components.joined(separator: "/"), avatar: Self.avatar(name: title, key: slice.conversation, link: avatarLink),
                                  messages: 0, first: slice.firstTimestamp, last: slice.lastTimestamp))
        var head = HTMLStyle.head(title: title + (month.map { " · \($0)" } ?? ""))
        head += "<header class=\"top\"><a class=\"back\" href=\"\(up)index.html\" aria-label=\"All conversations\">‹</a>"
        head += peerAvatar
        head += "<div><h1>\(HTMLText.escape(title))</h1><div class=\"sub\">"
        if title != slice.conversation { head += HTMLText.escape(slice.conversation) + " · " }
        head += "account \(HTMLText.escape(slice.account))" + (month.map { " · \($0)" } ?? "")
        head += " · times in \(HTMLText.escape(TranscriptPhrases.zoneName(context.clock)))</div></div></header>\n<main>\n"
        page.append(head)
    }

    private var up: String { String(repeating: "../", count: depth) }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard let page, let slice else { return }
        let time = context.clock.civil(event.timestamp)
        if time.dateText != currentDay {
            currentDay = time.dateText
            lastSender = nil
            page.append("<div class=\"day\"><span>\(HTMLText.escape(time.longDateText))</span></div>\n")
        }
        switch event {
        case .message(let view):
            let message = try view.load()
            page.append(try messageHTML(message, time: time, slice: slice, context: context))
            messagesOnPage += 1
            context.messageWritten()
        case .chatState(let state):
            let who = TranscriptPhrases.stateSender(state, accountID: slice.accountID, contacts: context.contacts)
            page.append("<div class=\"event\">\(time.minuteText) · \(HTMLText.escape(TranscriptPhrases.chatState(state, who: who)))</div>\n")
            context.summary.chatStates += 1
        case .presence(let presence):
            let who = TranscriptPhrases.presenceSender(presence, accountID: slice.accountID, contacts: context.contacts)
            page.append("<div class=\"event\">\(time.minuteText) · \(HTMLText.escape(TranscriptPhrases.presence(presence, who: who)))</div>\n")
            context.summary.presenceChanges += 1
        }
    }

    private func messageHTML(_ message: ArchivedMessage, time: CivilTime, slice: ConversationSlice,
                             context: ExportContext) throws -> String {
        let outgoing = message.direction == .outgoing && message.kind != .groupchat
        let sender = context.contacts.sender(of: message, accountID: slice.accountID)
        // In a room each occupant keeps one colour (by occupant id, which survives nick changes; else by nick).
        let occupantKey = message.occupantId ?? message.from
        var html = "<div class=\"msg \(outgoing ? "out" : "in")\" id=\"m\(message.id)\">"
        if outgoing {
            html += "<span class=\"spacer\"></span>"
        } else if message.kind == .groupchat {
            html += Self.avatar(name: sender, key: occupantKey, link: nil)
        } else {
            html += peerAvatar
        }
        html += "<div class=\"bubble\">"
        if !outgoing && sender != lastSender {
            if message.kind == .groupchat {
                html += "<div class=\"name occupant\" style=\"--hue:\(HTMLText.hue(occupantKey))\">\(HTMLText.escape(sender))</div>"
            } else {
                html += "<div class=\"name\">\(HTMLText.escape(sender))</div>"
            }
        }
        lastSender = outgoing ? nil : sender
        let semantics = message.semantics
        if let context = semantics.replyContext {
            let target = semantics.reply?.messageRow.map { " href=\"#m\($0)\"" } ?? ""
            html += "<a class=\"reply\"\(target)>\(HTMLText.escape(context))</a>"
        }
        if let tombstone = semantics.tombstone(time: { let t = context.clock.civil($0); return "\(t.dateText) \(t.minuteText)" }) {
            html += "<div class=\"tombstone\">\(HTMLText.escape(tombstone))</div>"
        }
        let body = message.retracted && message.body == nil ? "" : (message.body ?? TranscriptPhrases.placeholder(for: message))
        let text = body + TranscriptPhrases.encryptionMark(for: message)
        // XEP-0393 styling of the body; placeholders are shown as they are.
        let shown = message.body != nil ? MessageStyling.html(text, escape: HTMLText.escape) : HTMLText.escape(text)
        if !text.isEmpty { html += "<div class=\"text\">\(shown)</div>" }
        for attachment in message.attachments {
            html += try attachmentHTML(attachment, of: message, context: context)
        }
        if message.revisions.count > 1, !message.retracted || message.body != nil {
            html += "<details class=\"revisions\"><summary>edited</summary><ol>"
            for revision in message.revisions.dropLast() {
                html += "<li>\(HTMLText.escape(revision.body ?? ""))</li>"
            }
            html += "</ol></details>"
        }
        if let reactions = semantics.reactionSummary { html += "<div class=\"reactions\">\(HTMLText.escape(reactions))</div>" }
        html += "<div class=\"meta\"><time datetime=\"\(time.rfc3339)\">\(time.minuteText)</time>"
        if message.edited { html += " · edited" }
        if let progress = semantics.peerProgress { html += " <span class=\"tick \(progress.rawValue)\" title=\"\(progress.rawValue)\">\(semantics.tick)</span>" }
        html += "</div></div></div>\n"
        return html
    }

    /// A picture larger than this (bytes, or pixels on its longer side) is shown through a thumbnail.
    static let thumbnailAboveBytes: Int64 = 1_000_000
    static let thumbnailAbovePixels = 1600
    static let thumbnailSide = 1024

    private func attachmentHTML(_ attachment: AttachmentRecord, of message: ArchivedMessage, context: ExportContext) throws -> String {
        let label = HTMLText.escape(attachment.displayName)
        let size = attachment.size.map { " <span class=\"size\">\(FileSize.text($0))</span>" } ?? ""
        if let copy = try context.attachments?.copy(attachment, of: message) {
            let link = HTMLText.escape(HTMLText.relativeLink(up + copy))
            if attachment.isImage, let source = attachment.localPath {
                var image = link
                var dimensions = ""
                if let maker = context.options.thumbnails, let (width, height) = maker.dimensions(of: source) {
                    dimensions = " width=\"\(width)\" height=\"\(height)\""
                    if (attachment.size ?? 0) > Self.thumbnailAboveBytes || max(width, height) > Self.thumbnailAbovePixels,
                       let thumbnail = try context.attachments?.thumbnail(of: source, named: copy, maker: maker, maxSide: Self.thumbnailSide) {
                        image = HTMLText.escape(HTMLText.relativeLink(up + thumbnail.link))
                        dimensions = " width=\"\(thumbnail.width)\" height=\"\(thumbnail.height)\""
                    }
                }
                return "<a class=\"file\" href=\"\(link)\"><img src=\"\(image)\" alt=\"\(label)\"\(dimensions) loading=\"lazy\"></a>"
            }
            return "<a class=\"file\" href=\"\(link)\">\(label)</a>\(size)"
        }
        if HTMLText.isSafeExternalURL(attachment.url) {
            return "<a class=\"file\" href=\"\(HTMLText.escape(attachment.url))\" rel=\"noreferrer noopener\">\(label)</a>\(size)"
        }
        return "<span class=\"file\">\(HTMLText.escape(attachment.url))</span>"
    }

    func endConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        guard let page else { return }
        if messagesOnPage == 0 { page.append("<p class=\"event\">No messages.</p>\n") }
        page.append("</main>\n</body>\n</html>\n")
        entries[entries.count - 1].messages = messagesOnPage
        try context.close(page)
        self.page = nil
    }

    func endPartition(context: ExportContext) throws {}

    func finish(context: ExportContext) throws {
        let index = try context.createFile(["index.html"])
        var html = HTMLStyle.head(title: "Conversations")
        html += "<header class=\"top\"><div><h1>Conversations</h1><div class=\"sub\">"
        html += "\(entries.count) conversation\(entries.count == 1 ? "" : "s") · \(context.summary.messages) messages"
        html += " · times in \(HTMLText.escape(TranscriptPhrases.zoneName(context.clock)))</div></div></header>\n<main>\n"
        var heading: String?
        var open = false
        for entry in entries {
            let group = [entry.month, context.multipleAccounts ? entry.account : nil].compactMap { $0 }.joined(separator: " · ")
            if group != heading || !open {
                if open { html += "</ul>\n" }
                if !group.isEmpty { html += "<h2>\(HTMLText.escape(group))</h2>\n" }
                html += "<ul class=\"conversations\">\n"
                heading = group
                open = true
            }
            var detail = entry.title == entry.jid ? "" : HTMLText.escape(entry.jid) + " · "
            detail += "\(entry.messages) message\(entry.messages == 1 ? "" : "s")"
            if let first = entry.first, let last = entry.last {
                let from = context.clock.civil(first).dateText, to = context.clock.civil(last).dateText
                detail += " · " + (from == to ? from : "\(from) – \(to)")
            }
            html += "<li><a href=\"\(HTMLText.escape(HTMLText.relativeLink(entry.link)))\">\(entry.avatar)"
            html += "<span><span class=\"title\">\(HTMLText.escape(entry.title))</span><br><span class=\"detail\">\(detail)</span></span></a></li>\n"
        }
        if open { html += "</ul>\n" }
        if entries.isEmpty { html += "<p class=\"event\">Nothing matched the query.</p>\n" }
        html += "</main>\n</body>\n</html>\n"
        index.append(html)
        try context.close(index)
    }

    private static func avatar(name: String, key: String, link: String?) -> String {
        if let link {
            return "<img class=\"avatar\" src=\"\(HTMLText.escape(HTMLText.relativeLink(link)))\" alt=\"\">"
        }
        return "<span class=\"avatar\" style=\"background:hsl(\(HTMLText.hue(key)),45%,42%)\" aria-hidden=\"true\">\(HTMLText.escape(HTMLText.initial(name)))</span>"
    }

    private static func fileExtension(_ path: String) -> String {
        let ext = URL(fileURLWithPath: path).pathExtension
        return ext.isEmpty || ext.count > 5 ? "" : "." + ext
    }
}
