import Foundation
import RoostCore
import RoostTestSupport
import RoostXMPP
import Testing

/// What docs/backup.md promises: a backup taken while the agent archives a flood, restored into a new path,
/// resumes there — what arrived after the backup comes from the server archive (the catch-up marks are in the
/// backup), and every message of the flood is in the restored archive exactly once.
@Suite("Backup and restore during a flood", .serialized, .enabled(if: PrivateServer.isAvailable))
struct BackupEndToEndTests {
    @Test func restoredArchiveResumesWithTheWholeFloodExactlyOnce() async throws {
        let rig = try await ZeroLossRig.make()
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let prefix = "backup-\(UUID().uuidString.prefix(6))"
        let count = FaultSize.pick(suite: 1500, soak: 10_000)
        func stored(_ archive: String) throws -> Int { try ZeroLossSQL.count(archive, "messages WHERE message_id LIKE '\(prefix)-%'") }
        // Paced, so that the backup lands while the flood comes in.
        let flood = try PeerFlood(rig, to: rig.roostJID, count: count, prefix: prefix, perSecond: 100)
        try await waitUntil("part of the flood archived", timeout: .seconds(120)) { try stored(rig.archive) >= count / 5 }
        let file = rig.dir.path + "/mid-flood.backup"
        let backup = try await offPool { try RoostBinary.run(["backup", "--config", rig.config, "--json", file], timeout: 300) }
        #expect(backup.status == 0, "\(backup.stderr)")
        // No agent may run on the archive a restore writes.
        let refused = try await offPool { try RoostBinary.run(["restore", "--config", rig.config, file], timeout: 120) }
        #expect(refused.status == 1 && refused.stderr.contains("an agent (pid \(roost.pid)) runs on"), "\(refused.stderr)")
        try await flood.finish()
        let log = roost.stop().stderr

        let verified = try await offPool { try RoostBinary.run(["backup", "--verify", "--json", file], timeout: 300) }
        #expect(verified.status == 0, "\(verified.stderr)")
        let restored = rig.dir.path + "/restored/archive.sqlite"
        let restore = try await offPool { try RoostBinary.run(["restore", "--config", rig.config, "--to", restored], timeout: 300) }
        #expect(restore.status == 2, "FILE is required")
        let done = try await offPool { try RoostBinary.run(["restore", "--config", rig.config, "--to", restored, file], timeout: 300) }
        #expect(done.status == 0, "\(done.stderr)")
        let inBackup = try stored(restored)
        #expect(inBackup > 0 && inBackup < count, "the backup was taken mid-flood: \(inBackup) of \(count) in it")
        #expect(try ZeroLossSQL.integrity(restored) == "ok")

        // The agent on the restored archive fetches the rest from the server archive, adding nothing twice.
        let text = try String(contentsOfFile: rig.config, encoding: .utf8).replacingOccurrences(of: "path = \(rig.archive)", with: "path = \(restored)")
        let config = try rig.dir.write("restored.ini", text)
        let resumed = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { resumed.stop(signal: SIGKILL) }
        try await waitUntil("the whole flood in the restored archive", timeout: .seconds(300),
                            detail: { "\((try? stored(restored)) ?? -1) of \(count); \(resumed.stderrSoFar.suffix(2000))" }) {
            try stored(restored) >= count
        }
        try await RoostBinary.waitForServerArchiveRead(config: config, after: Date(), timeout: .seconds(300))
        let resumedLog = resumed.stop().stderr
        try ZeroLossRig.expectFloodExactlyOnce(restored, prefix: prefix, messages: count, chatStates: 0, log: log + resumedLog)
        #expect(try ZeroLossSQL.integrity(restored) == "ok")
    }
}

/// `[backup] every` (issue 34, 1): the agent makes a backup when the newest is older than `every`, as `roost backup`
/// writes one, and keeps the newest `keep` of its own (`roost-YYYYMMDD-HHMMSS.backup`), leaving other files alone.
@Suite("End to end: scheduled backups", .serialized, .enabled(if: PrivateServer.isAvailable))
struct ScheduledBackupEndToEndTests {
    @Test func agentBacksUpOnScheduleAndKeepsTheNewest() async throws {
        let rig = try await ZeroLossRig.make(general: "[backup]\nevery = 2s\nkeep = 2\n")
        let folder = (rig.archive as NSString).deletingLastPathComponent + "/backups"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let stray = folder + "/roost-mine.backup"
        #expect(FileManager.default.createFile(atPath: stray, contents: Data("not the agent's".utf8)))
        func scheduled() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.hasPrefix("roost-2") && $0.hasSuffix(".backup") }.sorted()
        }
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let prefix = "scheduled-\(UUID().uuidString.prefix(6))"
        try await PeerFlood(rig, to: rig.roostJID, count: 5, prefix: prefix).finish()
        func stored() throws -> Int { try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") }
        try await waitUntil("the messages archived", timeout: .seconds(60)) { try stored() == 5 }
        func written() -> Int { roost.stderrSoFar.components(separatedBy: "scheduled backup: wrote ").count - 1 }
        let before = written()
        try await waitUntil("three more scheduled backups made and two kept", timeout: .seconds(120),
                            detail: { "\(scheduled()); \(roost.stderrSoFar.suffix(2000))" }) {
            written() >= before + 3 && roost.stderrSoFar.contains("scheduled backup: removed ") && scheduled().count == 2
        }
        let log = roost.stop().stderr
        #expect(log.contains(" s)") && !log.contains("scheduled backup to "), "\(log.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: stray), "a file not named by the schedule was removed")
        let newest = try #require(scheduled().last)
        let verified = try await offPool { try RoostBinary.run(["backup", "--verify", "--json", folder + "/" + newest], timeout: 120) }
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect((verified.jsonLines.first?["messages"] as? Int ?? 0) >= 5, "\(verified.stdout)")
    }
}
