import Foundation
import Testing
@testable import RoostArchive

/// The archive side of `roost serve`: the conversation list, keyset pages that cover a conversation exactly
/// once, states and presence on exactly one page, live continuation, search pages with highlights, and the
/// renderer shared with the html export.
@Suite("Archive: browsing for the web view")
struct ArchiveBrowseTests {
    struct Links: BrowseLinks {
        func conversation(accountID: Int64, jid: String, at messageID: Int64?) -> String { "/c/\(accountID)/\(jid)" + (messageID.map { "@\($0)" } ?? "") }
        func attachment(messageID: Int64, index: Int) -> String { "/file/\(messageID)/\(index)" }
        func avatar(accountID: Int64, jid: String) -> String { "/avatar/\(accountID)/\(jid)" }
        func preview(messageID: Int64, index: Int) -> String? { nil }
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// `count` messages with alice, one a minute, plus a chat state and a presence change after every tenth.
    func longConversation(_ scratch: ExportScratch, count: Int) throws -> ArchiveBrowser {
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        var events: [ArchiveEvent] = []
        let t0 = ExportFixture.t0
        for i in 0..<count {
            let time = t0 + Int64(i) * 60_000
            events.append(.message(MessageRecord(
                account: ExportFixture.account, conversation: ExportFixture.alice, direction: i % 3 == 0 ? .outgoing : .incoming,
                kind: .chat, from: i % 3 == 0 ? ExportFixture.account + "/roost" : ExportFixture.alice + "/phone",
                to: i % 3 == 0 ? ExportFixture.alice : ExportFixture.account, body: "message \(i)", timestamp: time,
                stanzaId: "s\(i)", stanzaIdBy: ExportFixture.account, stanzaIdTrusted: true, messageId: "m\(i)", source: .live)))
            if i % 10 == 0 {
                events.append(.chatState(ChatStateRecord(account: ExportFixture.account, conversation: ExportFixture.alice,
                                                         from: ExportFixture.alice + "/phone", state: .composing, timestamp: time + 30_000)))
                events.append(.presence(PresenceRecord(account: ExportFixture.account, contact: ExportFixture.alice, resource: "phone",
                                                       availability: .available, show: "away", status: "s\(i)", timestamp: time + 40_000)))
            }
        }
        _ = try writer.commitBlocking(events)
        return ArchiveBrowser(reader: try ArchiveReader(path: scratch.archive), links: Links(), timeZone: Self.utc)
    }

    func bodies(_ html: String) -> [String] {
        html.components(separatedBy: "<div class=\"text\">").dropFirst().map { String($0.prefix { $0 != "<" }) }
    }

    @Test func pagesBackwardsCoverTheConversationOnceWithEveryStateOnOnePage() throws {
        let scratch = ExportScratch()
        let browser = try longConversation(scratch, count: 123)
        let account = try #require(try browser.accounts().first?.key)
        var seen: [String] = []
        var states = 0, presence = 0
        var position = ArchiveBrowser.PagePosition.newest
        var pages = 0
        while true {
            let page = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: position, states: true, presence: true))
            seen = bodies(page.html) + seen
            states += page.html.components(separatedBy: "is typing").count - 1
            presence += page.html.components(separatedBy: "is away").count - 1
            pages += 1
            if pages == 1 { #expect(page.newer == nil && page.messageCount == 50) }
            guard let older = page.older else { break }
            position = .before(older)
        }
        #expect(pages == 3)
        #expect(seen == (0..<123).map { "message \($0)" }, "every message once, in order")
        #expect(states == 13 && presence == 13, "each state and presence change on exactly one page")

        // Forwards again from the oldest page, and a page around a message in the middle.
        let oldest = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .after(0), states: false, presence: false))
        #expect(bodies(oldest.html).first == "message 0" && oldest.older == nil && oldest.newer != nil)
        let target = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .newest, states: false, presence: false))
        let aroundID = try #require(target.older)
        let around = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .around(aroundID), states: false, presence: false))
        #expect(around.html.contains("id=\"m\(aroundID)\"") && around.older != nil && around.newer != nil)
        // Paging past the end shows the newest page instead of nothing; an unknown conversation is nil.
        let past = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .after(Int64.max - 1), states: false, presence: false))
        #expect(past.newer == nil && past.messageCount == 50)
        #expect(try browser.transcript(accountID: account, jid: "nobody@example.com", position: .newest, states: false, presence: false) == nil)
        #expect(try browser.transcript(accountID: 999, jid: ExportFixture.alice, position: .newest, states: false, presence: false) == nil)
    }

    @Test func liveContinuesAfterThePageWithoutRepeatingIt() throws {
        let scratch = ExportScratch()
        let browser = try longConversation(scratch, count: 5)
        let account = try #require(try browser.accounts().first?.key)
        let page = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .newest, states: true, presence: true))
        #expect(try browser.live(accountID: account, jid: ExportFixture.alice, after: page.live, states: true, presence: true) == nil)
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        _ = try writer.commitBlocking([.message(MessageRecord(
            account: ExportFixture.account, conversation: ExportFixture.alice, direction: .incoming, kind: .chat,
            from: ExportFixture.alice + "/phone", to: ExportFixture.account, body: "<img src=x onerror=alert(1)> new",
            timestamp: ExportFixture.t0 + 3_600_000, stanzaId: "late", stanzaIdBy: ExportFixture.account, stanzaIdTrusted: true,
            messageId: "late", source: .live))])
        let update = try #require(try browser.live(accountID: account, jid: ExportFixture.alice, after: page.live, states: true, presence: true))
        #expect(bodies(update.html) == ["&lt;img src=x onerror=alert(1)&gt; new"], "escaped, and only the new message")
        #expect(!update.html.contains("class=\"day\""), "same day as the page: no second day heading")
        #expect(update.changed.isEmpty)
        #expect(try browser.live(accountID: account, jid: ExportFixture.alice, after: update.cursor, states: true, presence: true) == nil)
    }

    /// A correction, a retraction and a reaction to messages already on the page come back as those messages drawn
    /// anew (same element id, the sender's name exactly where the page had it); nothing is added at the end.
    @Test func liveRedrawsMessagesThatWereCorrectedRetractedOrReactedTo() throws {
        let scratch = ExportScratch()
        let browser = try longConversation(scratch, count: 6)
        let account = try #require(try browser.accounts().first?.key)
        let page = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .newest, states: false, presence: false))
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        var fix = MessageRecord(account: ExportFixture.account, conversation: ExportFixture.alice, direction: .incoming, kind: .chat,
                                from: ExportFixture.alice + "/phone", to: ExportFixture.account, body: "message 4, corrected",
                                timestamp: ExportFixture.t0 + 3_600_000, messageId: "fix4", source: .live)
        fix.replaces = "m4"
        _ = try writer.commitBlocking([.message(fix)])
        let corrected = try #require(try browser.live(accountID: account, jid: ExportFixture.alice, after: page.live, states: false, presence: false))
        #expect(corrected.html.isEmpty, "a correction adds nothing at the end")
        #expect(bodies(corrected.changed) == ["message 4, corrected"], "\(corrected.changed)")
        let m4 = try #require(page.html.components(separatedBy: "<div class=\"msg ").first { $0.contains(">message 4<") })
        let m4Element = "<div class=\"msg " + m4
        // The redrawn element is the page's element with the new text: same id, same name (message 4 follows message 3,
        // an outgoing one, so the page named alice), same avatar.
        #expect(corrected.changed.contains(String(m4Element.prefix { $0 != ">" })), "same element id and classes")
        #expect(corrected.changed.contains("<div class=\"name\">") == m4Element.contains("<div class=\"name\">"))
        #expect(corrected.changed.contains("edited"))
        // Message 5 follows message 4 from the same sender: its redrawn copy, like the page, does not repeat her name.
        _ = try writer.commitBlocking([.annotation(MessageAnnotation(account: ExportFixture.account, conversation: ExportFixture.alice, kind: .retraction,
                                                             target: "m5", from: ExportFixture.alice + "/phone", direction: .incoming,
                                                             groupchat: false, occupantId: nil, senderName: nil,
                                                             timestamp: ExportFixture.t0 + 3_700_000, source: .live, messageId: "r5",
                                                             keepRetractedText: false))])
        let retracted = try #require(try browser.live(accountID: account, jid: ExportFixture.alice, after: corrected.cursor, states: false, presence: false))
        #expect(retracted.html.isEmpty && retracted.changed.contains("class=\"tombstone\"") && !retracted.changed.contains("message 5"), "\(retracted.changed)")
        #expect(!retracted.changed.contains("<div class=\"name\">"), "the run of bubbles goes on: no name, as on the page")
        #expect(!retracted.changed.contains("message 4"), "only what changed since the last update")
        #expect(try browser.live(accountID: account, jid: ExportFixture.alice, after: retracted.cursor, states: false, presence: false) == nil)
        // A page drawn now knows these marks already.
        let fresh = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .newest, states: false, presence: false))
        #expect(fresh.live.marks == retracted.cursor.marks)
    }

    /// Unread counts as `roost read` keeps them: counted per conversation in the list and on the page, unchanged by
    /// viewing, cleared by `conversationRead` (what `roost read` and the web view's button commit).
    @Test func unreadCountsFollowTheReadState() throws {
        let scratch = ExportScratch()
        let browser = try longConversation(scratch, count: 9)
        let account = try #require(try browser.accounts().first?.key)
        // 0, 3, 6 are outgoing (and move the read mark to themselves): 7 and 8 are unread.
        let entry = try #require(try browser.conversations().first { $0.jid == ExportFixture.alice })
        #expect(entry.unread == 2)
        #expect(entry.html.contains("<span class=\"count\" title=\"2 unread\"") && entry.html.contains("class=\"unread\""), "\(entry.html)")
        let page = try #require(try browser.transcript(accountID: account, jid: ExportFixture.alice, position: .newest, states: false, presence: false))
        #expect(page.unread == 2)
        #expect(try browser.conversations().first { $0.jid == ExportFixture.alice }?.unread == 2, "viewing marks nothing read")
        let reader = try ArchiveReader(path: scratch.archive)
        #expect(try reader.unreadConversations().map(\.unread) == [2], "the same count as roost read and roost status")
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        _ = try writer.commitBlocking([.conversationRead(account: ExportFixture.account, conversation: ExportFixture.alice, timestamp: ExportFixture.t0 + 7_200_000)])
        let read = try #require(try browser.conversations().first { $0.jid == ExportFixture.alice })
        #expect(read.unread == 0 && !read.html.contains("class=\"count\""))
        #expect(ArchiveBrowser.unreadBadge(ArchiveBrowser.unreadLimit).contains(">999+<"))
    }

    @Test func listShowsRoomsAndAccountsAndSearchHighlightsAndLinksInContext() throws {
        let scratch = ExportScratch()
        _ = try scratch.fixture()
        let browser = ArchiveBrowser(reader: try ArchiveReader(path: scratch.archive), links: Links(), timeZone: Self.utc)
        let list = try browser.conversations()
        #expect(list.count == 4)
        #expect(list.first?.jid == ExportFixture.alice, "the most recently active first")
        #expect(list.filter(\.isRoom).map(\.jid) == [ExportFixture.room])
        let alice = try #require(list.first { $0.jid == ExportFixture.alice })
        #expect(alice.title == "Alice Liddell")
        #expect(alice.html.contains("src=\"/avatar/\(alice.accountID)/\(ExportFixture.alice)\""), "her stored picture, by id")
        #expect(list.contains { $0.html.contains("account work@example.net") }, "accounts are named when there are several")

        let results = try browser.search("你好 OR script", before: nil)
        #expect(results.count == 2)
        #expect(results.html.contains("<mark>你好</mark>"))
        #expect(results.html.contains("look: &lt;<mark>script</mark>&gt;alert(1)&lt;/"), "escaped around the highlight")
        #expect(results.html.contains("in context</a>") && results.html.contains("@"))
        #expect(throws: ArchiveError.self) { try browser.search("\"unterminated", before: nil) }

        // Attachments link by message id and position; only a stored file gets a local link.
        let page = try #require(try browser.transcript(accountID: alice.accountID, jid: ExportFixture.alice, position: .newest, states: false, presence: false))
        #expect(page.html.contains("<img src=\"/file/"), "the stored picture inline")
        #expect(page.html.contains("href=\"https://upload.example.com/y/report.pdf\""), "the missing file links its URL")
        let fileLink = try #require(page.html.firstRange(of: "/file/").map { String(page.html[$0.upperBound...].prefix { $0 != "\"" }) })
        let parts = fileLink.split(separator: "/")
        let attachment = try #require(try browser.attachment(messageID: Int64(parts[0])!, index: Int(parts[1])!))
        #expect(attachment.mime == "image/png")
        #expect(try browser.attachment(messageID: Int64(parts[0])!, index: 7) == nil)
    }
    @Test func roomPagesNameTheRoomItsSubjectAndNickAndColourSendersByNick() throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let account = ExportFixture.account, room = "trip@conference.example.org", t0 = ExportFixture.t0
        func said(_ nick: String, _ body: String?, at minute: Int64, occupantID: String? = nil, subject: String? = nil,
                  attachments: [AttachmentRecord] = []) -> ArchiveEvent {
            var record = MessageRecord(account: account, conversation: room, direction: nick == "Alice" ? .outgoing : .incoming, kind: .groupchat,
                                       from: room + "/" + nick, to: account, body: body, subject: subject, timestamp: t0 + minute * 60_000,
                                       stanzaId: "s\(minute)", stanzaIdBy: room, stanzaIdTrusted: true, messageId: "m\(minute)",
                                       attachments: attachments)
            record.occupantId = occupantID
            return .message(record)
        }
        let link = "https://upload.example.org/x/plan.pdf"
        _ = try writer.commitBlocking([
            .room(RoomUpdate(account: account, room: room, change: .bookmark(present: true, name: "Trip <planners>", nick: "Alice", autojoin: true,
                                                                               hasPassword: false), timestamp: t0)),
            .room(RoomUpdate(account: account, room: room, change: .joined(nick: "Alice", occupantID: nil, mam: true, nonAnonymous: false), timestamp: t0)),
            .room(RoomUpdate(account: account, room: room, change: .subject("Meet at <8>", by: "bob"), timestamp: t0)),
            said("bob", nil, at: 1, subject: "Meet at <8>"),
            said("bob", "hello", at: 2, occupantID: "occ-bob"),
            said("carol", link, at: 3, occupantID: "occ-carol", attachments: [AttachmentRecord(url: link)]),
            said("Alice", "from roost", at: 4),
        ])
        let browser = ArchiveBrowser(reader: try ArchiveReader(path: scratch.archive), links: Links(), timeZone: Self.utc)
        let entry = try #require(try browser.conversations().first)
        #expect(entry.isRoom && entry.title == "Trip <planners>" && entry.html.contains("Trip &lt;planners&gt;"))
        // The user's own room message: "me" in the list, a right-hand bubble without a name on the page (issue 30).
        #expect(entry.html.contains("me: from roost"), "\(entry.html)")
        let page = try #require(try browser.transcript(accountID: entry.accountID, jid: room, position: .newest, states: false, presence: false))
        #expect(page.title == "Trip <planners>" && page.isRoom)
        #expect(page.details.contains("room (joined as Alice)") && page.details.contains("subject “Meet at &lt;8&gt;”"), "\(page.details)")
        // bob keeps one colour on his subject change (no occupant id) and his message (with one).
        let bobAvatar = "background:hsl(\(HTMLText.hue("bob")),"
        #expect(page.html.components(separatedBy: bobAvatar).count - 1 == 2, "\(page.html)")
        #expect(page.html.contains("<div class=\"msg out\"") && page.html.contains("<div class=\"text\">from roost</div>")
                && !page.html.contains(">Alice</div>"), "\(page.html)")
        // carol's message is only the file's address: the file is shown, the address not repeated as text.
        #expect(page.html.contains("href=\"\(link)\"") && !page.html.contains("<div class=\"text\">\(link)"))
    }

    /// A room joined without a named bookmark (`roost rooms join`, the config) is titled by the name its disco#info
    /// gives (schema v15), in the web view and `roost rooms`; a bookmark's name, the user's choice, wins (issue 30, 9).
    @Test func aRoomWithoutANamedBookmarkIsTitledByTheNameItGivesItself() throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let account = ExportFixture.account, t0 = ExportFixture.t0
        let plain = "lobby@conference.example.org", bookmarked = "trip@conference.example.org"
        func message(_ room: String, at minute: Int64) -> ArchiveEvent {
            .message(MessageRecord(account: account, conversation: room, direction: .incoming, kind: .groupchat, from: room + "/bob",
                                   to: account, body: "hi", timestamp: t0 + minute * 60_000, stanzaId: "s\(room)\(minute)",
                                   stanzaIdBy: room, stanzaIdTrusted: true, messageId: "m\(room)\(minute)"))
        }
        _ = try writer.commitBlocking([
            .room(RoomUpdate(account: account, room: plain, change: .joined(nick: "Alice", occupantID: nil, mam: true, nonAnonymous: false,
                                                                              discoName: "The Lobby"), timestamp: t0)),
            .room(RoomUpdate(account: account, room: bookmarked, change: .bookmark(present: true, name: "Our trip", nick: "Alice",
                                                                                     autojoin: true, hasPassword: false), timestamp: t0)),
            .room(RoomUpdate(account: account, room: bookmarked, change: .joined(nick: "Alice", occupantID: nil, mam: true, nonAnonymous: false,
                                                                                   discoName: "trip-2026"), timestamp: t0)),
            // A later join whose disco#info gave no name keeps the one known.
            .room(RoomUpdate(account: account, room: plain, change: .joined(nick: "Alice", occupantID: nil, mam: true, nonAnonymous: false),
                             timestamp: t0 + 1)),
            message(plain, at: 1), message(bookmarked, at: 2),
        ])
        let reader = try ArchiveReader(path: scratch.archive)
        let browser = ArchiveBrowser(reader: reader, links: Links(), timeZone: Self.utc)
        let titles = Dictionary(uniqueKeysWithValues: try browser.conversations().map { ($0.jid, $0.title) })
        #expect(titles[plain] == "The Lobby" && titles[bookmarked] == "Our trip", "\(titles)")
        let rooms = Dictionary(uniqueKeysWithValues: try reader.rooms(account: nil).map { ($0.jid, $0.name) })
        #expect(rooms[plain] == "The Lobby" && rooms[bookmarked] == "Our trip", "\(rooms)")
    }
}
