import Foundation
import Testing
import RoostArchive
import RoostTestSupport

/// Issue 31, part 4: one JSON schema for a message and one encoder (`MessageJSON`, docs/export.md). The object
/// `roost log --json` and `roost search --json` print for a message is the jsonl export's line for it, plus only
/// what this archive says of it now and minus only the stanzas and the export's file copies.
@Suite("One message JSON: --json and the export")
struct MessageJSONCLITests {
    static let me = "me@example.org", carol = "carol@example.org", room = "den@conference.example.org"

    /// Fields `--json` adds (this archive now): the message's own, and an attachment's.
    static let archiveFields: Set<String> = ["id", "short_id", "conversation_name", "sender_display_name", "reply", "current_reactions"]
    /// Fields only the export has: the stanzas and the copies of files beside it.
    static let exportFields: Set<String> = ["raw"]

    /// A conversation and a room with what a message can carry: a correction, reactions over time, a reply, a
    /// retraction, OMEMO fields, a stored file, a room's occupant id.
    func fixture() throws -> EverydayFixture {
        let fixture = try EverydayFixture()
        let me = Self.me, carol = Self.carol, room = Self.room
        let t = EverydayFixture.january + 3 * 86_400_000
        func incoming(_ body: String?, _ at: Int64, id: String) -> MessageRecord {
            MessageRecord(account: me, conversation: carol, direction: .incoming, from: carol + "/phone", to: me + "/roost",
                          senderName: "Carol", body: body, timestamp: t + at, receivedAt: t + at + 250, stanzaId: "s-\(id)",
                          stanzaIdBy: me, stanzaIdTrusted: true, messageId: id,
                          rawStanza: "<message id='\(id)'><body>\(body ?? "")</body></message>")
        }
        func annotation(_ kind: MessageAnnotation.Kind, target: String, from: String, outgoing: Bool = false, at: Int64) -> ArchiveEvent {
            .annotation(MessageAnnotation(account: me, conversation: carol, kind: kind, target: target, from: from,
                                          direction: outgoing ? .outgoing : .incoming, timestamp: t + at, messageId: "a-\(at)"))
        }
        var reply = incoming("yes, at six", 90_000, id: "c-reply")
        reply.replyTo = "c-plan"
        reply.replyToJid = me
        var secret = incoming("the code is 1234", 100_000, id: "c-omemo")
        secret.encryption = MessageEncryption(protocolNamespace: "urn:xmpp:omemo:2", senderDevice: 4711, fingerprint: "ab12cd",
                                              trust: "verified")
        var file = incoming(nil, 110_000, id: "c-file")
        file.attachments = [AttachmentRecord(url: "https://upload.example.org/p/cat.png", mime: "image/png", size: 70,
                                             name: "cat.png", sha256: String(repeating: "ab", count: 32), state: .stored)]
        var said = MessageRecord(account: me, conversation: room, direction: .incoming, kind: .groupchat, from: room + "/dave",
                                 to: me + "/roost", senderName: "dave", body: "hello den", timestamp: t + 120_000,
                                 stanzaId: "s-den", stanzaIdBy: room, stanzaIdTrusted: true, messageId: "d-1")
        said.occupantId = "occ-dave"
        let writer = try ArchiveWriter(path: fixture.archive, durability: .off)
        _ = try writer.commitBlocking([
            .message(MessageRecord(account: me, conversation: carol, direction: .outgoing, from: me + "/roost", to: carol,
                                   body: "dinner at 6?", timestamp: t, receivedAt: t, originId: "c-plan", messageId: "c-plan")),
            .message(incoming("hi carlo", 10_000, id: "c-typo")),
            .message(MessageRecord(account: me, conversation: carol, direction: .incoming, from: carol + "/phone", to: me + "/roost",
                                   body: "hi carol, I mean", timestamp: t + 20_000, receivedAt: t + 20_250, messageId: "c-typo-fix",
                                   replaces: "c-typo")),
            annotation(.reactions(["👍"]), target: "c-plan", from: carol + "/phone", at: 30_000),
            annotation(.reactions(["❤️"]), target: "c-plan", from: me + "/phone", outgoing: true, at: 40_000),
            .message(incoming("wrong chat", 50_000, id: "c-oops")),
            annotation(.retraction, target: "c-oops", from: carol + "/phone", at: 60_000),
            .message(reply), .message(secret), .message(file), .message(said),
        ])
        return fixture
    }

    /// The object without the fields only one side has (an attachment's `path` and `file`, a version's `raw`).
    static func common(_ object: [String: Any], dropping own: Set<String>, attachmentField: String) -> [String: Any] {
        var object = object.filter { !own.contains($0.key) }
        if let attachments = object["attachments"] as? [[String: Any]] {
            object["attachments"] = attachments.map { $0.filter { $0.key != attachmentField } }
        }
        if let revisions = object["revisions"] as? [[String: Any]] {
            object["revisions"] = revisions.map { $0.filter { $0.key != "raw" } }
        }
        return object
    }

    /// The object as JSON text with sorted keys: equal objects, equal text.
    static func canonical(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func theCLIsJSONIsTheExportsObjectPlusTheArchivesView() throws {
        let fixture = try fixture()
        let export = try fixture.roost(["export", "--format", "jsonl"])
        #expect(export.status == 0, "\(export.stderr)")
        let exported = export.jsonLines.filter {
            $0["event"] as? String == "message" && [Self.carol, Self.room].contains($0["conversation"] as? String ?? "")
        }
        let byID = Dictionary(uniqueKeysWithValues: exported.map { ($0["message_id"] as? String ?? "?", $0) })
        #expect(byID.count == 7, "\(byID.keys.sorted())")

        for arguments in [["log", "--json", Self.carol], ["log", "--json", Self.room],
                          ["search", "--json", "--limit", "0", "with:\(Self.carol)"]] {
            let printed = try fixture.roost(arguments)
            #expect(printed.status == 0, "\(arguments): \(printed.stderr)")
            let messages = printed.jsonLines.filter { $0["event"] as? String == "message" }
            #expect(messages.count == (arguments.contains(Self.room) ? 1 : 6), "\(arguments): \(printed.stdout)")
            for object in messages {
                let id = object["message_id"] as? String ?? "?"
                let line = try #require(byID[id], "\(arguments): \(id) exported")
                let cli = Self.common(object, dropping: Self.archiveFields, attachmentField: "path")
                let exportObject = Self.common(line, dropping: Self.exportFields, attachmentField: "file")
                #expect(try Self.canonical(cli) == (try Self.canonical(exportObject)), "\(arguments) \(id)")
                #expect(object["version"] as? Int == 1 && object["short_id"] is String && object["id"] is Int && line["id"] == nil)
            }
        }

        // What each side has of its own, on the messages that carry it.
        let log = Dictionary(uniqueKeysWithValues: try fixture.roost(["log", "--json", Self.carol]).jsonLines
            .map { ($0["message_id"] as? String ?? "?", $0) })
        let plan = try #require(log["c-plan"])
        #expect((plan["current_reactions"] as? [[String: Any]])?.map { "\($0["emoji"] ?? "") \($0["from"] ?? "")" } == ["👍 carol@example.org", "❤️ me"],
                "\(plan)")
        #expect((plan["reactions"] as? [[String: Any]])?.count == 2 && byID["c-plan"]?["current_reactions"] == nil)
        let typo = try #require(log["c-typo"])
        #expect((typo["revisions"] as? [[String: Any]])?.map { $0["body"] as? String } == ["hi carlo", "hi carol, I mean"], "\(typo)")
        #expect((byID["c-typo"]?["revisions"] as? [[String: Any]])?.first?["raw"] as? String == "<message id='c-typo'><body>hi carlo</body></message>")
        let reply = try #require(log["c-reply"])
        #expect(reply["reply_to"] as? String == "c-plan" && (reply["reply"] as? [String: Any])?["body"] as? String == "dinner at 6?"
                && (reply["reply"] as? [String: Any])?["archive_id"] as? Int == plan["id"] as? Int, "\(reply)")
        #expect(log["c-oops"]?["retracted"] as? Bool == true && log["c-oops"]?["retracted_by"] as? String == Self.carol + "/phone")
        #expect(log["c-omemo"]?["encryption"] as? String == "omemo" && log["c-omemo"]?["sender_trust"] as? String == "verified"
                && log["c-omemo"]?["sender_device"] as? Int == 4711, "\(log["c-omemo"] ?? [:])")
        let attachment = try #require((log["c-file"]?["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["mime"] as? String == "image/png" && attachment["name"] as? String == "cat.png" && attachment["type"] == nil)
        #expect((attachment["path"] as? String)?.hasSuffix("/files/sha256/ab/" + String(repeating: "ab", count: 31)) == true, "\(attachment)")
        #expect(log["c-typo"]?["raw"] == nil && byID["c-typo"]?["raw"] as? String == "<message id='c-typo'><body>hi carlo</body></message>")
    }

    /// An export's encryption fields import back: the encrypted message's line is the same after export → import →
    /// export (exports before the one schema had none, and imported encrypted messages as plain ones).
    @Test func encryptedMessagesRoundTripThroughImport() throws {
        let fixture = try fixture()
        let export = try fixture.roost(["export", "--format", "jsonl", "with:\(Self.carol)"])
        #expect(export.status == 0, "\(export.stderr)")
        func omemoLine(_ text: String) -> String? { text.split(separator: "\n").first { $0.contains(#""message_id":"c-omemo""#) }.map(String.init) }
        let line = try #require(omemoLine(export.stdout), "\(export.stdout)")
        #expect(line.contains(#""encryption":"omemo","encryption_namespace":"urn:xmpp:omemo:2","sender_device":4711,"#
                              + #""sender_fingerprint":"ab12cd","sender_trust":"verified","undecryptable":null"#), "\(line)")
        let other = try EverydayFixture()
        let file = other.folder + "/carol.jsonl"
        try (line + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let imported = try other.roost(["import", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        let again = try other.roost(["export", "--format", "jsonl", "with:\(Self.carol)"])
        #expect(omemoLine(again.stdout) == line, "\(again.stdout)")
    }
}
