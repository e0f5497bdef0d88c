import Foundation
@testable import RoostArchive
import Testing

/// The bulk path of an import into an empty archive (`DeferredIndexes`, `BulkKeys`): the same outcomes as the
/// indexed path, the indexes back at the end or at the next open, and another writer never missed.
@Suite("Bulk load without the random-key indexes")
struct BulkLoadTests {
    static let deferred = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('messages_trusted_stanza_id', "
        + "'messages_dedup', 'messages_account_message_id', 'messages_origin', 'messages_stanza_id', 'messages_conversation', 'messages_from')"

    static func indexCount(_ path: String) throws -> Int64 {
        try Database(path: path, mode: .readOnly).cached(deferred).scalarInt() ?? -1
    }

    /// Duplicates by trusted stanza-id and by dedup key, an untrusted copy later given its stanza-id, corrections
    /// by message id and origin-id (and one by another sender), in three batches.
    static let batches: [[ArchiveEvent]] = [
        [
            .message(Fixture.message("one", at: 0, stanzaId: "s1", messageId: "m1")),
            .message(Fixture.message("two", at: 1, stanzaId: "s2", originId: "o2", messageId: "m2")),
            .message(Fixture.message("untrusted", at: 2, stanzaId: "u3", trusted: false, messageId: "m3")),
            .message(Fixture.message("one", at: 0, stanzaId: "s1", messageId: "m1")),
        ],
        [
            .message(Fixture.message("untrusted", at: 2, stanzaId: "s3", messageId: "m3")),
            .message(Fixture.message("untrusted", at: 2, stanzaId: "u3", trusted: false, messageId: "m3")),
            .message(Fixture.message("one, corrected", at: 10, stanzaId: "s4", messageId: "m4", replaces: "m1")),
            .message(Fixture.message("two, corrected", at: 11, stanzaId: "s5", messageId: "m5", replaces: "o2")),
            .message(Fixture.message("forged", at: 12, from: "mallory@example.com/x", stanzaId: "s6", messageId: "m6", replaces: "m2")),
        ],
        [
            .message(Fixture.message("one, corrected", at: 10, stanzaId: "s4", messageId: "m4", replaces: "m1")),
            .message(Fixture.message("other chat", at: 20, conversation: "Other@Example.com", stanzaId: "s9", messageId: "m1")),
            .message(Fixture.message("other chat again", at: 21, conversation: "other@example.com", messageId: "m7", replaces: "m1")),
            .message(Fixture.message("s3", at: 22, stanzaId: "s3", messageId: "m3")),
        ],
    ]

    static let rows = "SELECT id, conversation, body, stanza_id, stanza_id_trusted, origin_id, message_id, edited FROM messages ORDER BY id"

    static func dump(_ path: String) throws -> [String] {
        var lines: [String] = []
        try Database(path: path, mode: .readOnly).cached(rows).forEachRow { row in
            lines.append((0..<8).map { row.optionalText($0) ?? "-" }.joined(separator: "|"))
            return true
        }
        return lines
    }

    @Test func sameOutcomesAndRowsAsTheIndexedPath() throws {
        let bulk = TemporaryArchive(), indexed = TemporaryArchive()
        var bulkOutcomes: [InsertOutcome] = [], indexedOutcomes: [InsertOutcome] = []
        do {
            let writer = try bulk.writer()
            writer.beginBulkLoad()
            #expect(writer.isDeferringIndexes)
            #expect(try Self.indexCount(bulk.path) == 0)
            for batch in Self.batches { bulkOutcomes += try writer.commitBlocking(batch) }
            try writer.endBulkLoad()
            #expect(!writer.isDeferringIndexes)
        }
        do {
            let writer = try indexed.writer()
            for batch in Self.batches { indexedOutcomes += try writer.commitBlocking(batch) }
        }
        #expect(bulkOutcomes == indexedOutcomes)
        #expect(bulkOutcomes.filter { if case .corrected = $0 { true } else { false } }.count == 3)
        #expect(bulkOutcomes.filter { if case .duplicate = $0 { true } else { false } }.count == 5)
        #expect(try Self.dump(bulk.path) == Self.dump(indexed.path))
        #expect(try Self.indexCount(bulk.path) == 7)
        #expect(try ArchiveCount.integrity(bulk.path) == "ok")
    }

    @Test func aNonEmptyArchiveKeepsItsIndexes() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.message(Fixture.message("first", stanzaId: "s1"))])
        writer.beginBulkLoad()
        #expect(!writer.isDeferringIndexes)
        #expect(try Self.indexCount(archive.path) == 7)
        try writer.endBulkLoad()
    }

    /// The rule that decides whether a load drops the indexes grows with the archive (`ArchiveWriter.deferralRatio`:
    /// 4 stored rows per imported one below 1M, 8 below 5M, 12 from there; keeping the indexes costs more per
    /// message the larger the archive) and stops where the keys would no longer fit `maxKeyedRows`.
    @Test func theDeferralRuleGrowsWithTheArchive() {
        let plenty: Int64 = 1 << 40  // the ratio and the row bound alone (the machine's memory is checked below)
        #expect(ArchiveWriter.defersIndexes(stored: 0, expected: 0, availableMemory: plenty))
        #expect(ArchiveWriter.defersIndexes(stored: 0, expected: 20_000_000, availableMemory: plenty))
        #expect(!ArchiveWriter.defersIndexes(stored: 1, expected: 0, availableMemory: plenty))
        // Small archives: 4 at most.
        #expect(ArchiveWriter.defersIndexes(stored: 400_000, expected: 100_000, availableMemory: plenty))
        #expect(!ArchiveWriter.defersIndexes(stored: 500_000, expected: 100_000, availableMemory: plenty))
        // 1M into 3M: 3 is under 8; 10k into 100k stays indexed.
        #expect(ArchiveWriter.defersIndexes(stored: 3_000_000, expected: 1_000_000, availableMemory: plenty))
        #expect(!ArchiveWriter.defersIndexes(stored: 100_000, expected: 10_000, availableMemory: plenty))
        #expect(!ArchiveWriter.defersIndexes(stored: 3_000_000, expected: 300_000, availableMemory: plenty))
        // 1M into 10M (10 stored a message) defers; 100k into 10M (100) keeps its indexes.
        #expect(ArchiveWriter.defersIndexes(stored: 10_000_000, expected: 1_000_000, availableMemory: plenty))
        #expect(!ArchiveWriter.defersIndexes(stored: 10_000_000, expected: 100_000, availableMemory: plenty))
        #expect(!ArchiveWriter.defersIndexes(stored: 13_000_000, expected: 1_000_000, availableMemory: plenty))
        // The keys of 17M rows are past the memory bound, whatever the ratio.
        #expect(!ArchiveWriter.defersIndexes(stored: 15_000_000, expected: 2_000_000, availableMemory: plenty))
        #expect(ArchiveWriter.defersIndexes(stored: 14_000_000, expected: 2_000_000, availableMemory: plenty))
        // On a machine with 2 GB available the keys of 11M rows (1.4 GB) would take more than half: the indexes stay.
        #expect(!ArchiveWriter.defersIndexes(stored: 10_000_000, expected: 1_000_000, availableMemory: 2_000_000_000))
        #expect(ArchiveWriter.defersIndexes(stored: 10_000_000, expected: 1_000_000, availableMemory: 3_000_000_000))
        // An empty archive defers whatever the memory (its keys are the import's own, as before).
        #expect(ArchiveWriter.defersIndexes(stored: 0, expected: 20_000_000, availableMemory: 1_000_000))
        #expect(ArchiveWriter.availableMemory() ?? 0 > 0, "this machine's /proc/meminfo has MemAvailable")
    }

    /// `secure_delete` is `FAST` during a load (freed pages are not zeroed and written) and back afterwards.
    @Test func secureDeleteIsRestoredAfterTheLoad() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.message(Fixture.message("first", stanzaId: "s1"))])
        let setting = { () throws -> Int64? in
            try writer.perform { ingestor throws(ArchiveError) -> Int64? in
                do throws(SQLiteError) { return try ingestor.database.cached("PRAGMA secure_delete").scalarInt() } catch { throw .sqlite(error) }
            }
        }
        let before = try setting()
        writer.beginBulkLoad(expectedMessages: 1)
        #expect(try setting() == 2)
        _ = try writer.commitBlocking([.message(Fixture.message("second", stanzaId: "s2"))])
        try writer.endBulkLoad()
        #expect(try setting() == before)
        #expect(before != 2)
    }

    /// FTS5's `hashsize` and `automerge` are the bulk values during the load and its defaults after it: after
    /// `endBulkLoad`, after a writer abandoned mid-load, and, where a kill left the bulk values, at the next open.
    @Test func fullTextSettingsAreRestoredAfterTheLoad() throws {
        let archive = TemporaryArchive()
        func settings() throws -> [String] {
            var values: [String] = []
            try Database(path: archive.path, mode: .readOnly)
                .prepare("SELECT k || '=' || v FROM message_fts_config WHERE k IN ('hashsize', 'automerge') ORDER BY k").forEachRow { row in
                    values.append(row.text(0))
                    return true
                }
            return values
        }
        let bulk = ["automerge=16", "hashsize=67108864"], live = ["automerge=4", "hashsize=1048576"]
        do {
            let writer = try archive.writer()
            writer.beginBulkLoad(expectedMessages: 1)
            #expect(try settings() == bulk)
            _ = try writer.commitBlocking([.message(Fixture.message("one", stanzaId: "s1"))])
            try writer.endBulkLoad()
            #expect(try settings() == live)
            writer.beginBulkLoad(expectedMessages: 1)
            #expect(try settings() == bulk)
        }
        #expect(try settings() == live, "the abandoned writer's deinit")
        let database = try Database(path: archive.path, mode: .readWrite)
        try BulkFullTextSettings.set(database, BulkFullTextSettings.bulk)
        #expect(try settings() == bulk, "as a kill leaves them")
        _ = try archive.writer()
        #expect(try settings() == live)
    }

    /// Into an archive small against the load (`ArchiveWriter.deferralRatio`), the stored rows' keys are read
    /// first: duplicates of them, corrections of them and their untrusted copy given its stanza-id come out as
    /// with the indexes; so does an untrusted copy of a stored origin-id message (its key stored as the short
    /// form of `SchemaV13`, read back in full).
    @Test func aSmallArchiveLoadsItsKeysAndDefers() throws {
        let batches = Self.batches + [[.message(Fixture.message("two", at: 1, stanzaId: "u9", trusted: false, originId: "o2", messageId: "m2"))]]
        let bulk = TemporaryArchive(), indexed = TemporaryArchive()
        var bulkOutcomes: [InsertOutcome] = [], indexedOutcomes: [InsertOutcome] = []
        do {
            let writer = try bulk.writer()
            bulkOutcomes += try writer.commitBlocking(batches[0])
            writer.beginBulkLoad(expectedMessages: 9)
            #expect(writer.isDeferringIndexes)
            #expect(try Self.indexCount(bulk.path) == 0)
            for batch in batches.dropFirst() { bulkOutcomes += try writer.commitBlocking(batch) }
            try writer.endBulkLoad()
        }
        do {
            let writer = try indexed.writer()
            for batch in batches { indexedOutcomes += try writer.commitBlocking(batch) }
        }
        #expect(bulkOutcomes == indexedOutcomes)
        #expect(bulkOutcomes.filter { if case .duplicate = $0 { true } else { false } }.count == 6)
        #expect(try Self.dump(bulk.path) == Self.dump(indexed.path))
        #expect(try Self.indexCount(bulk.path) == 7)
        #expect(try ArchiveCount.integrity(bulk.path) == "ok")
    }

    /// An agent that opens the archive during the load builds the indexes first; the load sees its commit and
    /// goes on with the indexes, so a message both wrote is stored once.
    @Test func anotherWriterDuringTheLoadIsSeen() throws {
        let archive = TemporaryArchive()
        let importer = try archive.writer()
        importer.beginBulkLoad()
        _ = try importer.commitBlocking([.message(Fixture.message("imported", at: 0, stanzaId: "s1"))])
        #expect(try Self.indexCount(archive.path) == 0)
        let agent = try ArchiveWriter(path: archive.path, durability: .full)
        #expect(try Self.indexCount(archive.path) == 7)
        let live = try agent.commitBlocking([.message(Fixture.message("live", at: 5, stanzaId: "s2"))])
        guard case .inserted(let liveID) = live.first else {
            Issue.record("live message not inserted: \(live)")
            return
        }
        let again = try importer.commitBlocking([.message(Fixture.message("live", at: 5, stanzaId: "s2"))])
        #expect(again == [.duplicate(existingId: liveID)])
        #expect(!importer.isDeferringIndexes)
        try importer.endBulkLoad()
        #expect(try Database(path: archive.path, mode: .readOnly).cached("SELECT count(*) FROM messages").scalarInt() == 2)
    }

    /// A load that ended without `endBulkLoad` (a crash) leaves the indexes missing; the next writer builds them.
    @Test func theNextWriterBuildsMissingIndexes() throws {
        let archive = TemporaryArchive()
        do {
            let writer = try archive.writer()
            writer.beginBulkLoad()
            _ = try writer.commitBlocking([.message(Fixture.message("one", stanzaId: "s1"))])
        }
        // The writer's deinit built them (a load abandoned by an error); a kill would not: drop them as it leaves them.
        let database = try Database(path: archive.path, mode: .readWrite)
        try DeferredIndexes.drop(database)
        #expect(try Self.indexCount(archive.path) == 0)
        _ = try archive.writer()
        #expect(try Self.indexCount(archive.path) == 7)
    }
}

private enum ArchiveCount {
    static func integrity(_ path: String) throws -> String {
        var result = ""
        try Database(path: path, mode: .readOnly).cached("PRAGMA integrity_check").forEachRow { row in
            result = row.text(0)
            return false
        }
        return result
    }
}

/// `DeferredIndexes.definitions` must be exactly the indexes the migrations create: the bulk load drops and
/// rebuilds them from there, so a migration changing one without it would silently undo the change.
@Suite struct DeferredIndexesTests {
    private static func normalized(_ sql: String) -> String {
        sql.replacingOccurrences(of: "IF NOT EXISTS ", with: "").split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    private static func schema(_ path: String) throws -> [String: String] {
        var indexes: [String: String] = [:]
        try Database(path: path, mode: .readOnly).prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
            .forEachRow { row in
                indexes[row.text(0)] = normalized(row.text(1))
                return true
            }
        return indexes
    }

    @Test func definitionsAreWhatTheMigrationsCreate() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer()
        let migrated = try Self.schema(archive.path)
        for definition in DeferredIndexes.definitions {
            #expect(migrated[definition.name] == Self.normalized(definition.sql), "\(definition.name)")
        }
        // And a bulk load that dropped and rebuilt them leaves the same schema as the migrations.
        let bulk = TemporaryArchive()
        let writer = try bulk.writer()
        writer.beginBulkLoad()
        _ = try writer.commitBlocking([.message(Fixture.message("one", stanzaId: "s1", originId: "o1", messageId: "m1"))])
        try writer.endBulkLoad()
        #expect(try Self.schema(bulk.path) == migrated)
    }
}
