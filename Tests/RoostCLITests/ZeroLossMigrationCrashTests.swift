import Foundation
import RoostCore
import RoostArchive
import RoostTestSupport
import Testing

/// Schema v12 compresses every stored stanza of an existing archive, and v13 shortens its stored origin-id dedup
/// keys, in batches that commit on their own. A kill -9 in the middle of such a migration (a real `roost` process
/// opening an archive of the version before) must leave an archive that is consistent and readable as it is, and
/// the next open must finish the migration, losing nothing.
@Suite struct ZeroLossMigrationCrashTests {
    @Test func stanzaMigrationKilledMidwayFinishesOnNextOpen() async throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/history.jsonl"
        let total = 60_000
        let prefix = "mig-\(UUID().uuidString.prefix(6))"
        try await offPool { try ImportFile.write(file, account: "me@example.org", count: total, prefix: prefix, raw: true) }
        let imported = try await offPool { try sandbox.roost(["import", file], timeout: 900) }
        #expect(imported.status == 0, "\(imported.stderr)")
        let before = try await offPool { try exportedMessages(sandbox, "before") }
        #expect(before.count == total && before.allSatisfy { $0.contains(#""raw":"<message"#) })

        // The archive as schema v11 left it: every stanza as text, version 12 not recorded.
        do {
            let database = try Database(path: sandbox.archive, mode: .readWrite)
            try database.execute("UPDATE messages SET raw = roost_stanza(raw); DELETE FROM schema_migrations WHERE version = 12")
        }
        #expect(try blobs(sandbox.archive) == 0)

        // Any command that opens the archive for writing migrates it first; re-importing the same file adds nothing.
        let migrating = try RoostBinary.start(["import", "--config", sandbox.config, file])
        defer { migrating.stop(signal: SIGKILL) }
        let killed = try await killWhen(migrating.pid, archive: sandbox.archive, within: 600) { database throws(SQLiteError) in
            try database.cached("SELECT count(*) FROM messages WHERE typeof(raw) = 'blob'").scalarInt() ?? 0 > 0
        }
        #expect(killed, "no migration batch was committed within 600 s: \(migrating.stderrSoFar.suffix(2000))")
        try await waitUntil("the migrating process to die", timeout: .seconds(30)) { !migrating.isRunning }
        let partial = try blobs(sandbox.archive)
        #expect(partial > 0 && partial < total, "the kill must land mid-migration (\(partial) of \(total) compressed)")
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(*) FROM schema_migrations WHERE version = 12") == 0)
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        // Half-migrated, the archive reads the same: every reader goes through the one accessor.
        #expect(try await offPool { try exportedMessages(sandbox, "half") } == before)

        let again = try await offPool { try sandbox.roost(["import", file], timeout: 900) }
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try blobs(sandbox.archive) == total)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(*) FROM schema_migrations WHERE version = 12") == 1)
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        #expect(try await offPool { try exportedMessages(sandbox, "after") } == before)
        let found = try sandbox.roost(["search", "--json", "\"imported \(total)\""])
        #expect(found.status == 0 && found.stdout.contains("\"imported \(total)\""), "\(found.stdout)\(found.stderr)")
    }

    /// Schema v13 replaces each stored origin-id dedup key by a marker, in batches, and makes `messages_dedup`
    /// partial. Killed midway, the archive must dedup exactly as before (a re-import adds nothing) and read the
    /// same; the next open finishes.
    @Test func dedupKeyMigrationKilledMidwayFinishesOnNextOpen() async throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/history.jsonl"
        let total = 60_000
        let prefix = "dk-\(UUID().uuidString.prefix(6))"
        try await offPool { try ImportFile.write(file, account: "me@example.org", count: total, prefix: prefix, originIds: true) }
        let imported = try await offPool { try sandbox.roost(["import", file], timeout: 900) }
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try marked(sandbox.archive) == total / 2)
        let before = try await offPool { try exportedMessages(sandbox, "before") }
        #expect(before.count == total)

        // The archive as schema v12 left it: every key in full, the full index, version 13 not recorded.
        do {
            let database = try Database(path: sandbox.archive, mode: .readWrite)
            try database.execute("""
                UPDATE messages SET dedup_key = roost_dedup_key(dedup_key, conversation, direction, type, from_jid, origin_id);
                DROP INDEX messages_dedup; CREATE INDEX messages_dedup ON messages(account_id, dedup_key);
                DELETE FROM schema_migrations WHERE version = 13
                """)
        }
        #expect(try marked(sandbox.archive) == 0)

        let migrating = try RoostBinary.start(["import", "--config", sandbox.config, file])
        defer { migrating.stop(signal: SIGKILL) }
        let killed = try await killWhen(migrating.pid, archive: sandbox.archive, within: 600) { database throws(SQLiteError) in
            try database.cached("SELECT count(*) FROM messages WHERE dedup_key = 'o'").scalarInt() ?? 0 > 0
        }
        #expect(killed, "no migration batch was committed within 600 s: \(migrating.stderrSoFar.suffix(2000))")
        try await waitUntil("the migrating process to die", timeout: .seconds(30)) { !migrating.isRunning }
        let partial = try marked(sandbox.archive)
        #expect(partial > 0 && partial < total / 2, "the kill must land mid-migration (\(partial) of \(total / 2) marked)")
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(*) FROM schema_migrations WHERE version = 13") == 0)
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        #expect(try await offPool { try exportedMessages(sandbox, "half") } == before)
        // Half-migrated, every key still finds its row: the fallback-key groups of verify see no duplicates.
        let reader = try ArchiveReader(path: sandbox.archive)
        #expect(try reader.duplicateFallbackKeys(account: "me@example.org").isEmpty)

        // The next open finishes the migration; re-importing the same file adds nothing.
        let again = try await offPool { try sandbox.roost(["import", file], timeout: 900) }
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(*) FROM messages") == total)
        #expect(try marked(sandbox.archive) == total / 2)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(*) FROM schema_migrations WHERE version = 13") == 1)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(*) FROM sqlite_master WHERE name = 'messages_dedup' AND sql LIKE '%WHERE%'") == 1)
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        #expect(try await offPool { try exportedMessages(sandbox, "after") } == before)
        #expect(try reader.duplicateFallbackKeys(account: "me@example.org").isEmpty)
    }

    private func marked(_ archive: String) throws -> Int {
        try ZeroLossSQL.scalar(archive, "SELECT count(*) FROM messages WHERE dedup_key = 'o'")
    }

    private func blobs(_ archive: String) throws -> Int {
        try ZeroLossSQL.scalar(archive, "SELECT count(*) FROM messages WHERE typeof(raw) = 'blob'")
    }

    private func exportedMessages(_ sandbox: ExportCLISandbox, _ name: String) throws -> [Substring] {
        let path = sandbox.folder + "/\(name).jsonl"
        let exported = try sandbox.roost(["export", "--format", "jsonl", "--output", path], timeout: 600)
        #expect(exported.status == 0, "\(exported.stderr)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").filter { $0.contains(#""event":"message""#) }
    }
}
