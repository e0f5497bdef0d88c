import Foundation
import RoostCore
import RoostArchive
import RoostTestSupport
import Testing

/// What docs/import.md promises for an interrupted import: a kill -9 in the middle of a real `roost import`
/// leaves a consistent archive (whole transactions only: rows, full-text entries and stats counters together),
/// and running the same import again completes it exactly once.
@Suite struct ZeroLossImportCrashTests {
    @Test func importKilledMidwayCompletesExactlyOnceWhenRunAgain() async throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/history.jsonl"
        let total = 120_000
        let prefix = "crash-\(UUID().uuidString.prefix(6))"
        try await offPool { try ImportFile.write(file, account: "me@example.org", count: total, prefix: prefix) }
        let importer = try RoostBinary.start(["import", "--config", sandbox.config, file])
        defer { importer.stop(signal: SIGKILL) }
        // Killed as soon as a first transaction has committed (the import is under way, with more to write).
        let killed = try await killWhen(importer.pid, archive: sandbox.archive, within: 600) { database throws(SQLiteError) in
            try database.cached("SELECT count(*) FROM messages").scalarInt() ?? 0 > 0
        }
        #expect(killed, "no batch was committed within 600 s: \(importer.stderrSoFar.suffix(2000))")
        try await waitUntil("the importer to die", timeout: .seconds(30)) { !importer.isRunning }
        let partial = try ZeroLossSQL.count(sandbox.archive, "messages")
        #expect(partial > 0 && partial < total, "the kill must land mid-import (\(partial) of \(total) were committed)")
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        // Whole transactions only: each committed row has its full-text entry and its share of the counters.
        #expect(try ZeroLossSQL.count(sandbox.archive, "message_fts_docsize") == partial)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT coalesce(sum(messages), 0) FROM conversation_counts") == partial)

        let again = try await offPool { try sandbox.roost(["import", file], timeout: 900) }
        #expect(again.status == 0, "\(again.stderr)")
        let summary = again.stdout.replacingOccurrences(of: ",", with: "")
        #expect(summary.contains("imported \(total - partial) new messages (\(partial) already archived)"), "\(again.stdout)")
        #expect(try ZeroLossSQL.count(sandbox.archive, "messages") == total)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(DISTINCT message_id) FROM messages WHERE message_id LIKE '\(prefix)-%'") == total)
        #expect(try ZeroLossSQL.count(sandbox.archive, "message_fts_docsize") == total)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT sum(messages) FROM conversation_counts") == total)
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        // A message from each side of the kill is found by search.
        for number in [1, total] {
            let found = try sandbox.roost(["search", "--json", "\"imported \(number)\""])
            #expect(found.status == 0 && found.stdout.contains("\"imported \(number)\""), "\(found.stdout)\(found.stderr)")
        }
    }

    /// An import into an empty archive drops its random-key indexes for the load and builds them at the end
    /// (`DeferredIndexes`). Killed while it builds them, every row is committed but the indexes are missing: the
    /// archive must still be consistent, readable, and the next writer to open it (here the same import run again,
    /// an agent alike) must build them before it writes, and add nothing twice.
    @Test func importKilledWhileBuildingItsIndexesLeavesAUsableArchive() async throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/history.jsonl"
        let total = 120_000
        let prefix = "build-\(UUID().uuidString.prefix(6))"
        try await offPool { try ImportFile.write(file, account: "me@example.org", count: total, prefix: prefix) }
        let importer = try RoostBinary.start(["import", "--config", sandbox.config, file])
        defer { importer.stop(signal: SIGKILL) }
        // Killed once every row is committed while the indexes are still missing: the index build is under way.
        let killed = try await killWhen(importer.pid, archive: sandbox.archive, within: 900) { database throws(SQLiteError) in
            let rows = try database.cached("SELECT count(*) FROM messages").scalarInt()
            let indexes = try database.cached("SELECT count(*) FROM sqlite_master WHERE name = 'messages_dedup'").scalarInt()
            return rows == Int64(total) && indexes == 0
        }
        #expect(killed, "the import was never seen between its last commit and its index build: \(importer.stderrSoFar.suffix(2000))")
        try await waitUntil("the importer to die", timeout: .seconds(30)) { !importer.isRunning }
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
        #expect(try ZeroLossSQL.count(sandbox.archive, "messages") == total)
        #expect(try ZeroLossSQL.count(sandbox.archive, "message_fts_docsize") == total)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT sum(messages) FROM conversation_counts") == total)
        // The kill landed before the build committed: the indexes are missing.
        let indexes = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('messages_trusted_stanza_id', 'messages_dedup', "
            + "'messages_account_message_id', 'messages_origin', 'messages_stanza_id', 'messages_conversation', 'messages_from')"
        #expect(try ZeroLossSQL.scalar(sandbox.archive, indexes) == 0)
        // Readable as it is.
        let found = try sandbox.roost(["search", "--json", "\"imported \(total)\""])
        #expect(found.status == 0 && found.stdout.contains("\"imported \(total)\""), "\(found.stdout)\(found.stderr)")
        #expect(found.stderr.contains("the archive lacks 7 indexes an import builds at its end"), "said why reads may be slow: \(found.stderr)")

        let again = try await offPool { try sandbox.roost(["import", file], timeout: 900) }
        #expect(again.status == 0, "\(again.stderr)")
        let summary = again.stdout.replacingOccurrences(of: ",", with: "")
        #expect(summary.contains("imported 0 new messages (\(total) already archived)"), "\(again.stdout)")
        #expect(try ZeroLossSQL.scalar(sandbox.archive, indexes) == 7)
        let after = try sandbox.roost(["search", "--json", "\"imported \(total)\""])
        #expect(after.status == 0 && !after.stderr.contains("lacks"), "\(after.stderr)")
        #expect(try ZeroLossSQL.count(sandbox.archive, "messages") == total)
        #expect(try ZeroLossSQL.scalar(sandbox.archive, "SELECT count(DISTINCT message_id) FROM messages WHERE message_id LIKE '\(prefix)-%'") == total)
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
    }
}
