import Foundation
import Testing
@testable import RoostArchive
import RoostTestSupport

/// `ArchiveWriter.forget` (issue 34, 3): the text leaves the archive's files, not only its answers, and a forgotten
/// message does not come back by any of its ids.
@Suite struct ArchiveForgetTests {
    static let other = "carol@example.net"

    /// Words that only the forgotten messages hold; none shares its first letters with another word of the archive,
    /// so the full-text index stores each whole (its terms are prefix-compressed against their neighbours).
    static let secrets = ["qxvjunbreakable", "qxvjcorrected", "qxvjoriginal", "qxvjsubject"]

    @Test func forgottenWordsLeaveTheFileAndTheRestStays() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let store = FileStore(archivePath: archive.path)
        let own = try store.put(Data("only the forgotten message has this file\n".utf8))
        let shared = try store.put(Data("a file two messages share\n".utf8))
        func attachment(_ file: StoredFile, _ name: String) -> AttachmentRecord {
            AttachmentRecord(url: "https://files.example.com/\(name)", size: file.size, name: name, sha256: file.sha256, state: .stored)
        }
        // Batches of their own, so that the full-text index holds several segments (as a live archive does).
        let first = try writer.commitBlocking([.message(Fixture.message("the qxvjoriginal plan", stanzaId: "s1", originId: "o1", messageId: "m1",
                                                                subject: "qxvjsubject", attachments: [attachment(own, "own.txt")]))])
        guard case .inserted(let forgotten) = first[0] else { Issue.record("\(first)"); return }
        for i in 0..<20 {
            _ = try writer.commitBlocking([.message(Fixture.message("everyday chatter number \(i)", at: 100 + Int64(i), conversation: Self.other,
                                                            stanzaId: "c\(i)", messageId: "cm\(i)"))])
        }
        let correction = Fixture.message("the qxvjcorrected plan, qxvjunbreakable", at: 2_000, stanzaId: "s2", originId: "o2",
                                         messageId: "m2", replaces: "m1")
        #expect(try writer.commitBlocking([.message(correction)]) == [.corrected(id: forgotten, revision: 1)])
        let reaction = MessageAnnotation(account: Fixture.account, conversation: Fixture.peer, kind: .reactions(["👍"]), target: "s1",
                                         from: Fixture.account + "/roost", direction: .outgoing, timestamp: Fixture.baseTime + 3_000)
        _ = try writer.commitBlocking([.annotation(reaction)])
        let kept = Fixture.message("a keepsake with a file", at: 4_000, conversation: Self.other, stanzaId: "c99",
                                   attachments: [attachment(shared, "shared.txt")])
        let alsoForgotten = Fixture.message("qxvjunbreakable again", at: 5_000, stanzaId: "s3", messageId: "m3",
                                            attachments: [attachment(shared, "shared.txt")])
        _ = try writer.commitBlocking([.message(kept), .message(alsoForgotten)])
        try writer.checkpoint()
        for word in Self.secrets { #expect(ArchiveFiles.contain(word, archive: archive.path), "the fixture stores \(word)") }

        let ids = try archive.reader().messageIDs(matching: "with:\(Fixture.peer)")
        #expect(ids.count == 2)
        // And carol's first message: her conversation's counters then start at her second.
        let carolsFirst = try archive.reader().messageIDs(matching: "chatter with:\(Self.other)")[0]
        let result = try writer.forget(ids: ids + [carolsFirst])
        #expect(result.messages == 3 && result.versions == 1 && result.reactions == 1 && result.attachments == 2, "\(result)")
        #expect(result.files == 1 && result.logTruncated, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: own.path), "the file only the forgotten message referred to is deleted")
        #expect(FileManager.default.fileExists(atPath: shared.path), "a file another message refers to stays")

        for word in Self.secrets { #expect(!ArchiveFiles.contain(word, archive: archive.path), "\(word) is still in the archive's bytes") }
        let reader = try archive.reader()
        #expect(try reader.search(query: "qxvjunbreakable").isEmpty)
        #expect(try reader.search(query: "with:\(Fixture.peer)").isEmpty)
        #expect(try reader.search(query: "chatter", limit: 100).count == 19, "the other messages stay searchable")
        #expect(try reader.search(query: "keepsake").first?.attachments.first?.sha256 == shared.sha256)
        let stats = try reader.stats()
        #expect(!stats.conversations.contains { $0.conversation == Fixture.peer }, "the counters follow")
        let carol = stats.conversations.first { $0.conversation == Self.other }
        #expect(carol?.messages == 20 && carol?.incoming == 20 && carol?.firstTimestamp == Fixture.baseTime + 101, "\(String(describing: carol))")
        #expect(carol?.lastTimestamp == Fixture.baseTime + 4_000)
        let database = try Database(path: archive.path, mode: .readOnly)
        #expect(try database.prepare("SELECT count(*) FROM message_revisions").scalarInt() == 0)
        #expect(try database.prepare("SELECT count(*) FROM reactions").scalarInt() == 0)
        #expect(try database.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'messages_count_delete'").scalarInt() == 1,
                "the counters' trigger is back")
        #expect(try database.prepare("PRAGMA integrity_check").forEachText() == "ok")
    }

    @Test func aForgottenMessageDoesNotComeBackByAnyOfItsIds() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let original = Fixture.message("forget me", stanzaId: "s1", originId: "o1", messageId: "m1")
        let correction = Fixture.message("forget me, corrected", at: 1_000, stanzaId: "s2", messageId: "m2", replaces: "m1")
        let room = "room@muc.example.com"
        let roomMessage = MessageRecord(account: Fixture.account, conversation: room, direction: .incoming, kind: .groupchat,
                                        from: room + "/bob", to: Fixture.account, body: "forget me too", timestamp: Fixture.baseTime,
                                        stanzaId: "r1", stanzaIdBy: room, stanzaIdTrusted: true, source: .live)
        let outcomes = try writer.commitBlocking([.message(original), .message(correction), .message(roomMessage)])
        guard case .inserted(let id) = outcomes[0], case .inserted(let roomID) = outcomes[2] else { Issue.record("\(outcomes)"); return }
        let result = try writer.forget(ids: [id, roomID, 999])
        #expect(result.messages == 2 && result.tombstones == 4, "\(result)")

        // From the server's archive (the same trusted ids), as a carbon or resend without one (the origin-id), its
        // correction, the room's copy: refused, and nothing stored.
        var carbon = original
        carbon.stanzaId = nil
        carbon.stanzaIdTrusted = false
        carbon.source = .carbon
        var fromArchive = original
        fromArchive.source = .mam
        var roomCopy = roomMessage
        roomCopy.source = .mam
        roomCopy.stanzaIdBy = room.uppercased()
        for again in [fromArchive, carbon, correction, roomCopy] {
            #expect(try writer.commitBlocking([.message(again)]) == [.duplicate(existingId: nil)], "\(again.stanzaId ?? again.originId ?? "")")
        }
        #expect(try archive.reader().search(query: "forget").isEmpty)
        // `roost verify` counts them as held (forgotten on purpose), not as missing to repair.
        let held = try archive.reader().storedTrustedStanzaIDs(account: Fixture.account, among: ["s1", "s2", "s7"], revisions: false)
        #expect(held == ["s1", "s2"])
        // What is new is archived: the same words from the same contact, and another account's message with the same ids.
        let next = Fixture.message("forget me", at: 9_000, stanzaId: "s9", originId: "o9", messageId: "m9")
        if case .inserted = try writer.commitBlocking([.message(next)])[0] {} else { Issue.record("a new message was refused") }
        var elsewhere = original
        elsewhere.account = "other@example.org"
        elsewhere.stanzaIdBy = "other@example.org"
        if case .inserted = try writer.commitBlocking([.message(elsewhere)])[0] {} else { Issue.record("another account's message was refused") }
        #expect(try archive.reader().search(query: "forget").count == 2)
    }
}
