import RoostCore
import Foundation
import Testing
@testable import RoostArchive

@Suite struct ExportRoundTripTests {
    private let utc = TimeZone(identifier: "UTC")!

    private func jsonl(_ reader: ArchiveReader, to path: String, query: String = "") throws -> String {
        _ = try ArchiveExporter(reader: reader).export(
            ExportOptions(format: .jsonl, query: query, include: Set(ExportInclusion.allCases), timeZone: utc, copyAttachments: false),
            to: .path(path))
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func exportImportExportIsByteIdentical() throws {
        let scratch = ExportScratch()
        let original = try jsonl(try scratch.fixture(), to: scratch.folder + "/first.jsonl")
        let copy = scratch.folder + "/copy.sqlite"
        let summary = try ArchiveImporter(archivePath: copy).importJSONLines(from: scratch.folder + "/first.jsonl")
        #expect(summary.messages == 13)
        #expect(summary.corrections == 2)
        #expect(summary.chatStates == 2)
        #expect(summary.presenceChanges == 2)
        #expect(summary.contacts == 3)
        let again = try jsonl(try ArchiveReader(path: copy), to: scratch.folder + "/second.jsonl")
        #expect(again == original)
        // The file holds what the issue asks for: several languages, revisions, states, presence, raw stanzas.
        #expect(original.contains("你好，我们明天见面吧。") && original.contains("Привет") && original.contains("مرحبا"))
        #expect(original.contains("\"revisions\":[{\"revision\":0,\"body\":\"Teh typo\""))
        #expect(original.contains("\"event\":\"chat_state\"") && original.contains("\"event\":\"presence\""))
        #expect(original.contains("\"raw\":\"<message from='alice@example.com/phone'"))
        for line in original.split(separator: "\n") { #expect(line.hasPrefix("{\"version\":1,\"event\":\"")) }
    }

    @Test func importingTwiceAddsNothing() throws {
        let scratch = ExportScratch()
        let file = scratch.folder + "/first.jsonl"
        let original = try jsonl(try scratch.fixture(), to: file)
        let copy = scratch.folder + "/copy.sqlite"
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: file)
        let second = try ArchiveImporter(archivePath: copy).importJSONLines(from: file)
        #expect(second.messages == 0 && second.corrections == 0 && second.presenceChanges == 0 && second.chatStates == 0)
        #expect(second.duplicates == 13 + 2 + 1, "messages, corrections and the replayed stanza-id adoption")
        #expect(try jsonl(try ArchiveReader(path: copy), to: scratch.folder + "/third.jsonl") == original)
        // Importing into the archive it came from changes nothing either.
        _ = try ArchiveImporter(archivePath: scratch.archive).importJSONLines(from: file)
        #expect(try jsonl(try ArchiveReader(path: scratch.archive), to: scratch.folder + "/fourth.jsonl") == original)
    }

    @Test func repeatedIdenticalPresenceSurvivesTheRoundTrip() throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let presence = PresenceRecord(account: "me@example.org", contact: "a@example.com", resource: nil, availability: .available,
                                      timestamp: ExportFixture.t0)
        _ = try writer.commitBlocking([.presence(presence), .presence(presence)])
        let original = try jsonl(try ArchiveReader(path: scratch.archive), to: scratch.folder + "/a.jsonl")
        let copy = scratch.folder + "/copy.sqlite"
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: scratch.folder + "/a.jsonl")
        #expect(try jsonl(try ArchiveReader(path: copy), to: scratch.folder + "/b.jsonl") == original)
        #expect(original.split(separator: "\n").count == 2)
    }

    /// Issue 28: a private conversation in a room (`room@service/nick`) is exported as it is stored and imported back,
    /// and chat states of one millisecond, told apart by their stanza ids, stay apart.
    @Test func privateMessagesInRoomsAndChatStatesOfOneMillisecondSurviveTheRoundTrip() throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let me = ExportFixture.account, t0 = ExportFixture.t0
        let occupant = ExportFixture.room + "/bob"
        var psst = MessageRecord(account: me, conversation: occupant, direction: .incoming, from: occupant, to: me + "/roost",
                                 senderName: "bob", body: "psst", timestamp: t0, stanzaId: "S-1", stanzaIdBy: me, stanzaIdTrusted: true,
                                 messageId: "pm-1")
        psst.occupantId = "occupant-bob"
        let answer = MessageRecord(account: me, conversation: occupant, direction: .outgoing, from: me + "/phone", to: occupant,
                                   senderName: "Me", body: "tell me", timestamp: t0 + 1000, stanzaId: "S-2", stanzaIdBy: me,
                                   stanzaIdTrusted: true, messageId: "pm-2", source: .carbon)
        let states: [ArchiveEvent] = ["cs-1", "cs-2", "cs-3"].map { id in
            .chatState(ChatStateRecord(account: me, conversation: occupant, from: occupant, state: .composing, timestamp: t0 + 500, messageId: id))
        } + [.chatState(ChatStateRecord(account: me, conversation: ExportFixture.alice, from: ExportFixture.alice + "/phone", state: .paused,
                                        timestamp: t0 + 500, messageId: "cs-4")),
             .chatState(ChatStateRecord(account: me, conversation: ExportFixture.alice, from: ExportFixture.alice + "/phone", state: .paused,
                                        timestamp: t0 + 500, messageId: "cs-5"))]
        _ = try writer.commitBlocking([.message(psst), .message(answer)] + states)
        let original = try jsonl(try ArchiveReader(path: scratch.archive), to: scratch.folder + "/a.jsonl")
        let copy = scratch.folder + "/copy.sqlite"
        let summary = try ArchiveImporter(archivePath: copy).importJSONLines(from: scratch.folder + "/a.jsonl")
        #expect(summary.messages == 2 && summary.chatStates == 5, "\(summary)")
        #expect(try jsonl(try ArchiveReader(path: copy), to: scratch.folder + "/b.jsonl") == original)
        #expect(original.contains("\"conversation\":\"\(occupant)\",\"direction\":\"in\""))
        #expect(original.split(separator: "\n").filter { $0.contains("\"event\":\"chat_state\"") }.count == 5)
        // Imported again: nothing new (the states are known by their ids, the messages by theirs).
        let again = try ArchiveImporter(archivePath: copy).importJSONLines(from: scratch.folder + "/a.jsonl")
        #expect(again.messages == 0 && again.chatStates == 0, "\(again)")
    }

    /// A retracted message is never unread, so its line carries no `unread`: imported, it must not move the read mark
    /// over the unread messages before it.
    @Test func unreadMessagesBeforeARetractedOneStayUnread() throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let me = ExportFixture.account, alice = ExportFixture.alice, t0 = ExportFixture.t0
        func incoming(_ body: String, _ id: String, at seconds: Int64) -> ArchiveEvent {
            .message(MessageRecord(account: me, conversation: alice, direction: .incoming, from: alice + "/phone", to: me, body: body,
                                   timestamp: t0 + seconds * 1000, messageId: id))
        }
        _ = try writer.commitBlocking([incoming("read", "r1", at: 0)])
        _ = try writer.commitBlocking([.conversationRead(account: me, conversation: alice, timestamp: t0 + 500)])
        _ = try writer.commitBlocking([incoming("unread", "u1", at: 1), incoming("taken back", "x1", at: 2),
                               .annotation(MessageAnnotation(account: me, conversation: alice, kind: .retraction,
                                                             target: "x1", from: alice + "/phone", direction: .incoming, groupchat: false,
                                                             timestamp: t0 + 3000, source: .live))])
        let original = try jsonl(try ArchiveReader(path: scratch.archive), to: scratch.folder + "/a.jsonl")
        #expect(original.contains("\"body\":\"unread\"") && original.contains("\"unread\":true") && original.contains("\"retracted\":true"))
        let copy = scratch.folder + "/copy.sqlite"
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: scratch.folder + "/a.jsonl")
        #expect(try jsonl(try ArchiveReader(path: copy), to: scratch.folder + "/b.jsonl") == original)
    }

    @Test func aGroupChatMessageOfAnOccupantsAddressIsRefused() throws {
        let scratch = ExportScratch()
        let file = scratch.folder + "/bad.jsonl"
        let line = #"{"version":1,"event":"message","account":"me@example.org","conversation":"lounge@conference.example.org/bob","direction":"in","type":"groupchat","from":"lounge@conference.example.org/bob","to":"me@example.org","sender_name":null,"timestamp":"2026-01-15T12:00:00.000Z","received_at":"2026-01-15T12:00:00.000Z","body":"x","subject":null,"thread":null,"stanza_id":null,"stanza_id_by":null,"stanza_id_trusted":false,"origin_id":null,"message_id":null,"replaces":null,"retracted":false,"carbon":false,"source":"live","attachments":[],"revisions":[],"raw":null}"#
        try (line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect {
            try ArchiveImporter(archivePath: scratch.folder + "/copy.sqlite").importJSONLines(from: file)
        } throws: { error in
            "\(error)".contains("group chat message must be the room's bare address")
        }
    }

    @Test func aQueryExportsItsConversationsStatesWithinTheirSpan() throws {
        let scratch = ExportScratch()
        let text = try jsonl(try scratch.fixture(), to: scratch.folder + "/q.jsonl", query: "with:alice@example.com date:2026-01-15")
        let events = text.split(separator: "\n")
        #expect(events.filter { $0.contains("\"event\":\"message\"") }.count == 6)
        // The presence 5 s before the first selected message is outside the span; the one after the last is too.
        #expect(!text.contains("\"event\":\"presence\""))
        #expect(events.filter { $0.contains("\"event\":\"chat_state\"") }.count == 1)
        #expect(events.first?.contains("\"event\":\"contact\"") == true)
        #expect(!text.contains("wang@example.cn"))
    }

    @Test func invalidLinesAreReportedAndNothingIsImported() throws {
        let scratch = ExportScratch()
        let file = scratch.folder + "/bad.jsonl"
        let good = #"{"version":1,"event":"chat_state","account":"me@example.org","conversation":"a@example.com","from":"a@example.com/x","state":"composing","timestamp":"2026-01-15T12:00:00.000Z"}"#
        let lines = [
            good,
            "not json",
            #"{"version":1,"event":"message","account":"me@example.org"}"#,
            "",
            #"{"version":9,"event":"chat_state"}"#,
            #"{"version":1,"event":"chat_state","account":"me@example.org","conversation":"a@example.com","from":"a@example.com/x","state":"dancing","timestamp":"2026-01-15T12:00:01Z"}"#,
            #"{"version":1,"event":"presence","account":"me@example.org","contact":"a@example.com","availability":"available","timestamp":"yesterday"}"#,
        ]
        try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let archive = scratch.folder + "/new.sqlite"
        #expect {
            _ = try ArchiveImporter(archivePath: archive).importJSONLines(from: file)
        } throws: { error in
            guard case ImportError.invalidLines(let problems, let count, _) = error else { return false }
            let text = "\(error)"
            return count == 5 && problems.map(\.line) == [2, 3, 5, 6, 7]
                && text.contains("line 2: not JSON") && text.contains("line 3: missing \"conversation\"")
                && text.contains("newer roost") && text.contains("\"state\" is \"dancing\"")
                && text.contains("not an RFC 3339 time") && text.contains("--skip-invalid")
        }
        #expect(!FileManager.default.fileExists(atPath: archive), "nothing may be written when lines are invalid")
        let summary = try ArchiveImporter(archivePath: archive).importJSONLines(from: file, skipInvalid: true)
        #expect(summary.chatStates == 1 && summary.skippedCount == 5 && summary.skipped.first?.line == 2)
    }

    @Test func parserAndTimesAgreeWithTheEncoder() throws {
        #expect(Timestamp.parse("2026-01-15T12:00:00.000Z") == ExportFixture.t0)
        #expect(Timestamp.parse("2026-01-15T13:00:00.5+01:00") == ExportFixture.t0 + 500)
        #expect(Timestamp.parse("1969-12-31T23:59:59.999Z") == -1)
        #expect(Timestamp.parse("2026-01-15") == nil)
        #expect(CivilTime(milliseconds: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
        #expect(CivilTime(milliseconds: ExportFixture.t0, offsetSeconds: 3600).rfc5322 == "Thu, 15 Jan 2026 13:00:00 +0100")
        #expect(CivilTime(milliseconds: ExportFixture.t0 + 86_400_000 * 20).asctime == "Wed Feb  4 12:00:00 2026")
        // At the calendar's ends (the byte writer hands years outside 0…9999 to `pad`), and an odd offset.
        #expect(CivilTime(milliseconds: 253_402_300_800_000).rfc5322 == "Sat, 1 Jan 10000 00:00:00 +0000")
        #expect(CivilTime(milliseconds: 253_402_300_800_000).asctime == "Sat Jan  1 00:00:00 10000")
        #expect(CivilTime(milliseconds: 253_402_300_800_000, offsetSeconds: -12_600).rfc5322 == "Fri, 31 Dec 9999 20:30:00 -0330")
        #expect(CivilTime(milliseconds: -62_167_219_200_001).rfc5322 == "Fri, 31 Dec -0001 23:59:59 +0000")
        #expect(CivilTime(milliseconds: -62_167_219_200_001).asctime == "Fri Dec 31 23:59:59 -0001")
        #expect(try JSONParser.parse(Array(#"{"a":"\u00e9\ud83d\ude00\n","b":[1,-2.5e3,true,null]}"#.utf8))
                == .object(["a": .string("é😀\n"), "b": .array([.integer(1), .number(-2500), .bool(true), .null])]))
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(#"{"a":1,"a":2}"#.utf8)) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(#"{"a":"\ud800"}"#.utf8)) }
    }
}

@Suite struct ExportJSONEncodingTests {
    /// The one encoder reads an export's rows straight from SQLite, and a `MessageRow` as `--json` does: the same bytes.
    @Test func fastRowEncodingMatchesTheStructEncoding() throws {
        let scratch = ExportScratch()
        let reader = try scratch.fixture()
        let fast = scratch.folder + "/fast.jsonl", slow = scratch.folder + "/slow.jsonl"
        let fastSink = try ByteSink.create(path: fast), slowSink = try ByteSink.create(path: slow)
        var fastJSON = JSONByteEncoder(sink: fastSink), slowJSON = JSONByteEncoder(sink: slowSink)
        var count = 0
        try reader.withSnapshot { database in
            let compiled = try reader.compile("", now: Date(), timeZone: TimeZone(identifier: "UTC")!)
            let selection = try ExportSelection(compiled: compiled, account: nil, everything: true, database: database)
            let stream = ExportEventStream(database: database, selection: selection,
                                           reading: try MessageRowReading(database, accounts: selection.accounts),
                                           includeRaw: true, includeStates: false, includePresence: false, windows: nil)
            try stream.run(scope: .init()) { event in
                guard case .message(let view) = event else { return true }
                try MessageJSON.encode(view, .export(copier: nil, up: ""), into: &fastJSON)
                try MessageJSON.encode(try view.load(), .export(copier: nil, up: ""), into: &slowJSON)
                count += 1
                return true
            }
        }
        try fastSink.finish(sync: false)
        try slowSink.finish(sync: false)
        #expect(count == 13)
        #expect(try scratch.read(fast) == (try scratch.read(slow)))
    }

    @Test func escapingMatchesRFC8259AndTheSearchOutput() throws {
        let scratch = ExportScratch()
        let path = scratch.folder + "/e.json"
        let sink = try ByteSink.create(path: path)
        JSONByteEncoder.appendString("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{7F}\u{2028}\u{2029}é😀", to: sink)
        try sink.finish(sync: false)
        #expect(try scratch.read(path) == #""a\"b\\c\n\r\t\b\f\u0001\u007f\u2028\u2029é😀""#)
    }
}
