import RoostCore
import Foundation

/// The one HTML renderer of conversations. `roost export --format html` and `roost serve` both draw their
/// pages with it: page head, conversation header, day separators, message bubbles, chat-state and presence
/// lines, conversation list entries. They differ only in where links go (a copied file beside the export,
/// or an id on the local server) and in what the web view adds around it (search box, paging, scripts).
package struct TranscriptHTML {
    /// How a page reaches an attachment's locally stored file: the file itself, and for a picture what to show
    /// inline (the file, or a smaller copy) with its size in pixels when known.
    package struct LocalFile {
        package var href: String
        package var image: String?
        package var width: Int?
        package var height: Int?

        package init(href: String, image: String? = nil, width: Int? = nil, height: Int? = nil) {
            self.href = href
            self.image = image
            self.width = width
            self.height = height
        }
    }

    /// Where an attachment's locally stored file is (nil: it is not stored here, link its URL).
    /// Arguments: the attachment, its message, and its position among the message's attachments.
    package typealias AttachmentLink = (AttachmentRecord, MessageRow, Int) throws -> LocalFile?

    let clock: ZoneClock
    let contacts: ContactDirectory
    let accountID: Int64
    /// Shown beside the peer's messages in a one-to-one chat (`avatar(name:key:link:)`).
    let peerAvatar: String
    /// Marks the words of a search in message text (`<mark>`); nil shows the text as it is.
    package var highlighter: Highlighter?
    /// The day of the last event rendered, so the next one gets a separator only on a new day.
    package private(set) var currentDay: String?
    /// The sender of the last incoming message, whose name is not repeated on a run of bubbles.
    package private(set) var lastSender: String?

    init(clock: ZoneClock, contacts: ContactDirectory, accountID: Int64, peerAvatar: String,
         currentDay: String? = nil, lastSender: String? = nil) {
        self.clock = clock
        self.contacts = contacts
        self.accountID = accountID
        self.peerAvatar = peerAvatar
        self.currentDay = currentDay
        self.lastSender = lastSender
    }

    /// The day separator when `event` starts a new day, then the event itself. `extraMeta` is appended
    /// (as HTML) to a message's time line, e.g. the web view's "in context" link.
    package mutating func render(_ event: TranscriptEvent, attachmentLink: AttachmentLink, extraMeta: String = "") rethrows -> String {
        let time = clock.civil(event.timestamp)
        var html = ""
        if time.dateText != currentDay {
            currentDay = time.dateText
            lastSender = nil
            html += "<div class=\"day\"><span>\(HTMLText.escape(time.longDateText))</span></div>\n"
        }
        switch event {
        case .message(let message):
            html += try messageHTML(message, time: time, attachmentLink: attachmentLink, extraMeta: extraMeta)
        case .chatState(let state):
            let who = TranscriptPhrases.stateSender(state, accountID: accountID, contacts: contacts)
            html += "<div class=\"event\">\(time.minuteText) · \(HTMLText.escape(TranscriptPhrases.chatState(state, who: who)))</div>\n"
        case .presence(let presence):
            let who = TranscriptPhrases.presenceSender(presence, accountID: accountID, contacts: contacts)
            html += "<div class=\"event\">\(time.minuteText) · \(HTMLText.escape(TranscriptPhrases.presence(presence, who: who)))</div>\n"
        }
        return html
    }

    private mutating func messageHTML(_ message: MessageRow, time: CivilTime, attachmentLink: AttachmentLink,
                                      extraMeta: String) rethrows -> String {
        // The user's own messages on the right, in a room as in a chat (from any of the user's clients, or under
        // the user's nick there); someone else's room message that names the user is marked as a mention.
        let outgoing = contacts.isOwn(message, accountID: accountID)
        let mention = !outgoing && contacts.mentionsUser(message, accountID: accountID)
        let sender = contacts.sender(of: message, accountID: accountID)
        // In a room each occupant keeps one colour, from the nick (as Gajim and Profanity colour nicks, XEP-0392).
        // Not from the occupant id: subject changes, our own sent messages and older history come without one,
        // and the same person would change colour within a page.
        let occupantKey = message.kind == .groupchat ? sender : message.from
        var html = "<div class=\"msg \(outgoing ? "out" : "in")\(mention ? " mention" : "")\" id=\"m\(message.id)\">"
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
                html += "<div class=\"name occupant\" style=\"--hue:\(HTMLText.hue(occupantKey))\">\(HTMLText.name(sender))</div>"
            } else {
                html += "<div class=\"name\">\(HTMLText.name(sender))</div>"
            }
        }
        lastSender = outgoing ? nil : sender
        let semantics = message.semantics
        if let context = semantics.replyContext {
            let target = semantics.reply?.messageRow.map { " href=\"#m\($0)\"" } ?? ""
            html += "<a class=\"reply\"\(target)>\(HTMLText.escape(context))</a>"
        }
        if let tombstone = semantics.tombstone(time: { let t = clock.civil($0); return "\(t.dateText) \(t.minuteText)" }) {
            html += "<div class=\"tombstone\">\(HTMLText.escape(tombstone))</div>"
        }
        let retracted = message.retracted && message.body == nil
        let body = retracted ? nil : TranscriptPhrases.shownBody(of: message)
        if let body, let highlighter, !highlighter.terms.isEmpty {
            html += "<div class=\"text\">\(Self.highlighted(body, highlighter))\(HTMLText.escape(TranscriptPhrases.encryptionMark(for: message)))</div>"
        } else {
            let text = (body ?? (retracted || message.body != nil ? "" : TranscriptPhrases.placeholder(for: message)))
                + TranscriptPhrases.encryptionMark(for: message)
            // XEP-0393 styling of the body, its addresses as links; placeholders are shown as they are.
            let shown = body != nil ? MessageStyling.html(text, escape: { HTMLText.linkified($0) }) : HTMLText.escape(text)
            if !text.isEmpty { html += "<div class=\"text\">\(shown)</div>" }
        }
        for (index, attachment) in message.attachments.enumerated() {
            html += Self.attachmentHTML(attachment, local: try attachmentLink(attachment, message, index))
        }
        if message.versions.count > 1, !message.retracted || message.body != nil {
            html += "<details class=\"revisions\"><summary>edited</summary><ol>"
            for revision in message.versions.dropLast() {
                html += "<li>\(HTMLText.escape(revision.body ?? ""))</li>"
            }
            html += "</ol></details>"
        }
        if let reactions = semantics.reactionSummary { html += "<div class=\"reactions\">\(HTMLText.escape(reactions))</div>" }
        html += "<div class=\"meta\"><time datetime=\"\(time.rfc3339)\">\(time.minuteText)</time>"
        if message.edited { html += " · edited" }
        if let progress = semantics.peerProgress { html += " <span class=\"tick \(progress.rawValue)\" title=\"\(progress.rawValue)\">\(semantics.tick)</span>" }
        html += extraMeta
        html += "</div></div></div>\n"
        return html
    }

    /// A file of a message: the local copy (a picture inline), else its web link, else the URL as text.
    private static func attachmentHTML(_ attachment: AttachmentRecord, local: LocalFile?) -> String {
        let label = HTMLText.name(attachment.displayName)
        let size = attachment.size.map { " <span class=\"size\">\(FileSize.text($0))</span>" } ?? ""
        if let local {
            let link = HTMLText.escape(local.href)
            if attachment.isImage, let image = local.image {
                var dimensions = ""
                if let width = local.width, let height = local.height { dimensions = " width=\"\(width)\" height=\"\(height)\"" }
                return "<a class=\"file\" href=\"\(link)\"><img src=\"\(HTMLText.escape(image))\" alt=\"\(label)\"\(dimensions) loading=\"lazy\"></a>"
            }
            return "<a class=\"file\" href=\"\(link)\">\(label)</a>\(size)"
        }
        if HTMLText.isSafeExternalURL(attachment.url) {
            return HTMLText.externalLink(attachment.url, label: label, attributes: " class=\"file\"") + size
        }
        return "<span class=\"file\">\(HTMLText.escape(attachment.url))</span>"
    }

    /// `text` escaped, with the highlighter's matches in `<mark>` (and its addresses as links).
    static func highlighted(_ text: String, _ highlighter: Highlighter) -> String {
        HTMLText.linkified(text, marks: highlighter.ranges(in: text))
    }

    // MARK: Page parts

    /// The sticky header of a conversation page: back link, avatar, title, and a line of details (each
    /// already escaped HTML). `extra` goes last inside the header (the web view's search box).
    package static func conversationHeader(backLink: String, avatar: String, title: String, details: [String],
                                           extra: String = "") -> String {
        var html = "<header class=\"top\"><a class=\"back\" href=\"\(HTMLText.escape(backLink))\" aria-label=\"All conversations\">‹</a>"
        html += avatar
        html += "<div><h1>\(HTMLText.name(title))</h1><div class=\"sub\">"
        html += details.joined(separator: " · ")
        html += "</div></div>\(extra)</header>\n"
        return html
    }

    /// The details line of a conversation header: address (when a name is shown), account, month, time zone.
    static func conversationDetails(title: String, conversation: String, account: String, month: String?, clock: ZoneClock) -> [String] {
        var details: [String] = []
        if title != conversation { details.append(HTMLText.escape(conversation)) }
        details.append("account \(HTMLText.escape(account))" + (month.map { " · \($0)" } ?? ""))
        details.append("times in \(HTMLText.escape(TranscriptPhrases.zoneName(clock)))")
        return details
    }

    /// One entry of a conversation list: avatar, title, and a details line (already escaped HTML).
    /// `badge`: HTML after the title (the web view's unread count).
    package static func listItem(href: String, avatar: String, title: String, detail: String, attributes: String = "", badge: String = "") -> String {
        "<li\(attributes)><a href=\"\(HTMLText.escape(href))\">\(avatar)"
            + "<span><span class=\"title\">\(HTMLText.name(title))</span>\(badge)<br><span class=\"detail\">\(detail)</span></span></a></li>\n"
    }

    /// A contact's picture, or its initial on a colour derived from `key` (a JID) when there is none.
    package static func avatar(name: String, key: String, link: String?) -> String {
        if let link {
            return "<img class=\"avatar\" src=\"\(HTMLText.escape(link))\" alt=\"\">"
        }
        return "<span class=\"avatar\" style=\"background:hsl(\(HTMLText.hue(key)),45%,42%)\" aria-hidden=\"true\">\(HTMLText.escape(HTMLText.initial(name)))</span>"
    }
}
