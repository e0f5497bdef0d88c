import Foundation
import Testing
@testable import RoostArchive

/// Reactions, retractions and moderation, markers and the read state in the archive (schema v8), including
/// the orders a server archive delivers them in and the rules on who may retract what.
@Suite("Archive: reactions, retractions, read state")
struct ArchiveSemanticsTests {
    let room = "lounge@conference.example.org"

    func annotation(_ kind: MessageAnnotation.Kind, target: String, from: String = Fixture.peer + "/phone",
                    direction: MessageDirection = .incoming, conversation: String = Fixture.peer, groupchat: Bool = false,
                    occupantId: String? = nil, at offset: Int64 = 1000, messageId: String? = nil, keep: Bool = false,
                    source: MessageSource = .live) -> ArchiveEvent {
        .annotation(MessageAnnotation(account: Fixture.account, conversation: conversation, kind: kind, target: target, from: from,
                                      direction: direction, groupchat: groupchat, occupantId: occupantId, senderName: nil,
                                      timestamp: Fixture.baseTime + offset, source: source,
                                      messageId: messageId ?? "a-\(offset)", keepRetractedText: keep))
    }

    func roomMessage(_ body: String, nick: String, stanzaId: String, occupantId: String?) -> MessageRecord {
        var record = MessageRecord(account: Fixture.account, conversation: room, direction: .incoming, kind: .groupchat,
                                   from: "\(room)/\(nick)", to: Fixture.account, senderName: nick, body: body,
                                   timestamp: Fixture.baseTime, stanzaId: stanzaId, stanzaIdBy: room, stanzaIdTrusted: true)
        record.occupantId = occupantId
        return record
    }

    func row(_ reader: ArchiveReader, _ conversation: String = Fixture.peer) throws -> MessageRow? {
        var found: MessageRow?
        try reader.transcript(conversation: conversation) { event in
            if case .message(let row) = event { found = row }
            return true
        }
        return found
    }

    @Test func aReactorsNewestSetReplacesTheirEarlierOneAndRepeatsCountOnce() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("hello", messageId: "m1")),
            annotation(.reactions(["👍"]), target: "m1", at: 1000),
            annotation(.reactions(["👍", "❤️"]), target: "m1", at: 2000),
            annotation(.reactions(["😂"]), target: "m1", from: Fixture.account + "/phone", direction: .outgoing, at: 3000),
            // The same update again, from the server archive.
            annotation(.reactions(["👍", "❤️"]), target: "m1", at: 2000, messageId: "a-2000", source: .mam),
        ])
        #expect({ if case .duplicate = outcomes[4] { true } else { false } }(), "\(outcomes[4])")
        let reader = try archive.reader()
        let reactions = try #require(try row(reader)).semantics.reactions
        #expect(Set(reactions.map { "\($0.emoji) \($0.own ? "me" : $0.from)" }) == ["👍 \(Fixture.peer)", "❤️ \(Fixture.peer)", "😂 me"])
        #expect(try reader.search(query: "reaction:👍").count == 1)
        // Removing all of them: no longer found.
        _ = try writer.commitBlocking([annotation(.reactions([]), target: "m1", at: 4000)])
        #expect(try reader.search(query: "reaction:👍").isEmpty)
        #expect(try reader.search(query: "has:reaction").count == 1, "the user's own reaction remains")
    }

    @Test func aReactionOrRetractionBeforeItsMessageIsAppliedWhenItArrives() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        // A server archive page may hold the retraction before the message (or the message on a later page).
        _ = try writer.commitBlocking([annotation(.reactions(["🎉"]), target: "m2", at: 5000),
                               annotation(.retraction, target: "m3", at: 5000, messageId: "x1")])
        _ = try writer.commitBlocking([.message(Fixture.message("party", at: 10, messageId: "m2")),
                               .message(Fixture.message("secret text", at: 20, messageId: "m3"))])
        let reader = try archive.reader()
        #expect(try reader.search(query: "has:reaction").map(\.body) == ["party"])
        #expect(try reader.search(query: "secret").isEmpty)
        #expect(try reader.search(query: "is:retracted").count == 1)
    }

    /// A message skips its two lookups of waiting reactions and retractions while the archive holds none
    /// (`pendingAnnotationsMayExist`): one stored after that answer in the same batch, or by another writer between
    /// two batches, must still be found.
    @Test func aWaitingReactionOrRetractionIsFoundAfterTheArchiveHadNone() throws {
        // Each case in an archive of its own, whose first message finds nothing waiting.
        let reactions = TemporaryArchive()
        _ = try reactions.writer().commitBlocking([.message(Fixture.message("hello", at: 1, messageId: "m0")),
                                           annotation(.reactions(["🎉"]), target: "m2", at: 5000),
                                           .message(Fixture.message("party", at: 10, messageId: "m2"))])
        #expect(try reactions.reader().search(query: "has:reaction").map(\.body) == ["party"])
        let retractions = TemporaryArchive()
        _ = try retractions.writer().commitBlocking([.message(Fixture.message("hello", at: 1, messageId: "m0")),
                                             annotation(.retraction, target: "m3", at: 5000, messageId: "x1"),
                                             .message(Fixture.message("secret text", at: 20, messageId: "m3"))])
        #expect(try retractions.reader().search(query: "secret").isEmpty)
        #expect(try retractions.reader().search(query: "is:retracted").count == 1)
        let twoWriters = TemporaryArchive()
        let writer = try twoWriters.writer()
        _ = try writer.commitBlocking([.message(Fixture.message("again", at: 30, messageId: "m4"))])
        _ = try twoWriters.writer().commitBlocking([annotation(.reactions(["👀"]), target: "m5", at: 6000, messageId: "x2")])
        _ = try writer.commitBlocking([.message(Fixture.message("watched", at: 40, messageId: "m5"))])
        #expect(try twoWriters.reader().search(query: "has:reaction").map(\.body) == ["watched"])
    }

    /// A message writes its conversation's read state once (the upsert where it moves the mark, else an insert of
    /// the row): a conversation of incoming messages only still has one, so it is listed as unread.
    @Test func aConversationOfIncomingMessagesOnlyIsUnread() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer().commitBlocking([.message(Fixture.message("one", messageId: "i1")),
                                         .message(Fixture.message("two", at: 1, messageId: "i2"))])
        #expect(try archive.reader().unreadConversations().map(\.unread) == [2])
    }

    @Test func onlyTheSenderRetractsInAChatAndTheTextGoesUnlessKept() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.message(Fixture.message("first secret", messageId: "m1")),
                               .message(Fixture.message("second secret", at: 1, messageId: "m2"))])
        // The user's own client cannot retract what the contact sent.
        let forged = try writer.commitBlocking([annotation(.retraction, target: "m1", from: Fixture.account + "/phone", direction: .outgoing)])
        #expect({ if case .refused = forged[0] { true } else { false } }())
        let reader = try archive.reader()
        #expect(try reader.search(query: "first").count == 1)
        _ = try writer.commitBlocking([annotation(.retraction, target: "m1", at: 2000),
                               annotation(.retraction, target: "m2", at: 3000, keep: true)])
        #expect(try reader.search(query: "first").isEmpty, "retracted text leaves the index")
        let kept = try reader.search(query: "second")
        #expect(kept.count == 1 && kept.first?.semantics.retraction?.by == Fixture.peer + "/phone", "keep_retracted keeps the text, marked")
    }

    @Test func inARoomTheOccupantIDDecidesAndTheRoomMayModerate() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.message(roomMessage("bob's words", nick: "bob", stanzaId: "s1", occupantId: "occ-bob")),
                               .message(roomMessage("carol's words", nick: "carol", stanzaId: "s2", occupantId: "occ-carol"))])
        // Mallory took bob's nick after he left: a different occupant id, so no retraction.
        let forged = try writer.commitBlocking([annotation(.retraction, target: "s1", from: "\(room)/bob", conversation: room, groupchat: true,
                                                   occupantId: "occ-mallory")])
        #expect({ if case .refused = forged[0] { true } else { false } }())
        // A moderation from an occupant is no moderation; from the room it is.
        let fake = try writer.commitBlocking([annotation(.moderation(moderator: "\(room)/mallory", reason: nil), target: "s2",
                                                 from: "\(room)/mallory", conversation: room, groupchat: true)])
        #expect({ if case .refused = fake[0] { true } else { false } }())
        let reader = try archive.reader()
        #expect(try reader.search(query: "words").count == 2)
        _ = try writer.commitBlocking([
            annotation(.retraction, target: "s1", from: "\(room)/bobby", conversation: room, groupchat: true, occupantId: "occ-bob", at: 2000),
            annotation(.moderation(moderator: "\(room)/admin", reason: "spam"), target: "s2", from: room, conversation: room,
                       groupchat: true, at: 3000),
        ])
        #expect(try reader.search(query: "words").isEmpty)
        let moderated = try reader.search(query: "is:retracted in:\(room)").map(\.semantics.retraction)
        #expect(moderated.contains { $0?.by == "\(room)/admin" && $0?.reason == "spam" })
    }

    @Test func markersMoveTheReadStateAndTheContactsProgress() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([
            .message(Fixture.message("one", messageId: "i1")),
            .message(Fixture.message("two", at: 1, messageId: "i2")),
            .message(Fixture.message("mine", at: 2, direction: .outgoing, originId: "o1", messageId: "o1")),
            .message(Fixture.message("three", at: 3, messageId: "i3")),
            .message(Fixture.message("four", at: 4, messageId: "i4")),
        ])
        let reader = try archive.reader()
        #expect(try reader.unreadConversations().map(\.unread) == [2], "writing reads what came before")
        _ = try writer.commitBlocking([annotation(.received, target: "o1", at: 10)])
        #expect(try reader.search(query: "mine").first?.semantics.peerProgress == .delivered)
        _ = try writer.commitBlocking([annotation(.displayed, target: "o1", at: 11)])
        #expect(try reader.search(query: "mine").first?.semantics.peerProgress == .read)
        // The phone displayed i3: one left; an older marker later (from the archive) moves nothing back.
        _ = try writer.commitBlocking([annotation(.displayed, target: "i3", from: Fixture.account + "/phone", direction: .outgoing, at: 12)])
        #expect(try reader.unreadConversations().map(\.unread) == [1])
        _ = try writer.commitBlocking([annotation(.displayed, target: "i1", from: Fixture.account + "/phone", direction: .outgoing, at: 13)])
        #expect(try reader.search(query: "is:unread").map(\.body) == ["four"])
        _ = try writer.commitBlocking([.conversationRead(account: Fixture.account, conversation: Fixture.peer, timestamp: Fixture.baseTime + 20)])
        #expect(try reader.unreadConversations().isEmpty)
    }

    @Test func everythingRoundTripsThroughJSONLines() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        var reply = Fixture.message("at noon", at: 3, messageId: "m3")
        reply.replyTo = "o1"
        reply.replyToJid = Fixture.account + "/phone"
        _ = try writer.commitBlocking([
            .message(Fixture.message("hello", messageId: "m1")),
            .message(Fixture.message("when?", at: 1, direction: .outgoing, originId: "o1", messageId: "o1")),
            .message(Fixture.message("gone soon", at: 2, messageId: "m2")),
            .message(reply),
            .message(Fixture.message("unread one", at: 4, messageId: "m4")),
            annotation(.reactions(["👍"]), target: "m1", at: 10),
            annotation(.reactions(["👍", "❤️"]), target: "m1", at: 11),
            annotation(.reactions(["😂"]), target: "m1", from: Fixture.account + "/phone", direction: .outgoing, at: 12),
            annotation(.retraction, target: "m2", at: 13),
            annotation(.received, target: "o1", at: 14),
            annotation(.displayed, target: "m3", from: Fixture.account + "/phone", direction: .outgoing, at: 15),
        ])
        let utc = TimeZone(identifier: "UTC")!
        func jsonl(_ path: String, to file: String) throws -> String {
            _ = try ArchiveExporter(reader: try ArchiveReader(path: path)).export(
                ExportOptions(format: .jsonl, query: "", include: Set(ExportInclusion.allCases), timeZone: utc, copyAttachments: false),
                to: .path(file))
            return try String(contentsOfFile: file, encoding: .utf8)
        }
        let original = try jsonl(archive.path, to: archive.folder + "/a.jsonl")
        #expect(original.contains("\"reactions\":[{\"target\":\"m1\""))
        #expect(original.contains("\"reply_to\":\"o1\"") && original.contains("\"retracted_by\"") && original.contains("\"receipt\":\"delivered\""))
        #expect(original.contains("\"unread\":true") && !original.contains("gone soon"))
        let copy = archive.folder + "/copy.sqlite"
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: archive.folder + "/a.jsonl")
        #expect(try jsonl(copy, to: archive.folder + "/b.jsonl") == original)
        let reader = try ArchiveReader(path: copy)
        #expect(try reader.unreadConversations().map(\.unread) == [1])
        #expect(try reader.search(query: "reaction:❤️").count == 1)
        #expect(try reader.search(query: "is:retracted").count == 1)
        #expect(try reader.search(query: "noon").first?.semantics.reply?.text == "when?")
        // Importing again adds nothing.
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: archive.folder + "/a.jsonl")
        #expect(try jsonl(copy, to: archive.folder + "/c.jsonl") == original)
    }
}
