import Foundation
import RoostArchive

/// The web view's routes, as links (`BrowseLinks` for the archive's pages, and the server's own).
struct WebLinks: BrowseLinks {
    /// Whether the server makes smaller copies of large pictures (`/preview/…`).
    var previews = false

    func conversation(accountID: Int64, jid: String, at messageID: Int64?) -> String {
        "/c?a=\(accountID)&j=\(Self.encode(jid))" + (messageID.map { "&at=\($0)" } ?? "")
    }

    func attachment(messageID: Int64, index: Int) -> String { "/file/\(messageID)/\(index)" }

    func preview(messageID: Int64, index: Int) -> String? { previews ? "/preview/\(messageID)/\(index)" : nil }

    func avatar(accountID: Int64, jid: String) -> String { "/avatar?a=\(accountID)&j=\(Self.encode(jid))" }

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~@")
}

/// One conversation page as asked for: which conversation, where, and which timelines are shown.
struct ConversationRequest {
    var accountID: Int64
    var jid: String
    var position: ArchiveBrowser.PagePosition
    var states: Bool
    var presence: Bool

    init?(query: [String: String]) {
        guard let account = query["a"].flatMap({ Int64($0) }), let jid = query["j"], !jid.isEmpty, jid.utf8.count <= 3071 else { return nil }
        accountID = account
        self.jid = jid
        if let id = query["before"].flatMap({ Int64($0) }) {
            position = .before(id)
        } else if let id = query["after"].flatMap({ Int64($0) }) {
            position = .after(id)
        } else if let id = query["at"].flatMap({ Int64($0) }) {
            position = .around(id)
        } else {
            position = .newest
        }
        states = query["states"] == "1"
        presence = query["presence"] == "1"
    }

    /// The page's address with another position or other timelines.
    func url(_ position: ArchiveBrowser.PagePosition? = nil, states: Bool? = nil, presence: Bool? = nil) -> String {
        var url = WebLinks().conversation(accountID: accountID, jid: jid, at: nil)
        switch position ?? .newest {
        case .newest: break
        case .before(let id): url += "&before=\(id)"
        case .after(let id): url += "&after=\(id)"
        case .around(let id): url += "&at=\(id)"
        }
        if states ?? self.states { url += "&states=1" }
        if presence ?? self.presence { url += "&presence=1" }
        return url
    }

    /// The Server-Sent Events stream continuing the newest page.
    func liveURL(after cursor: ArchiveBrowser.LiveCursor) -> String {
        var url = "/events?a=\(accountID)&j=\(WebLinks.encode(jid))&after=\(cursor.afterID)&since=\(cursor.afterTimestamp)"
            + "&marks=\(LiveHub.marksText(cursor.marks))"
        if states { url += "&states=1" }
        if presence { url += "&presence=1" }
        return url
    }
}

/// The web view's pages around the archive's own HTML (`ArchiveBrowser`, drawn with the export's renderer).
enum WebPages {
    static func head(title: String, extra: String = "") -> String {
        HTMLStyle.head(title: title, policy: WebAssets.pagePolicy, generator: "roost serve",
                       extra: "<style>\n\(WebAssets.css)\n</style>\n<script src=\"/static/roost.js\" defer></script>\n" + extra)
    }

    static let tail = "</body>\n</html>\n"

    static func searchForm(_ query: String) -> String {
        "<form class=\"search\" action=\"/search\" method=\"get\" role=\"search\"><input type=\"search\" name=\"q\" value=\"\(HTMLText.escape(query))\""
            + " placeholder=\"Search ( / )\" aria-label=\"Search the archive\" autocomplete=\"off\"></form>"
    }

    static func topBar(title: String, sub: String, query: String) -> String {
        "<header class=\"top\"><div><h1>\(HTMLText.escape(title))</h1><div class=\"sub\">\(sub)</div></div>\(searchForm(query))</header>\n"
    }

    // MARK: Conversation list

    static func listFragment(_ entries: [ArchiveBrowser.ConversationEntry]) -> String {
        var html = "<ul class=\"conversations\" data-live=\"/events?list=1\">\n"
        for entry in entries { html += entry.html }
        return html + "</ul>\n"
    }

    static func list(_ entries: [ArchiveBrowser.ConversationEntry], archive: String) -> String {
        let rooms = entries.filter(\.isRoom).count
        var sub = "\(entries.count) conversation\(entries.count == 1 ? "" : "s")"
        if rooms > 0 { sub += " (\(rooms) room\(rooms == 1 ? "" : "s"))" }
        sub += " · " + HTMLText.escape(archive)
        var html = head(title: "Roost") + topBar(title: "Roost", sub: sub, query: "") + "<main>\n"
        if entries.isEmpty {
            html += "<p class=\"notice\">The archive holds no messages yet. Run <code>roost run</code> to archive your accounts, "
                + "or <code>roost import</code> an export.</p>\n"
        }
        html += listFragment(entries)
        return html + "</main>\n" + tail
    }

    // MARK: One conversation

    static func conversation(_ page: ArchiveBrowser.TranscriptPage, request: ConversationRequest, formToken: String) -> String {
        var html = head(title: page.title)
        html += TranscriptHTML.conversationHeader(backLink: "/", avatar: page.avatar, title: page.title,
                                                  details: page.details,
                                                  extra: searchForm(""))
        html += "<nav class=\"tools\">"
        html += "<a href=\"\(HTMLText.escape(request.url(states: !request.states)))\">\(request.states ? "Hide" : "Show") chat states</a>"
        html += "<a href=\"\(HTMLText.escape(request.url(presence: !request.presence)))\">\(request.presence ? "Hide" : "Show") presence</a>"
        html += "<form method=\"post\" action=\"/export\"><input type=\"hidden\" name=\"csrf\" value=\"\(HTMLText.escape(formToken))\">"
        html += "<input type=\"hidden\" name=\"a\" value=\"\(request.accountID)\"><input type=\"hidden\" name=\"j\" value=\"\(HTMLText.escape(request.jid))\">"
        if request.states { html += "<input type=\"hidden\" name=\"states\" value=\"1\">" }
        if request.presence { html += "<input type=\"hidden\" name=\"presence\" value=\"1\">" }
        html += "<label>Export as <select name=\"format\">"
        for format in ExportFormat.allCases {
            html += "<option value=\"\(format.rawValue)\"\(format == .html ? " selected" : "")>\(format.rawValue)</option>"
        }
        html += "</select></label><button type=\"submit\">Download</button></form>"
        html += markReadForm(request: request, unread: page.unread, formToken: formToken) + "</nav>\n"
        var attributes = " data-conversation=\"\""
        if page.newer == nil {
            attributes += " data-live=\"\(HTMLText.escape(request.liveURL(after: page.live)))\""
        } else {
            attributes += " data-newer=\"1\""
        }
        html += "<main\(attributes)>\n"
        if let older = page.older {
            html += "<a class=\"more older\" rel=\"prev\" href=\"\(HTMLText.escape(request.url(.before(older))))\">Older messages</a>\n"
        }
        if page.omittedEvents > 0 {
            html += "<p class=\"event\">\(page.omittedEvents)+ more chat states or presence changes in this span are not shown.</p>\n"
        }
        html += page.html
        if page.messageCount == 0 { html += "<p class=\"event\">No messages.</p>\n" }
        if let newer = page.newer {
            html += "<a class=\"more newer\" rel=\"next\" href=\"\(HTMLText.escape(request.url(.after(newer))))\">Newer messages</a>\n"
            html += "<a class=\"more\" href=\"\(HTMLText.escape(request.url()))\">Newest messages</a>\n"
        } else {
            html += "<div id=\"end\"></div>\n"
        }
        return html + "</main>\n" + tail
    }

    /// The conversation's unread count and its "Mark read" button. Viewing a conversation does not mark it read
    /// (see docs/serve.md): the button does, as `roost read` does.
    static func markReadForm(request: ConversationRequest, unread: Int, formToken: String) -> String {
        let shown = unread >= ArchiveBrowser.unreadLimit ? "\(ArchiveBrowser.unreadLimit - 1)+" : String(unread)
        var html = "<form class=\"mark-read\" method=\"post\" action=\"/read\"><input type=\"hidden\" name=\"csrf\" value=\"\(HTMLText.escape(formToken))\">"
        html += "<input type=\"hidden\" name=\"a\" value=\"\(request.accountID)\"><input type=\"hidden\" name=\"j\" value=\"\(HTMLText.escape(request.jid))\">"
        html += "<input type=\"hidden\" name=\"back\" value=\"\(HTMLText.escape(request.url()))\">"
        html += "<span class=\"unread-count\" data-unread=\"\(unread)\">\(unread == 0 ? "no unread messages" : "\(shown) unread")</span>"
        return html + "<button type=\"submit\"\(unread == 0 ? " disabled" : "")>Mark read</button></form>"
    }

    // MARK: Search

    /// `account`: the one account searched (`--account`, `default_account`), named under the title.
    static func search(query: String, results: ArchiveBrowser.SearchResults?, error: QueryError?, before: Int64?,
                       account: String? = nil) -> String {
        var sub = ""
        if let results {
            sub = results.count == 0 ? "no results" : "\(results.count)\(results.next == nil ? "" : "+") result\(results.count == 1 ? "" : "s")"
            if let account { sub += " in account " + HTMLText.escape(account) }
            if before != nil { sub += " (older page)" }
        }
        var html = head(title: query.isEmpty ? "Search" : query + " · Search")
        html += "<header class=\"top\"><a class=\"back\" href=\"/\" aria-label=\"All conversations\">‹</a><div><h1>Search</h1>"
        html += "<div class=\"sub\">\(sub)</div></div>\(searchForm(query))</header>\n<main>\n"
        if let error {
            html += "<p class=\"notice\">Invalid query: \(HTMLText.escape(error.description))</p>\n"
            html += "<pre class=\"caret\">\(HTMLText.escape(error.caretDiagram))</pre>\n"
        }
        if let results {
            html += results.html
            if results.count == 0 { html += "<p class=\"notice\">Nothing matched.</p>\n" }
            if let next = results.next {
                html += "<a class=\"more\" href=\"/search?q=\(WebLinks.encode(query))&amp;before=\(next)\">Older results</a>\n"
            }
        }
        html += syntaxHelp
        return html + "</main>\n" + tail
    }

    static let syntaxHelp = """
        <details class="event"><summary>Query language</summary><p>Words must all appear (any language, Chinese included); \
        <code>"a phrase"</code>, <code>OR</code>, <code>-word</code> or <code>NOT word</code>, <code>prefix*</code>; \
        <code>from:</code> <code>to:</code> <code>with:</code> <code>account:</code> <code>in:</code> (room); \
        <code>date:2026-01-01..2026-02-01</code> <code>after:</code> <code>before:</code> <code>date:7d..</code> \
        <code>today</code> <code>yesterday</code>; <code>is:in</code> <code>is:out</code> <code>is:chat</code> \
        <code>is:muc</code> <code>is:edited</code> <code>has:file</code>.</p></details>

        """

    /// A page that moves on to `location` (a path of this server) at once, by itself (no script needed).
    static func forward(to location: String) -> String {
        let link = HTMLText.escape(location)
        return head(title: "Roost", extra: "<meta http-equiv=\"refresh\" content=\"0;url=\(link)\">\n") + "<main>\n"
            + "<p class=\"notice\"><a href=\"\(link)\">Open the Roost web view</a></p>\n</main>\n" + tail
    }

    // MARK: Errors

    static func message(title: String, text: String) -> String {
        head(title: title) + "<header class=\"top\"><a class=\"back\" href=\"/\" aria-label=\"All conversations\">‹</a><div><h1>"
            + HTMLText.escape(title) + "</h1></div></header>\n<main>\n<p class=\"notice\">" + HTMLText.escape(text) + "</p>\n</main>\n" + tail
    }
}
