import Testing
@testable import RoostArchive

@Suite struct ArchiveCorrectionTests {
    @Test func sameSenderCorrectionKeepsOriginalAndRevision() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let original = try writer.commit([.message(Fixture.message("helo wrold", messageId: "m1"))])
        guard case .inserted(let id) = original[0] else { Issue.record("\(original)"); return }
        // Another resource of the same contact may send the correction.
        let fix = Fixture.message("hello world", at: 2_000, from: Fixture.peer + "/laptop", messageId: "m2", replaces: "m1")
        #expect(try writer.commit([.message(fix)]) == [.corrected(id: id, revision: 1)])
        #expect(try writer.commit([.message(fix)]) == [.duplicate(existingId: id)])
        let second = Fixture.message("hello, world", at: 3_000, messageId: "m3", replaces: "m1")
        #expect(try writer.commit([.message(second)]) == [.corrected(id: id, revision: 2)])

        let reader = try archive.reader()
        let rows = try reader.search(query: "world")
        #expect(rows.count == 1)
        #expect(rows.first?.body == "hello, world")
        #expect(rows.first?.edited == true)
        #expect(try reader.search(query: "wrold").isEmpty)
        #expect(try reader.search(query: "is:edited").count == 1)

        let database = try Database(path: archive.path, mode: .readOnly)
        var bodies: [String] = []
        try database.prepare("SELECT body FROM message_revisions WHERE message_row = ? ORDER BY revision").forEachRow([.integer(id)]) { row in
            bodies.append(row.text(0))
            return true
        }
        #expect(bodies == ["helo wrold", "hello world", "hello, world"])
    }

    @Test func correctionFromAnotherSenderIsAPlainMessage() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commit([.message(Fixture.message("original text", messageId: "m1"))])
        let forged = Fixture.message("forged text", at: 1_000, direction: .incoming, from: "mallory@evil.example/x", messageId: "m9", replaces: "m1")
        let outcome = try writer.commit([.message(forged)])
        if case .inserted = outcome[0] {} else { Issue.record("\(outcome)") }
        let reader = try archive.reader()
        #expect(try reader.search(query: "original").count == 1)
        #expect(try reader.search(query: "forged").count == 1)
        #expect(try reader.search(query: "is:edited").isEmpty)
    }

    @Test func groupchatCorrectionNeedsSameNick() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let room = "room@muc.example.com"
        _ = try writer.commit([.message(Fixture.message("tpyo", conversation: room, from: room + "/alice", kind: .groupchat, messageId: "g1"))])
        let other = try writer.commit([.message(Fixture.message("typo", at: 1, conversation: room, from: room + "/bob", kind: .groupchat, messageId: "g2", replaces: "g1"))])
        if case .inserted = other[0] {} else { Issue.record("\(other)") }
        let same = try writer.commit([.message(Fixture.message("typo!", at: 2, conversation: room, from: room + "/alice", kind: .groupchat, messageId: "g3", replaces: "g1"))])
        if case .corrected = same[0] {} else { Issue.record("\(same)") }
    }

    @Test func correctionInSameBatchKeepsIndexConsistent() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commit([
            .message(Fixture.message("first draft 草稿", messageId: "d1")),
            .message(Fixture.message("unrelated", at: 1, messageId: "d2")),
            .message(Fixture.message("final version 定稿", at: 2, messageId: "d3", replaces: "d1")),
        ])
        guard case .inserted(let id) = outcomes[0] else { Issue.record("\(outcomes)"); return }
        #expect(outcomes[2] == .corrected(id: id, revision: 1))
        let reader = try archive.reader()
        #expect(try reader.search(query: "定稿").map(\.id) == [id])
        #expect(try reader.search(query: "草稿").isEmpty)
        #expect(try reader.search(query: "draft").isEmpty)
        let database = try Database(path: archive.path, mode: .readWrite)
        try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('integrity-check', 1)")
    }
}
