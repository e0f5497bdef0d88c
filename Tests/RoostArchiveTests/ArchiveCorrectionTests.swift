import Testing
@testable import RoostArchive

@Suite struct ArchiveCorrectionTests {
    @Test func sameSenderCorrectionKeepsOriginalAndRevision() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let original = try writer.commitBlocking([.message(Fixture.message("helo wrold", messageId: "m1"))])
        guard case .inserted(let id) = original[0] else { Issue.record("\(original)"); return }
        // Another resource of the same contact may send the correction.
        let fix = Fixture.message("hello world", at: 2_000, from: Fixture.peer + "/laptop", messageId: "m2", replaces: "m1")
        #expect(try writer.commitBlocking([.message(fix)]) == [.corrected(id: id, revision: 1)])
        #expect(try writer.commitBlocking([.message(fix)]) == [.duplicate(existingId: id)])
        let second = Fixture.message("hello, world", at: 3_000, messageId: "m3", replaces: "m1")
        #expect(try writer.commitBlocking([.message(second)]) == [.corrected(id: id, revision: 2)])

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
        _ = try writer.commitBlocking([.message(Fixture.message("original text", messageId: "m1"))])
        let forged = Fixture.message("forged text", at: 1_000, direction: .incoming, from: "mallory@evil.example/x", messageId: "m9", replaces: "m1")
        let outcome = try writer.commitBlocking([.message(forged)])
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
        _ = try writer.commitBlocking([.message(Fixture.message("tpyo", conversation: room, from: room + "/alice", kind: .groupchat, messageId: "g1"))])
        let other = try writer.commitBlocking([.message(Fixture.message("typo", at: 1, conversation: room, from: room + "/bob", kind: .groupchat, messageId: "g2", replaces: "g1"))])
        if case .inserted = other[0] {} else { Issue.record("\(other)") }
        let same = try writer.commitBlocking([.message(Fixture.message("typo!", at: 2, conversation: room, from: room + "/alice", kind: .groupchat, messageId: "g3", replaces: "g1"))])
        if case .corrected = same[0] {} else { Issue.record("\(same)") }
    }

    @Test func correctionInSameBatchKeepsIndexConsistent() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([
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

    /// Corrections of earlier batches' messages, among new ones, reach the index at the end of their batch in row
    /// order (`SchemaV14`): one new full-text segment for the batch, not two per correction (each correction's text
    /// change, and the new rows indexed before it, had been flushed as segments of their own). Merges are off here,
    /// so the count of segments is what the batches wrote.
    @Test func correctionsOfEarlierBatchesAddOneSegmentPerBatch() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let database = try Database(path: archive.path, mode: .readWrite)
        try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('automerge', 0)")
        try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('crisismerge', 1000)")
        let first = try writer.commitBlocking((0..<60).map { index in
            .message(Fixture.message("draft number \(index) 草稿", at: Int64(index), messageId: "d\(index)"))
        })
        let ids = first.compactMap { outcome -> Int64? in if case .inserted(let id) = outcome { id } else { nil } }
        #expect(ids.count == 60)
        func segments() throws -> Int64 { try database.prepare("SELECT count(DISTINCT segid) FROM message_fts_idx").scalarInt() ?? -1 }
        let before = try segments()
        var batch: [ArchiveEvent] = []
        for index in 0..<30 {
            batch.append(.message(Fixture.message("final text \(index) 定稿", at: Int64(1_000 + 2 * index), messageId: "f\(index)",
                                                  replaces: "d\(index * 2)")))
            batch.append(.message(Fixture.message("new message \(index)", at: Int64(1_001 + 2 * index), messageId: "n\(index)")))
        }
        // A new message of this batch corrected within it, and a retraction of an earlier batch's message.
        batch.append(.message(Fixture.message("late typo", at: 2_000, messageId: "late")))
        batch.append(.message(Fixture.message("late fixed", at: 2_001, messageId: "late2", replaces: "late")))
        batch.append(.annotation(MessageAnnotation(account: Fixture.account, conversation: Fixture.peer, kind: .retraction, target: "d59",
                                                   from: Fixture.peer + "/phone", direction: .incoming, groupchat: false, occupantId: nil,
                                                   senderName: nil, timestamp: Fixture.baseTime + 3_000, source: .live, messageId: "r59",
                                                   keepRetractedText: false)))
        let outcomes = try writer.commitBlocking(batch)
        #expect(outcomes.filter { if case .corrected = $0 { true } else { false } }.count == 31)
        #expect(try segments() == before + 1)

        try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('integrity-check', 1)")
        let reader = try archive.reader()
        #expect(try reader.search(query: "定稿").count == 30)
        #expect(try reader.search(query: "草稿").count == 29, "the 30 uncorrected drafts but the retracted one")
        #expect(try reader.search(query: "59").isEmpty)
        #expect(try reader.search(query: "final").map(\.id).sorted() == (0..<30).map { ids[$0 * 2] }.sorted())
        #expect(try reader.search(query: "typo").isEmpty)
        #expect(try reader.search(query: "fixed").count == 1)
        #expect(try database.prepare("SELECT count(*) FROM fts_pending").scalarInt() == 0)
    }

    /// A correction of a message whose stored text is not valid UTF-8 (another tool wrote it; the update trigger
    /// indexed its bytes as they were) takes exactly those bytes out of the index: the deferred re-indexing reads
    /// the stored texts as bytes, never as Swift strings (which would repair them and miss the indexed terms).
    @Test func correctionOfTextStoredAsInvalidUTF8KeepsTheIndexExact() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let first = try writer.commitBlocking([.message(Fixture.message("plain words", at: 0, messageId: "b1"))])
        guard case .inserted(let id) = first[0] else { Issue.record("\(first)"); return }
        let database = try Database(path: archive.path, mode: .readWrite)
        // "caf\xB5 stray": a stray byte, read by SQLite's tokenizer as "µ" (a letter) and by a Swift string as U+FFFD.
        try database.execute("UPDATE messages SET body = CAST(x'636166b5207374726179' AS TEXT) WHERE id = \(id)")
        try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('integrity-check', 1)")
        let outcome = try writer.commitBlocking([.message(Fixture.message("fixed words", at: 1, messageId: "b2", replaces: "b1"))])
        #expect(outcome == [.corrected(id: id, revision: 1)])
        try database.execute("INSERT INTO message_fts(message_fts, rank) VALUES('integrity-check', 1)")
        let reader = try archive.reader()
        #expect(try reader.search(query: "fixed").map(\.id) == [id])
        #expect(try reader.search(query: "stray").isEmpty)
    }
}
