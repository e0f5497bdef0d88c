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
    private var transcript: TranscriptHTML?
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
        depth = components.count - 1
        messagesOnPage = 0
        let title = context.contacts.title(of: slice)
        let contact = context.contacts.contact(accountID: slice.accountID, jid: slice.conversation)
        let avatarLink = try contact?.photoPath.flatMap { path in
            try context.attachments?.copy(path, into: "avatars", preferredName: slice.conversation + Self.fileExtension(path))
        }
        let peerAvatar = TranscriptHTML.avatar(name: title, key: slice.conversation, link: avatarLink.map { HTMLText.relativeLink(up + $0) })
        transcript = TranscriptHTML(clock: context.clock, contacts: context.contacts, accountID: slice.accountID, peerAvatar: peerAvatar)
        entries.append(IndexEntry(month: month, account: slice.account, title: title, jid: slice.conversation,
                                  link: components.joined(separator: "/"),
                                  avatar: TranscriptHTML.avatar(name: title, key: slice.conversation, link: avatarLink.map(HTMLText.relativeLink)),
                                  messages: 0, first: slice.firstTimestamp, last: slice.lastTimestamp))
        var head = HTMLStyle.head(title: title + (month.map { " · \($0)" } ?? ""))
        head += TranscriptHTML.conversationHeader(
            backLink: HTMLText.relativeLink(up + "index.html"), avatar: peerAvatar, title: title,
            details: TranscriptHTML.conversationDetails(title: title, conversation: slice.conversation, account: slice.account,
                                                        month: month, clock: context.clock))
        head += "<main>\n"
        page.append(head)
    }

    private var up: String { String(repeating: "../", count: depth) }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard let page, transcript != nil else { return }
        let up = self.up
        let link: TranscriptHTML.AttachmentLink = { attachment, message, _ in
            try Self.localFile(attachment, of: message, up: up, context: context)
        }
        switch event {
        case .message(let view):
            page.append(try transcript!.render(.message(try view.load()), attachmentLink: link))
            messagesOnPage += 1
            context.messageWritten()
        case .chatState(let state):
            page.append(try transcript!.render(.chatState(state), attachmentLink: link))
            context.summary.chatStates += 1
        case .presence(let presence):
            page.append(try transcript!.render(.presence(presence), attachmentLink: link))
            context.summary.presenceChanges += 1
        }
    }

    /// A picture larger than this (bytes, or pixels on its longer side) is shown through a thumbnail.
    static let thumbnailAboveBytes: Int64 = 1_000_000
    static let thumbnailAbovePixels = 1600
    static let thumbnailSide = 1024

    /// The copy of an attachment beside the export; for a picture, its size and (when large) a thumbnail.
    private static func localFile(_ attachment: AttachmentRecord, of message: MessageRow, up: String,
                                  context: ExportContext) throws -> TranscriptHTML.LocalFile? {
        guard let copy = try context.attachments?.copy(attachment, of: message) else { return nil }
        var local = TranscriptHTML.LocalFile(href: HTMLText.relativeLink(up + copy))
        guard attachment.isImage, let source = attachment.localPath else { return local }
        local.image = local.href
        if let maker = context.options.thumbnails, let (width, height) = maker.dimensions(of: source) {
            (local.width, local.height) = (width, height)
            if (attachment.size ?? 0) > thumbnailAboveBytes || max(width, height) > thumbnailAbovePixels,
               let thumbnail = try context.attachments?.thumbnail(of: source, named: copy, maker: maker, maxSide: thumbnailSide) {
                local.image = HTMLText.relativeLink(up + thumbnail.link)
                (local.width, local.height) = (thumbnail.width, thumbnail.height)
            }
        }
        return local
    }

    func endConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        guard let page else { return }
        if messagesOnPage == 0 { page.append("<p class=\"event\">No messages.</p>\n") }
        page.append("</main>\n</body>\n</html>\n")
        entries[entries.count - 1].messages = messagesOnPage
        try context.close(page)
        self.page = nil
        transcript = nil
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
            html += TranscriptHTML.listItem(href: HTMLText.relativeLink(entry.link), avatar: entry.avatar, title: entry.title, detail: detail)
        }
        if open { html += "</ul>\n" }
        if entries.isEmpty { html += "<p class=\"event\">Nothing matched the query.</p>\n" }
        html += "</main>\n</body>\n</html>\n"
        index.append(html)
        try context.close(index)
    }

    private static func fileExtension(_ path: String) -> String {
        let ext = URL(fileURLWithPath: path).pathExtension
        return ext.isEmpty || ext.count > 5 ? "" : "." + ext
    }
}
