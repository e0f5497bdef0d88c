import Foundation
import RoostCore
import RoostArchive
import RoostTestSupport
import Testing

/// `roost backup` and `roost restore` as a user runs them (docs/backup.md): summaries, --json, exit statuses,
/// refusals, and a backup killed with SIGKILL half-way leaving no file that passes for a backup.
@Suite struct BackupCLITests {
    @Test func backupVerifyAndRestoreFromTheCommandLine() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        let stored = try FileStore(archivePath: sandbox.archive).put(Data("an attachment\n".utf8))
        let file = sandbox.folder + "/roost.backup"
        let made = try sandbox.roost(["backup", file, "--json"])
        #expect(made.status == 0, "\(made.stderr)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])
        let messages = try ZeroLossSQL.count(sandbox.archive, "messages")
        #expect(summary["messages"] as? Int == messages && summary["files"] as? Int == 1 && summary["format_version"] as? Int == 1, "\(summary)")
        #expect(summary["omemo"] as? Bool == false, "no key store beside this archive")

        let verified = try sandbox.roost(["backup", "--verify", file])
        #expect(verified.status == 0 && verified.stdout.contains("a valid backup") && verified.stdout.contains("\(messages) messages"), "\(verified.stdout)\(verified.stderr)")

        let target = sandbox.folder + "/restored/archive.sqlite"
        let restored = try sandbox.roost(["restore", file, "--to", target])
        #expect(restored.status == 0 && restored.stdout.contains("restored \(messages) messages"), "\(restored.stdout)\(restored.stderr)")
        #expect(try ZeroLossSQL.count(target, "messages") == messages)
        #expect(FileManager.default.contents(atPath: FileStore(archivePath: target).path(forSHA256: stored.sha256)) == Data("an attachment\n".utf8))
        // Never over an existing archive, the configured one included.
        let again = try sandbox.roost(["restore", file, "--to", target])
        #expect(again.status == 1 && again.stderr.contains("\(target) exists"), "\(again.stderr)")
        let overConfigured = try sandbox.roost(["restore", file])
        #expect(overConfigured.status == 1 && overConfigured.stderr.contains("\(sandbox.archive) exists"), "\(overConfigured.stderr)")
        // --no-files leaves the store out.
        let small = try sandbox.roost(["backup", "--no-files", "--json", sandbox.folder + "/small.backup"])
        #expect(small.status == 0 && small.stdout.contains("\"files\":0"), "\(small.stdout)\(small.stderr)")
    }

    @Test func usageMistakesAndDamagedBackupsExitAsDocumented() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        #expect(try sandbox.roost(["backup"]).status == 2)
        #expect(try sandbox.roost(["backup", "a", "b"]).status == 2)
        #expect(try sandbox.roost(["backup", "--verify", "--no-files", "a"]).status == 2)
        #expect(try sandbox.roost(["restore"]).status == 2)
        #expect(try sandbox.roost(["restore", "--to", "", "a"]).status == 2)
        let file = sandbox.folder + "/roost.backup"
        #expect(try sandbox.roost(["backup", file]).status == 0)
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        try whole.prefix(whole.count - 700).write(to: URL(fileURLWithPath: file + ".cut"))
        let cut = try sandbox.roost(["backup", "--verify", file + ".cut"])
        #expect(cut.status == 1 && cut.stderr.contains("not a valid Roost backup"), "\(cut.stderr)")
        let restoreCut = try sandbox.roost(["restore", file + ".cut", "--to", sandbox.folder + "/new/archive.sqlite"])
        #expect(restoreCut.status == 1 && !FileManager.default.fileExists(atPath: sandbox.folder + "/new/archive.sqlite"), "\(restoreCut.stderr)")
        let garbage = try sandbox.roost(["backup", "--verify", sandbox.config])
        #expect(garbage.status == 1 && garbage.stderr.contains("not a valid Roost backup"), "\(garbage.stderr)")
        let missing = try sandbox.roost(["backup", "--verify", sandbox.folder + "/nothing"])
        #expect(missing.status == 1 && missing.stderr.contains("No such file"), "\(missing.stderr)")
        let overArchive = try sandbox.roost(["backup", sandbox.archive])
        #expect(overArchive.status == 1 && overArchive.stderr.contains("write the backup elsewhere"), "\(overArchive.stderr)")
        #expect(try ZeroLossSQL.integrity(sandbox.archive) == "ok")
    }

    /// --encrypt with the passphrase from backup_key_command: verify and restore read it the same way.
    @Test func encryptedBackupWithTheKeyCommand() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        let config = try String(contentsOfFile: sandbox.config, encoding: .utf8)
        try (config + "[backup]\nbackup_key_command = echo 'a long passphrase'\n").write(toFile: sandbox.config, atomically: true, encoding: .utf8)
        let file = sandbox.folder + "/secret.backup"
        let made = try sandbox.roost(["backup", "--encrypt", "--json", file])
        #expect(made.status == 0 && made.stdout.contains("\"encrypted\":true"), "\(made.stdout)\(made.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(bytes.prefix(8) == Data("ROOSTENC".utf8) && bytes.range(of: Data("manifest.json".utf8)) == nil)
        let verified = try sandbox.roost(["backup", "--verify", file])
        #expect(verified.status == 0 && verified.stdout.contains("a valid backup"), "\(verified.stdout)\(verified.stderr)")
        let target = sandbox.folder + "/restored/archive.sqlite"
        let restored = try sandbox.roost(["restore", "--to", target, file])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try ZeroLossSQL.count(target, "messages") == ZeroLossSQL.count(sandbox.archive, "messages"))
        try (config + "[backup]\nbackup_key_command = echo 'another passphrase'\n").write(toFile: sandbox.config, atomically: true, encoding: .utf8)
        let wrong = try sandbox.roost(["backup", "--verify", file])
        #expect(wrong.status == 1 && wrong.stderr.contains("the passphrase does not open this backup"), "\(wrong.stderr)")
        #expect(try sandbox.roost(["backup", "--verify", "--encrypt", file]).status == 2)
    }

    /// The backup is written under a temporary name and renamed only when whole: killed half-way, no FILE exists,
    /// and what is left is no valid backup.
    @Test func backupKilledHalfWayLeavesNoValidFile() async throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        // A large stored file (sparse: no disk written here), so the kill lands while the tar is being written.
        let name = String(repeating: "ab", count: 32)
        let big = FileStore(archivePath: sandbox.archive).path(forSHA256: name)
        try FileManager.default.createDirectory(atPath: (big as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, 2_000_000_000) == 0)
        let folder = sandbox.folder + "/backups"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/roost.backup"
        let backup = try RoostBinary.start(["backup", "--config", sandbox.config, file])
        defer { backup.stop(signal: SIGKILL) }
        @Sendable func partial() -> String? {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).first { $0.hasPrefix("roost.backup.tmp-") && !$0.hasSuffix(".d") }
        }
        @Sendable func size(_ name: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? Int) ?? 0 }
        // Watched on a thread of its own (killWhen): a cooperative pool busy with other tests could be late by the
        // whole backup.
        let killed = try await killWhen(backup.pid, within: 120, every: 2_000) {
            { partial().map { size($0) > 10_000_000 } ?? false }
        }
        #expect(killed, "the backup was never seen half-way: \(backup.stderrSoFar)")
        try await waitUntil("the backup to die", timeout: .seconds(30)) { !backup.isRunning }
        #expect(!FileManager.default.fileExists(atPath: file), "a backup killed half-way must not be at FILE")
        let left = try #require(partial(), "killed before it finished: its temporary file is there")
        let check = try sandbox.roost(["backup", "--verify", folder + "/" + left])
        #expect(check.status == 1 && check.stderr.contains("not a valid Roost backup"), "\(check.stderr)")
    }
}
