import Foundation
import Testing
@testable import RoostArchive

/// The structures behind issue 15's figures, checked for correctness (never timed: `contrib/bench/all` times):
/// the stats counters equal a full scan whatever wrote the rows, the correction lookup seeks indexes, an import
/// leaves no write-ahead log behind, streamed search gives exactly the collected rows, and the live writer keeps
/// its statement journals in memory.
@Suite struct ArchivePerformanceShapeTests {
    /// What `roost stats` showed before the counters: one GROUP BY over every message.
    private func scanned(_ archive: TemporaryArchive) throws -> [ArchiveStats.Conversation] {
        let database = try Database(path: archive.path, mode: .readOnly)
        var rows: [ArchiveStats.Conversation] = []
        try database.prepare(StatsQuery.scanSQL).forEachRow { row in
            rows.append(ArchiveStats.Conversation(
                account: row.text(0), conversation: row.text(1), messages: Int(row.int(2)), incoming: Int(row.int(3)),
                outgoing: Int(row.int(4)), firstTimestamp: row.int(5), lastTimestamp: row.int(6), isRoom: row.bool(7),
                senders: Int(row.int(8))))
            return true
        }
        return rows
    }

    private func sorted(_ rows: [ArchiveStats.Conversation]) -> [ArchiveStats.Conversation] {
        rows.sorted { ($0.account, $0.conversation) < ($1.account, $1.conversation) }
    }

    private func mixedBatch(offset: Int64) -> [ArchiveEvent] {
        let room = "room@conference.example.com"
        var events: [ArchiveEvent] = []
        for i in 0..<30 {
            let at = offset + Int64(i) * 1_000
            events.append(.message(Fixture.message("hello \(i)", at: at, direction: i % 3 == 0 ? .outgoing : .incoming,
                                                   stanzaId: "s-\(offset)-\(i)", messageId: "m-\(offset)-\(i)")))
            events.append(.message(Fixture.message("other \(i)", at: at, conversation: "other@example.com",
                                                   stanzaId: "o-\(offset)-\(i)")))
            var inRoom = Fixture.message(i % 5 == 0 ? nil : "room \(i)", at: at, conversation: room,
                                         from: "\(room)/nick\(i % 4)", kind: .groupchat, stanzaId: "r-\(offset)-\(i)")
            if i % 5 == 0 { inRoom.subject = "topic \(i)" }
            events.append(.message(inRoom))
        }
        // A correction and a duplicate change no count.
        events.append(.message(Fixture.message("hello 1 (fixed)", at: offset + 90_000, stanzaId: "c-\(offset)",
                                               messageId: "mc-\(offset)", replaces: "m-\(offset)-1")))
        events.append(.message(Fixture.message("hello 2", at: offset + 2_000, stanzaId: "s-\(offset)-2", messageId: "m-\(offset)-2")))
        events.append(.chatState(ChatStateRecord(account: Fixture.account, conversation: Fixture.peer, from: Fixture.peer,
                                                 state: .composing, timestamp: Fixture.baseTime + offset)))
        return events
    }

    @Test func statsCountersEqualAFullScan() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking(mixedBatch(offset: 0))
        _ = try writer.commitBlocking(mixedBatch(offset: 500_000))
        // A failed batch leaves the counters as they were.
        var bad = Fixture.message("x")
        bad.account = ""
        #expect(throws: ArchiveError.self) { try writer.commitBlocking(mixedBatch(offset: 900_000) + [.message(bad)]) }

        let stats = try archive.reader().stats()
        let scan = try scanned(archive)
        #expect(scan.count == 3)
        #expect(sorted(stats.conversations) == sorted(scan))
        #expect(stats.totalMessages == 2 * 90)
        #expect(stats.conversations.first { $0.conversation.hasPrefix("room@") }?.senders == 4)
        #expect(stats.chatStates == 2)
    }

    /// The live agent's writer (`Durability.full`) keeps statement journals in memory and a 4 MiB page cache
    /// (docs/performance-history.md, "Live ingest and the agent's memory"); other writers (imports) keep SQLite's
    /// defaults. The counters stay exact through it.
    @Test func liveWriterKeepsStatementJournalsInMemory() throws {
        let archive = TemporaryArchive()
        func pragma(_ name: String, _ writer: ArchiveWriter) throws -> Int64 {
            try writer.perform { ingestor throws(ArchiveError) -> Int64 in
                var value: Int64 = 0
                do throws(SQLiteError) {
                    try ingestor.database.prepare("PRAGMA \(name)").forEachRow { row in
                        value = row.int(0)
                        return false
                    }
                } catch {
                    throw .sqlite(error)
                }
                return value
            }
        }
        #expect(try pragma("temp_store", archive.writer()) == 0)
        let writer = try ArchiveWriter(path: archive.path, durability: .full)
        #expect(try pragma("temp_store", writer) == 2)
        #expect(try pragma("cache_size", writer) == -Int64(ArchiveWriter.liveCacheKiB))
        _ = try writer.commitBlocking(mixedBatch(offset: 0))
        _ = try writer.commitBlocking(mixedBatch(offset: 500_000))
        #expect(sorted(try archive.reader().stats().conversations) == sorted(try scanned(archive)))
        #expect(try archive.reader().stats().totalMessages == 2 * 90)
    }

    @Test func migrationFillsTheCountersFromExistingRows() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer().commitBlocking(mixedBatch(offset: 0))
        // Back to an archive of version 7 (before `SchemaV10`) with rows, as an older roost left it; the next writer migrates it.
        let database = try Database(path: archive.path, mode: .readWrite)
        try database.execute("""
            DROP TRIGGER messages_count_insert; DROP TRIGGER messages_count_delete; DROP TRIGGER messages_count_body;
            DROP TRIGGER chat_states_count_insert; DROP TRIGGER chat_states_count_delete;
            DROP TRIGGER presence_log_count_insert; DROP TRIGGER presence_log_count_delete;
            DROP TRIGGER subscription_requests_count_insert; DROP TRIGGER subscription_requests_count_delete;
            DROP TABLE conversation_counts; DROP TABLE room_senders; DROP TABLE row_counts; DROP INDEX messages_account_message_id;
            DELETE FROM schema_migrations WHERE version = 10;
            """)
        // A reader of the unmigrated archive counts the slow way, with the same result.
        let before = try archive.reader().stats()
        #expect(sorted(before.conversations) == sorted(try scanned(archive)))
        _ = try archive.writer().commitBlocking(mixedBatch(offset: 500_000))
        let after = try archive.reader().stats()
        #expect(sorted(after.conversations) == sorted(try scanned(archive)))
        #expect(after.totalMessages == 180)
        #expect(after.chatStates == 2)
    }

    @Test func lateDecryptionCountsARoomSender() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let room = "room@conference.example.com"
        var locked = Fixture.message(nil, conversation: room, from: "\(room)/alice", kind: .groupchat, stanzaId: "e1")
        locked.encryption = MessageEncryption(scheme: "omemo", protocolNamespace: nil, senderDevice: 1, fingerprint: nil,
                                              trust: nil, failure: "no session")
        guard case .inserted(let id) = try writer.commitBlocking([.message(locked)])[0] else { Issue.record("not inserted"); return }
        #expect(try archive.reader().stats().conversations.first?.senders == 0)
        let decryption = MessageDecryption(messageID: id, body: "secret", encryption: MessageEncryption(
            scheme: "omemo", protocolNamespace: nil, senderDevice: 1, fingerprint: nil, trust: "trusted", failure: nil))
        _ = try writer.commitBlocking([.messageDecrypted(decryption)])
        #expect(try archive.reader().stats().conversations.first?.senders == 1)
        #expect(sorted(try archive.reader().stats().conversations) == sorted(try scanned(archive)))
    }

    @Test func correctionLookupSeeksIndexes() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer().commitBlocking([.message(Fixture.message("x", messageId: "m1"))])
        let database = try Database(path: archive.path, mode: .readOnly)
        var plan: [String] = []
        try database.prepare("""
            EXPLAIN QUERY PLAN SELECT id FROM messages
            WHERE id IN (SELECT id FROM messages INDEXED BY messages_account_message_id
                             WHERE account_id = 1 AND conversation = 'peer@example.com' AND message_id = 'm1'
                         UNION ALL
                         SELECT id FROM messages INDEXED BY messages_origin
                             WHERE account_id = 1 AND origin_id = 'm1' AND conversation = 'peer@example.com')
            ORDER BY id DESC LIMIT 1
            """).forEachRow { row in
            plan.append(row.text(3))
            return true
        }
        #expect(plan.contains { $0.contains("messages_account_message_id (account_id=? AND conversation=? AND message_id=?)") })
        #expect(plan.contains { $0.contains("messages_origin (account_id=? AND origin_id=?)") })
        #expect(!plan.contains { $0.contains("SCAN messages") })
    }

    /// Reactions, replies and markers find their message by three index seeks (`SchemaV11` dropped the
    /// conversation-first id indexes; without the pinned plan the planner walks the conversation).
    @Test func annotationLookupSeeksIndexes() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer().commitBlocking([.message(Fixture.message("x", messageId: "m1"))])
        let database = try Database(path: archive.path, mode: .readOnly)
        var plan: [String] = []
        try database.prepare("EXPLAIN QUERY PLAN " + Ingestor.annotationTargetSQL).forEachRow([
            .integer(1), .text("peer@example.com"), .text("m1"), .integer(0),
        ]) { row in
            plan.append(row.text(3))
            return true
        }
        #expect(plan.contains { $0.contains("messages_account_message_id (account_id=? AND conversation=? AND message_id=?)") }, "\(plan)")
        #expect(plan.contains { $0.contains("messages_origin (account_id=? AND origin_id=?)") }, "\(plan)")
        #expect(plan.contains { $0.contains("messages_stanza_id (conversation=? AND stanza_id=?)") }, "\(plan)")
        #expect(!plan.contains { $0.contains("SCAN") || $0.contains("messages_account_conversation") }, "\(plan)")
    }

    /// `SchemaV11` drops the two redundant id indexes of an existing archive; lookups by those ids still work.
    @Test func migrationDropsTheRedundantIDIndexes() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer().commitBlocking([.message(Fixture.message("first", originId: "o-1", messageId: "m-1"))])
        // Back to version 10, as the previous roost left it.
        let database = try Database(path: archive.path, mode: .readWrite)
        try database.execute("""
            CREATE INDEX messages_message_id ON messages(conversation, message_id) WHERE message_id IS NOT NULL;
            CREATE INDEX messages_origin_id ON messages(conversation, origin_id) WHERE origin_id IS NOT NULL;
            DELETE FROM schema_migrations WHERE version = 11;
            """)
        func indexes() throws -> Set<String> {
            var names: Set<String> = []
            try database.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'messages'").forEachRow { row in
                names.insert(row.text(0))
                return true
            }
            return names
        }
        #expect(try indexes().isSuperset(of: ["messages_message_id", "messages_origin_id"]))
        let writer = try archive.writer()
        #expect(try indexes().isDisjoint(with: ["messages_message_id", "messages_origin_id"]))
        #expect(try Migrator.currentVersion(database) == Migrator.latestVersion)
        let correction = Fixture.message("first, fixed", at: 9_000, messageId: "m-fix", replaces: "o-1")
        guard case .corrected = try writer.commitBlocking([.message(correction)])[0] else { Issue.record("correction by origin-id not applied"); return }
    }

    @Test func correctionFoundByOriginIDAmongManyMessages() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        var batch: [ArchiveEvent] = [.message(Fixture.message("first", originId: "o-target", messageId: "m-target"))]
        for i in 0..<500 { batch.append(.message(Fixture.message("filler \(i)", at: Int64(i + 1) * 10, messageId: "f\(i)"))) }
        let outcomes = try writer.commitBlocking(batch)
        guard case .inserted(let id) = outcomes[0] else { Issue.record("\(outcomes[0])"); return }
        let byOrigin = Fixture.message("first, fixed", at: 9_000, messageId: "m-fix", replaces: "o-target")
        #expect(try writer.commitBlocking([.message(byOrigin)]) == [.corrected(id: id, revision: 1)])
        let byID = Fixture.message("first, fixed again", at: 9_500, messageId: "m-fix2", replaces: "m-target")
        #expect(try writer.commitBlocking([.message(byID)]) == [.corrected(id: id, revision: 2)])
    }

    @Test func importLeavesNoWriteAheadLog() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer().commitBlocking([.message(Fixture.message("already here", stanzaId: "x0"))])
        // A reader stays open during the import, as a running agent's would: SQLite would not checkpoint at close.
        let reader = try archive.reader()
        let file = archive.folder + "/history.jsonl"
        var lines = ""
        for i in 0..<300 {
            lines += #"{"version":1,"event":"message","account":"me@example.org","conversation":"peer@example.com","direction":"in","type":"chat","from":"peer@example.com/phone","to":"me@example.org","timestamp":"2026-01-15T12:00:\#(String(format: "%02d", i % 60)).000Z","received_at":"2026-01-15T12:00:00.000Z","body":"imported \#(i)","message_id":"imp-\#(i)","source":"import"}"#
            lines += "\n"
        }
        try lines.write(toFile: file, atomically: true, encoding: .utf8)
        let summary = try ArchiveImporter(archivePath: archive.path).importJSONLines(from: file)
        #expect(summary.messages == 300)
        var info = stat()
        let walSize = stat(archive.path + "-wal", &info) == 0 ? Int64(info.st_size) : 0
        #expect(walSize == 0)
        #expect(try reader.stats().totalMessages == 301)
    }

    @Test func streamedSearchGivesTheCollectedRows() throws {
        let archive = TemporaryArchive()
        var batch: [ArchiveEvent] = []
        for i in 0..<120 { batch.append(.message(Fixture.message(i % 2 == 0 ? "apple \(i)" : "pear \(i)", at: Int64(i) * 1_000))) }
        _ = try archive.writer().commitBlocking(batch)
        let reader = try archive.reader()
        for (limit, offset) in [(50, 0), (Int.max / 2, 0), (10, 55)] {
            var streamed: [Int64] = []
            try reader.search(query: "apple", limit: limit, offset: offset) { row in
                streamed.append(row.id)
                return true
            }
            #expect(streamed == (try reader.search(query: "apple", limit: limit, offset: offset)).map(\.id))
        }
        var first: [Int64] = []
        try reader.search(query: "apple", limit: 0) { _ in Issue.record("limit 0 in the library means none"); return true }
        try reader.search(query: "apple", limit: 100) { row in first.append(row.id); return first.count < 3 }
        #expect(first.count == 3)
    }

    /// `roost count` answers words alone from the index and no query from the counters: both equal what search
    /// finds (and a count with a filter, which reads the rows). Fails if either shortcut counts something else.
    @Test func countShortcutsEqualSearch() throws {
        let archive = TemporaryArchive()
        var batch: [ArchiveEvent] = []
        for i in 0..<90 {
            batch.append(.message(Fixture.message(i % 3 == 0 ? "apple pie \(i)" : "pear \(i)", at: Int64(i) * 1_000,
                                                  direction: i % 2 == 0 ? .incoming : .outgoing,
                                                  conversation: i % 4 == 0 ? "other@example.com" : "bob@example.com",
                                                  stanzaId: "c-\(i)")))
        }
        _ = try archive.writer().commitBlocking(batch)
        let reader = try archive.reader()
        for query in ["apple", "pear", "apple pie", "\"apple pie\"", "pie OR pear", "apple -pie", "is:in apple", "with:other@example.com pear"] {
            #expect(try reader.count(query: query) == (try reader.search(query: query, limit: 1_000)).count, "\(query)")
        }
        #expect(try reader.count(query: "") == 90)
        #expect(try reader.count(query: "apple") == 30)
        #expect(try reader.count(query: "", account: Fixture.account) == 90)
    }
}
