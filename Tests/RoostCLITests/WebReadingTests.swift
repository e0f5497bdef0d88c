import Foundation
import Testing
import RoostArchive
import RoostTestSupport

/// Issue 30, item 9: reading history as in a chat client — in the web view (`roost serve`) and the HTML export,
/// both in headless Chromium (contrib/scripts/browser-check.py): addresses in messages are links (and nothing a
/// message holds becomes markup or script), the user's own room messages are on the right, messages naming the user
/// are marked, rooms go by their names, the search box searches as you type (the same results as `roost search`);
/// and `roost log` on a terminal opens at the newest messages.
@Suite("The web view and HTML export read like a chat client", .serialized)
struct WebReadingTests {
    static let room = "planning@conference.example"
    static let roomName = "Planning & <Co>"
    /// The user's nick in the room (the bookmark's, and the one Roost uses there).
    static let nick = "Sam"
    static let links = "see https://example.org/a?b=1&c=2, xmpp:\(room)?join (https://en.wikipedia.org/wiki/Foo_(bar)). "
        + "javascript:alert(1) https://evil.example/\"onmouseover=\"alert(1)\" <a href=\"https://x.example/\">x</a> "
        + "https://q.example/'quoted' data:text/html,<script>alert(2)</script> xhttp://glued.example"
    /// What the links of `links` must be, in order: each address up to where it ends (a quote, an angle bracket, the
    /// sentence's punctuation, a parenthesis it did not open), never javascript: or data:, never glued to a word.
    static let expectedLinks = ["https://example.org/a?b=1&c=2", "xmpp:\(room)?join", "https://en.wikipedia.org/wiki/Foo_(bar)",
                                "https://evil.example/", "https://x.example/", "https://q.example/"]

    static func roomMessage(_ body: String, seconds: Int64, nick: String, outgoing: Bool = false) -> ArchiveEvent {
        .message(MessageRecord(account: WebSandbox.account, conversation: room, direction: outgoing ? .outgoing : .incoming, kind: .groupchat,
                               from: room + "/" + nick, to: WebSandbox.account, senderName: nick, body: body,
                               timestamp: WebSandbox.t0 + seconds * 1000, stanzaId: "s-\(UUID().uuidString)", stanzaIdBy: room,
                               stanzaIdTrusted: true, messageId: UUID().uuidString))
    }

    /// A one-to-one chat with links, and a room: bookmarked under a name with markup, the user there as `Sam`.
    func sandbox() throws -> WebSandbox {
        let sandbox = try WebSandbox("roost-reading")
        let t = WebSandbox.t0
        try sandbox.commit([
            WebSandbox.message(Self.links, seconds: 0),
            WebSandbox.message("plain words, no address: 10:30 at the station", seconds: 1),
            .room(RoomUpdate(account: WebSandbox.account, room: Self.room,
                             change: .bookmark(present: true, name: Self.roomName, nick: Self.nick, autojoin: true, hasPassword: false), timestamp: t)),
            .room(RoomUpdate(account: WebSandbox.account, room: Self.room,
                             change: .joined(nick: Self.nick, occupantID: nil, mam: true, nonAnonymous: false), timestamp: t)),
            Self.roomMessage("hello all", seconds: 10, nick: "bob"),
            Self.roomMessage("mine, sent by roost", seconds: 11, nick: Self.nick, outgoing: true),
            // As another client's log imports it: received, under the user's nick.
            Self.roomMessage("mine, from my phone", seconds: 12, nick: Self.nick),
            Self.roomMessage("sam, look at https://example.org/room", seconds: 13, nick: "carol"),
            Self.roomMessage("samuel is not sam_x", seconds: 14, nick: "carol"),
            Self.roomMessage("ask ME later", seconds: 15, nick: "dave"),
        ])
        return sandbox
    }

    /// browser-check.py's steps, in order (a failed run is a failed test, with its output).
    func browserCheck(_ arguments: [String]) throws -> [[String: Any]] {
        let running = try RoostBinary.startProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/browser-check.py"] + arguments)
        running.waitForExit(timeout: 180)
        let (status, output) = running.stop(signal: SIGKILL, timeout: 1)
        let steps = output.split(separator: "\n").filter { $0.hasPrefix("{\"step\"") }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(status == 0 && !steps.contains { $0["step"] as? String == "failed" }, "browser-check failed (\(status)):\n\(output.suffix(4000))")
        return steps
    }

    /// What both renderings must show of the chat with links and of the room.
    func checkPages(_ steps: [[String: Any]], chat: String, room: String, _ where_: String) {
        let reads = Dictionary(steps.filter { $0["step"] as? String == "read" }.map { ($0["page"] as? String ?? "", $0) }) { a, _ in a }
        guard let chatPage = reads[chat], let roomPage = reads[room] else {
            Issue.record("\(where_): pages not read: \(steps)")
            return
        }
        for page in [chatPage, roomPage] {
            #expect(page["on_attributes"] as? Int == 0 && page["javascript_links"] as? Int == 0 && page["markup"] as? Int == 0,
                    "\(where_): nothing a message holds became markup, an event handler or a script link: \(page)")
            #expect((page["scripts"] as? [String?] ?? []).allSatisfy { $0 == "/static/roost.js" }, "\(where_): \(page["scripts"] ?? "")")
        }
        // Links: exactly these addresses, each an <a> that tells the site nothing (web addresses in a tab of their own).
        let links = chatPage["links"] as? [[String: Any]] ?? []
        #expect(links.map { $0["href"] as? String ?? "" } == Self.expectedLinks, "\(where_): \(links)")
        #expect(links.map { $0["text"] as? String ?? "" } == Self.expectedLinks, "\(where_): a link shows its address")
        #expect(links.allSatisfy { $0["rel"] as? String == "noopener noreferrer" }, "\(where_): \(links)")
        #expect(links.allSatisfy { ($0["target"] as? String == "_blank") == ($0["href"] as? String ?? "").hasPrefix("http") }, "\(where_): \(links)")
        let chatMessages = chatPage["messages"] as? [[String: Any]] ?? []
        #expect(chatMessages.first?["text"] as? String == Self.links, "\(where_): the text reads as it was written")
        #expect(chatMessages.allSatisfy { ($0["classes"] as? [String])?.contains("mention") == false }, "\(where_): no mentions in a chat")

        // The room: under its name; the user's own messages on the right in the outgoing colour; mentions marked.
        #expect(roomPage["title"] as? String == Self.roomName, "\(where_): \(roomPage["title"] ?? "")")
        let messages = roomPage["messages"] as? [[String: Any]] ?? []
        func message(_ text: String) -> [String: Any] { messages.first { $0["text"] as? String == text } ?? [:] }
        func classes(_ text: String) -> [String] { message(text)["classes"] as? [String] ?? [] }
        for own in ["mine, sent by roost", "mine, from my phone"] {
            #expect(classes(own).contains("out") && message(own)["direction"] as? String == "row-reverse", "\(where_): \(own): \(message(own))")
            #expect(message(own)["name"] is NSNull, "\(where_): the user's own bubble carries no name, as in a chat: \(message(own))")
        }
        #expect(message("mine, sent by roost")["background"] as? String == message("mine, from my phone")["background"] as? String
                && message("hello all")["background"] as? String != message("mine, sent by roost")["background"] as? String, "\(where_): \(messages)")
        for other in ["hello all", "samuel is not sam_x"] {
            #expect(classes(other) == ["msg", "in"], "\(where_): \(other): \(classes(other))")
        }
        for named in ["sam, look at https://example.org/room", "ask ME later"] {
            #expect(classes(named) == ["msg", "in", "mention"], "\(where_): \(named): \(classes(named))")
        }
        let mention = message("sam, look at https://example.org/room")["background"] as? String
        #expect(mention != nil && mention != message("hello all")["background"] as? String, "\(where_): a mention is drawn apart: \(messages)")
        #expect((roomPage["links"] as? [[String: Any]])?.map { $0["href"] as? String } == ["https://example.org/room"], "\(where_)")
    }

    @Test func theWebViewLinksMarksAndNamesAndSearchesAsYouType() async throws {
        let sandbox = try sandbox()
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let account = try sandbox.accountID()
        let chat = "/c?a=\(account)&j=alice%40example.com", room = "/c?a=\(account)&j=planning%40conference.example"
        let query = "is:muc -samuel"
        let steps = try browserCheck(["--url", served.url, "--read", "/", "--read", chat, "--read", room,
                                      "--read", "/search?q=example.org", "--type-search", query])
        checkPages(steps, chat: chat, room: room, "web view")
        let list = steps.first { $0["page"] as? String == "/" }
        #expect((list?["list"] as? [String])?.contains(Self.roomName) == true, "the list names the room: \(list?["list"] ?? "")")

        // Search results: the words marked inside the links, which stay links.
        let search = steps.first { $0["page"] as? String == "/search?q=example.org" }
        let found = search?["links"] as? [[String: Any]] ?? []
        #expect(found.compactMap { $0["href"] as? String }.sorted() == (Self.expectedLinks + ["https://example.org/room"]).sorted(), "\(found)")
        #expect(found.allSatisfy { $0["rel"] as? String == "noopener noreferrer" }, "\(found)")
        let matched = found.filter { ($0["href"] as? String ?? "").hasPrefix("https://example.org/") }
        #expect(matched.count == 2 && matched.allSatisfy { ($0["marks"] as? [String] ?? []).contains { $0.lowercased().contains("example") } }, "\(matched)")

        // Typed, not entered: the same messages as `roost search`, in the same order, without leaving the page.
        let typed = try #require(steps.first { $0["step"] as? String == "typed" })
        let cli = try RoostBinary.run(["search", "--config", sandbox.config, "--json", query])
        #expect(cli.status == 0, "\(cli.stderr)")
        let expected = cli.jsonLines.compactMap { ($0["id"] as? Int).map { "m\($0)" } }
        #expect(expected.count == 5, "\(cli.stdout)")
        #expect(typed["hits"] as? [String] == expected, "typed: \(typed)\nroost search: \(expected)")
        #expect(typed["stayed"] as? Bool == true && typed["list_hidden"] as? Bool == true && typed["notice"] is NSNull, "\(typed)")
        #expect(typed["entered"] as? [String] == expected && typed["entered_query"] as? String == query, "Enter still opens the results: \(typed)")
        #expect(typed["restored"] as? Bool == true, "Esc brings the list back: \(typed)")
        #expect((steps.first { $0["step"] as? String == "console" }?["problems"] as? [String])?.isEmpty == true, "\(steps.last ?? [:])")
    }

    @Test func theHTMLExportLinksMarksAndNames() async throws {
        let sandbox = try sandbox()
        let output = sandbox.directory.path + "/site"
        let export = try RoostBinary.run(["export", "--config", sandbox.config, "--format", "html", "--output", output])
        #expect(export.status == 0, "\(export.stderr)")
        let pages = (FileManager.default.enumerator(atPath: output)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".html") }
        let chat = try #require(pages.first { $0.hasSuffix("alice@example.com.html") }, "\(pages)")
        let room = try #require(pages.first { $0.hasSuffix("\(Self.room).html") }, "\(pages)")
        let steps = try browserCheck(["--url", "file://" + output + "/index.html", "--read", "index.html", "--read", chat, "--read", room])
        checkPages(steps, chat: chat, room: room, "html export")
        let index = steps.first { $0["page"] as? String == "index.html" }
        #expect((index?["list"] as? [String])?.contains(Self.roomName) == true, "the index names the room: \(index?["list"] ?? "")")
        #expect((steps.first { $0["step"] as? String == "console" }?["problems"] as? [String])?.isEmpty == true, "\(steps.last ?? [:])")
    }

    // MARK: roost log on a terminal

    /// `roost log` on a terminal (a pty of 24 rows) with the default pager: a long conversation opens at its newest
    /// messages, in less (the older ones a scroll up); a short one is printed as it is, with nothing around it.
    @Test func logOnATerminalOpensAtTheNewestMessages() async throws {
        let sandbox = try WebSandbox("roost-log-tty")
        try sandbox.commit((1...300).map { WebSandbox.message(String(format: "message %03d", $0), seconds: Int64($0)) }
                           + (1...3).map { WebSandbox.message("short \($0)", seconds: Int64(400 + $0), peer: "bob@example.com") })
        func screen(_ who: String) throws -> [String: Any] {
            var environment = ProcessInfo.processInfo.environment
            for name in ["PAGER", "LESS", "LINES", "COLUMNS", "NO_COLOR"] { environment[name] = nil }
            environment["TERM"] = "xterm"
            let result = try RoostBinary.runProgram("/usr/bin/python3", [FilesKit.fixtures + "terminal_screen.py", "24", "80", "--",
                                                                         RoostBinary.path, "log", "--config", sandbox.config, who],
                                                    environment: environment, timeout: 60)
            return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stderr)")
        }
        let long = try screen("alice@example.com")
        let shown = long["output"] as? String ?? ""
        #expect(long["running_at_q"] as? Bool == true && long["status"] as? Int == 0, "less waited to be left: \(long)")
        #expect(shown.contains("message 300") && shown.contains("message 280"), "the newest messages are on the screen: \(shown.suffix(3000))")
        #expect(!shown.contains("message 001") && !shown.contains("message 250"), "the oldest are not: \(shown.prefix(3000))")

        let short = try screen("bob@example.com")
        let text = short["output"] as? String ?? ""
        #expect(short["running_at_q"] as? Bool == false && short["status"] as? Int == 0, "a conversation that fits needs no pager: \(short)")
        #expect(text.contains("short 1") && text.contains("short 3"), "\(text)")
        #expect(!text.contains("~") && !text.contains("\u{1B}[?1h"), "printed as it is, no pager's filler or keypad mode: \(text.debugDescription)")
    }
}
