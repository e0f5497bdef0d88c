import Foundation
import Testing
import RoostArchive
import RoostCore
import RoostTestSupport
@testable import roost

/// `roost log` writes a plain message's line from its row's columns (`MessageText.appendLogLine`), and every
/// other message through `MessageRow` and `logLine`: both must print exactly the same text, and each kind of
/// message must take the path meant for it.
@Suite struct LogLineWriterTests {
    static let t0: Int64 = 1_768_478_400_000
    static let me = "me@example.org"

    private func message(_ body: String?, _ offset: Int64, conversation: String = "bob@example.org", kind: MessageKind = .chat,
                         from: String = "bob@example.org/phone", outgoing: Bool = false, subject: String? = nil,
                         attachments: [AttachmentRecord] = []) -> ArchiveEvent {
        .message(MessageRecord(account: Self.me, conversation: conversation, direction: outgoing ? .outgoing : .incoming, kind: kind,
                               from: from, to: Self.me + "/roost", senderName: kind == .groupchat ? "Nick \u{1B}[2J" : nil, body: body,
                               subject: subject, timestamp: Self.t0 + offset * 1000, messageId: "m\(offset)", attachments: attachments))
    }

    @Test func plainLinesFromColumnsEqualTheMessageRowPath() throws {
        let sandbox = try ExportCLISandbox()
        let room = "room@conference.example.org"
        // Plain: each of these is written from its columns.
        let plain: [ArchiveEvent] = [
            message("hello there", 2), message("me too", 3, from: Self.me + "/roost", outgoing: true),
            message("晚上见 🎉 café", 4), message("two\nlines\twith a tab\nand three", 5),
            message("evil\u{1B}[31mred\u{07}\rover\u{202E}txt\u{9B}2J\u{200E}\u{FEFF}\u{2028}", 6), message("", 7),
            message("crlf\r\nline", 8), message("INVALID", 9), message("near clock", 10),
            message("in the room", 11, conversation: room, kind: .groupchat, from: room + "/alice"),
            message("mine in the room", 12, conversation: room, kind: .groupchat, from: room + "/me", outgoing: true),
            message("the room itself", 13, conversation: room, kind: .groupchat, from: room),
            message("from another resource", 14, from: "bob@example.org/desk"), message("a resourceless sender", 15, from: "bob@example.org"),
        ]
        // Anything else a line shows: read whole.
        let decorated: [ArchiveEvent] = [
            message("RECEIVED", 1, from: Self.me + "/roost", outgoing: true), message("EDITED", 20), message("REPLY", 21),
            message("RETRACTED", 22), message("ENCRYPTED", 23), message("FAR CLOCK", 24), message("REACTED", 25),
            message("see https://example.org/f.png", 26, attachments: [AttachmentRecord(url: "https://example.org/f.png", name: "f.png")]),
            message(nil, 27, subject: "a subject"),
        ]
        _ = try ArchiveWriter(path: sandbox.archive, durability: .off).commitBlocking(plain + decorated)
        do {
            let database = try Database(path: sandbox.archive, mode: .readWrite)
            try database.execute("""
                UPDATE messages SET body = CAST(x'62616480ff0a62c3' AS TEXT) WHERE body = 'INVALID';
                UPDATE messages SET claimed_at = timestamp + 59000 WHERE body = 'near clock';
                UPDATE messages SET edited = 1 WHERE body = 'EDITED';
                UPDATE messages SET reply_to = 'm2' WHERE body = 'REPLY';
                UPDATE messages SET retracted = 1, retracted_by = 'bob@example.org', retracted_at = timestamp WHERE body = 'RETRACTED';
                UPDATE messages SET encryption = 'omemo', e2e_trust = 'untrusted' WHERE body = 'ENCRYPTED';
                UPDATE messages SET claimed_at = timestamp - 60000 WHERE body = 'FAR CLOCK';
                INSERT INTO reactions (account_id, conversation, target, message_row, reactor, direction, emojis, timestamp, source, dedup_key)
                    SELECT account_id, conversation, 'm25', id, 'bob@example.org', 'in', '["👍"]', timestamp, 'live', 'r1'
                    FROM messages WHERE body = 'REACTED';
                INSERT OR REPLACE INTO read_state (account_id, conversation, peer_received_row, updated_at)
                    SELECT account_id, conversation, id, 0 FROM messages WHERE body = 'RECEIVED';
                """)
        }
        let reader = try ArchiveReader(path: sandbox.archive)
        let text = MessageText(output: Output(standardOutput: CapturedText(), standardError: CapturedText(), standardOutputIsTTY: false,
                                              standardErrorIsTTY: false),
                               names: try reader.names(), showAccount: false)
        for conversation in ["bob@example.org", room] {
            var expected: [String] = []
            try reader.transcript(conversation: conversation, forLines: true) { event in
                if case .message(let row) = event { expected.append(text.logLine(row).rendered + "\n") }
                return true
            }
            var written: [String] = []
            var lines = 0
            let senders = LineNames()
            try reader.transcriptLines(conversation: conversation) { item in
                switch item {
                case .line(let line):
                    lines += 1
                    var bytes: [UInt8] = []
                    text.appendLogLine(line, senders: senders, to: &bytes)
                    written.append(String(decoding: bytes, as: UTF8.self))
                case .event(.message(let row)):
                    #expect(!plain.contains { if case .message(let m) = $0 { m.messageId == row.messageId } else { false } },
                            "\(row.body ?? "nil") was not written from its columns")
                    written.append(text.logLine(row).rendered + "\n")
                case .event:
                    break
                }
                return true
            }
            #expect(written == expected)
            #expect(lines == (conversation == room ? 3 : plain.count - 3), "\(conversation): \(lines) plain lines")
        }
        // The invalid bytes are shown as a String shows them; the far clock, the reply, the tick are there.
        let log = try sandbox.roost(["log", "bob@example.org"])
        #expect(log.status == 0, "\(log.stderr)")
        for shown in ["bad\u{FFFD}\u{FFFD}\n    b\u{FFFD}", "(sender's clock says", "(edited)", " ✓", "👍 ", "[file f.png", "(subject) a subject",
                      "\\u{1b}[31mred\\u{7}\\rover\\u{202e}", "two\n    lines\twith a tab\n    and three"] {
            #expect(log.stdout.contains(shown), "\(shown) not in \(log.stdout)")
        }
    }

    /// `roost search` without colour writes a plain match's line from its columns (`appendSearchLine`): the same
    /// text as `searchLine` of its `MessageRow`, with and without the account tag, for every kind of row, and for a
    /// page smaller than the attachment and reaction rows (then every match is a `MessageRow`).
    @Test func plainSearchLinesFromColumnsEqualTheMessageRowPath() throws {
        let sandbox = try ExportCLISandbox()
        let room = "room@conference.example.org"
        let plain: [ArchiveEvent] = [
            message("hello there", 2), message("me too hello", 3, from: Self.me + "/roost", outgoing: true),
            message("晚上见 🎉 café hello", 4), message("two\nlines\twith hello\nand three", 5),
            message("evil\u{1B}[31mred\u{07}\rover\u{202E}txt\u{9B}2J hello", 6), message("INVALID", 7),
            message("in the room hello", 11, conversation: room, kind: .groupchat, from: room + "/alice"),
            message("mine in the room hello", 12, conversation: room, kind: .groupchat, from: room + "/me", outgoing: true),
            message("the room itself hello", 13, conversation: room, kind: .groupchat, from: room),
            message("a stranger hello", 14, conversation: "Stranger\u{1B}@example.org", from: "Stranger\u{1B}@example.org/x"),
        ]
        let decorated: [ArchiveEvent] = [
            message("RECEIVED hello", 1, from: Self.me + "/roost", outgoing: true), message("EDITED hello", 20),
            message("REACTED hello", 25),
            message("see https://example.org/f.png hello", 26, attachments: [AttachmentRecord(url: "https://example.org/f.png", name: "f.png")]),
            message(nil, 27, subject: "a subject hello"),
        ]
        _ = try ArchiveWriter(path: sandbox.archive, durability: .off).commitBlocking(plain + decorated)
        do {
            let database = try Database(path: sandbox.archive, mode: .readWrite)
            try database.execute("""
                UPDATE messages SET body = CAST(x'68656c6c6f2062616480ff0a62c3' AS TEXT) WHERE body = 'INVALID';
                UPDATE messages SET edited = 1 WHERE body = 'EDITED hello';
                INSERT INTO reactions (account_id, conversation, target, message_row, reactor, direction, emojis, timestamp, source, dedup_key)
                    SELECT account_id, conversation, 'm25', id, 'bob@example.org', 'in', '["👍"]', timestamp, 'live', 'r1'
                    FROM messages WHERE body = 'REACTED hello';
                INSERT OR REPLACE INTO read_state (account_id, conversation, peer_received_row, updated_at)
                    SELECT account_id, conversation, id, 0 FROM messages WHERE body = 'RECEIVED hello';
                """)
        }
        let reader = try ArchiveReader(path: sandbox.archive)
        for showAccount in [false, true] {
            let text = MessageText(output: Output(standardOutput: CapturedText(), standardError: CapturedText(), standardOutputIsTTY: false,
                                                  standardErrorIsTTY: false),
                                   names: try reader.names(), showAccount: showAccount)
            for (query, limit) in [("hello", 1000), ("", 1000), ("hello", 1)] {
                var expected: [String] = []
                try reader.search(query: query, limit: limit, forLines: true) { row in
                    expected.append(text.searchLine(row, highlight: true).rendered + "\n")
                    return true
                }
                var written: [String] = []
                var lines = 0
                let names = SearchLineNames()
                try reader.searchLines(query: query, limit: limit) { item in
                    switch item {
                    case .line(let line):
                        lines += 1
                        var bytes: [UInt8] = []
                        text.appendSearchLine(line, names: names, to: &bytes)
                        written.append(String(decoding: bytes, as: UTF8.self))
                    case .event(.message(let row)):
                        #expect(limit == 1 || !plain.contains { if case .message(let m) = $0 { m.messageId == row.messageId } else { false } },
                                "\(row.body ?? "nil") was not written from its columns")
                        written.append(text.searchLine(row, highlight: true).rendered + "\n")
                    case .event:
                        break
                    }
                    return true
                }
                #expect(written == expected, "\(query) limit \(limit) account \(showAccount)")
                #expect(lines == (limit == 1 ? 0 : plain.count), "\(query) limit \(limit): \(lines) plain lines")
            }
        }
        // Through the command: the account tag, a room's sender, the name of the conversation.
        let search = try sandbox.roost(["search", "--limit", "0", "hello"])
        #expect(search.status == 0, "\(search.stderr)")
        // Sender → recipient (issue 30, 4).
        for shown in ["alice → room@conference.example.org: in the room hello", "me (me) → room@conference.example.org: mine in the room",
                      "hello bad\u{FFFD}\u{FFFD}\n    b\u{FFFD}", " ✓", "(edited)", "[file f.png", "(subject) a subject hello",
                      "\\u{1b}@example.org → me: a stranger hello"] {
            #expect(search.stdout.contains(shown), "\(shown) not in \(search.stdout)")
        }
    }

    @Test func bytesEqualTheStringEscaperAndTheTimeText() {
        let texts = ["plain", "", "晚上见 🎉", "a\nb\tc\r\nd", "\u{0}\u{1F}\u{7F}\u{80}\u{9F}\u{A0}\u{61C}\u{200E}\u{202A}\u{2066}\u{2069}\u{2028}\u{FEFF}",
                     "e\u{301}\u{200D}👩‍👩‍👧", String(repeating: "x\n", count: 3)]
        for text in texts {
            for keeping in [true, false] {
                var out: [UInt8] = [0x3E]
                var copy = text
                let valid = copy.withUTF8 { VisibleText.append($0, keepingLineBreaks: keeping, indent: 2, to: &out) }
                #expect(valid)
                let expected = ">" + VisibleText.escaped(text, keepingLineBreaks: keeping).replacingOccurrences(of: "\n", with: "\n  ")
                #expect(String(decoding: out, as: UTF8.self) == expected, "\(text.debugDescription) keeping \(keeping)")
            }
        }
        for invalid: [UInt8] in [[0x61, 0x80], [0xC3], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC0, 0xAF]] {
            var out: [UInt8] = [0x3E]
            #expect(!invalid.withUnsafeBufferPointer { VisibleText.append($0, keepingLineBreaks: true, to: &out) })
            #expect(out == [0x3E])
        }
        let clock = ZoneClock(timeZone: TimeZone(identifier: "America/St_Johns")!)
        for ms: Int64 in [0, -1, Self.t0, Self.t0 + 59_999, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999,
                          253_402_300_800_000, .min, .max, 1_710_054_000_000] {
            var out: [UInt8] = []
            clock.appendMinuteText(ms, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == clock.minuteText(ms), "\(ms)")
        }
    }
}
