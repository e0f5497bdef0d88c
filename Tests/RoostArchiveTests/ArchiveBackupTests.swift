import Foundation
import Testing
@testable import RoostArchive
import RoostTestSupport

/// The backup container (docs/backup.md): what goes in, that standard tools read it, that a restore gives the
/// same archive, key store and files back, and that a truncated, damaged or foreign file is refused as a whole —
/// an error, never a crash, and nothing restored.
@Suite("Archive backups")
struct ArchiveBackupTests {
    /// An archive of 30 messages in three conversations, an OMEMO key store beside it, and two stored files.
    private func filledArchive() throws -> (TemporaryArchive, [StoredFile]) {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking((0..<30).map { i in
            .message(Fixture.message("backup message \(i)", at: Int64(i) * 1000, conversation: "peer\(i % 3)@example.com",
                                     stanzaId: "s-\(i)", messageId: "m-\(i)"))
        })
        let omemo = try Database(path: archive.folder + "/data/omemo.sqlite", mode: .readWrite)
        try omemo.execute("CREATE TABLE identity (key BLOB); INSERT INTO identity VALUES (x'0102030405')")
        let store = FileStore(archivePath: archive.path)
        let files = [try store.put(Data("a photo\n".utf8)), try store.put(Data(repeating: 7, count: 70_000))]
        return (archive, files)
    }

    private func backup(of archive: TemporaryArchive, includeFiles: Bool = true) throws -> String {
        let file = archive.folder + "/backup.tar"
        _ = try ArchiveBackup.create(archivePath: archive.path, to: file, includeFiles: includeFiles, roostVersion: "test")
        return file
    }

    @Test func backupHoldsArchiveKeysFilesAndManifestAndRestoresThem() throws {
        let (archive, files) = try filledArchive()
        let file = try backup(of: archive)
        let manifest = try ArchiveBackup.verify(file)
        #expect(manifest.messages == 30 && manifest.conversations == 3 && manifest.files == 2)
        #expect(manifest.roostVersion == "test" && manifest.formatVersion == 1)
        let names = manifest.members.map(\.name)
        #expect(names.prefix(2) == ["archive.sqlite", "omemo.sqlite"])
        #expect(Set(names.dropFirst(2)) == Set(files.map { "files/sha256/\($0.sha256.prefix(2))/\($0.sha256.dropFirst(2))" }))
        #expect(manifest.members.allSatisfy { $0.sha256.count == 64 })
        // Nothing left beside the backup but the backup itself.
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder).sorted() == ["backup.tar", "data"])

        // tar reads it, and sha256sum checks the manifest.
        let listing = try run("/usr/bin/tar", ["tf", file])
        #expect(listing.split(separator: "\n").map(String.init) == names + ["manifest.json", "manifest.json.sha256"])
        let unpacked = archive.folder + "/unpacked"
        try FileManager.default.createDirectory(atPath: unpacked, withIntermediateDirectories: true)
        _ = try run("/usr/bin/tar", ["xf", file, "-C", unpacked])
        #expect(try run("/usr/bin/sha256sum", ["-c", "manifest.json.sha256"], in: unpacked).contains("manifest.json: OK"))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: unpacked + "/manifest.json"))) as? [String: Any]
        #expect(json?["format_version"] as? Int == 1 && json?["messages"] as? Int == 30)

        let restored = archive.folder + "/restored/archive.sqlite"
        _ = try ArchiveBackup.restore(file, to: restored)
        // No staging folder left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder + "/restored").sorted() == ["archive.sqlite", "files", "omemo.sqlite"])
        let reader = try ArchiveReader(path: restored)
        #expect(try reader.stats().totalMessages == 30)
        let keys = try Database(path: archive.folder + "/restored/omemo.sqlite", mode: .readOnly)
        #expect(try keys.cached("SELECT length(key) FROM identity").scalarInt() == 5)
        for stored in files {
            let copy = FileStore(archivePath: restored).path(forSHA256: stored.sha256)
            #expect(FileManager.default.contents(atPath: copy) == FileManager.default.contents(atPath: stored.path))
        }
    }

    @Test func noFilesLeavesTheFileStoreOut() throws {
        let (archive, _) = try filledArchive()
        let manifest = try ArchiveBackup.verify(try backup(of: archive, includeFiles: false))
        #expect(manifest.files == 0 && manifest.members.map(\.name) == ["archive.sqlite", "omemo.sqlite"])
    }

    @Test func restoreRefusesAnExistingArchiveOrKeyStoreAndWritesNothing() throws {
        let (archive, _) = try filledArchive()
        let file = try backup(of: archive)
        #expect { try ArchiveBackup.restore(file, to: archive.path) } throws: { error in
            guard case BackupError.targetExists(let path) = error else { return false }
            return path == archive.path
        }
        let beside = archive.folder + "/data/other.sqlite"
        #expect { try ArchiveBackup.restore(file, to: beside) } throws: { error in
            guard case BackupError.targetExists(let path) = error else { return false }
            return path.hasSuffix("/omemo.sqlite")
        }
        #expect(!FileManager.default.fileExists(atPath: beside))
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder + "/data").allSatisfy { !$0.hasPrefix(".roost-restore") })
        // Nor does a backup replace the archive it copies.
        #expect(throws: BackupError.self) { try ArchiveBackup.create(archivePath: archive.path, to: archive.path, includeFiles: false, roostVersion: "test") }
        #expect(try ArchiveReader(path: archive.path).stats().totalMessages == 30)
    }

    /// A backup cut anywhere is refused, by verify and by restore, and restore leaves no archive behind.
    @Test func truncatedBackupsAreRefused() throws {
        let (archive, _) = try filledArchive()
        let file = try backup(of: archive)
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        var cuts = Set([0, 1, 511, 512, 513, 1024, whole.count - 1, whole.count - 512, whole.count - 1024, whole.count - 1025])
        var generator = SystemRandomNumberGenerator()
        while cuts.count < 60 { cuts.insert(Int.random(in: 0..<whole.count, using: &generator)) }
        let cut = archive.folder + "/cut.tar"
        for length in cuts.sorted() {
            try whole.prefix(length).write(to: URL(fileURLWithPath: cut))
            #expect(throws: BackupError.self, "cut at \(length) of \(whole.count)") { try ArchiveBackup.verify(cut) }
        }
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
        let target = archive.folder + "/fresh/archive.sqlite"
        #expect(throws: BackupError.self) { try ArchiveBackup.restore(cut, to: target) }
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder + "/fresh").isEmpty)
    }

    /// One changed byte anywhere — a header, a member's data or padding, the manifest, its hash, the end blocks —
    /// makes the backup invalid.
    @Test func everyChangedByteIsSeen() throws {
        let (archive, _) = try filledArchive()
        let file = try backup(of: archive)
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        // Every byte of the first header, every 13th of the last 4 KB (the manifest, its hash, the end blocks: all
        // their fields), and random ones (each a whole verify: a few hundred keep the suite short).
        var positions = Set(0..<512).union(stride(from: whole.count - 4096, to: whole.count, by: 13))
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 { positions.insert(Int.random(in: 0..<whole.count, using: &generator)) }
        let damaged = archive.folder + "/damaged.tar"
        var missed: [Int] = []
        for position in positions.sorted() {
            var bytes = whole
            bytes[position] ^= 0x20
            try bytes.write(to: URL(fileURLWithPath: damaged))
            do {
                _ = try ArchiveBackup.verify(damaged)
                missed.append(position)
            } catch {}
        }
        #expect(missed.isEmpty, "changes not seen at \(missed.prefix(20)) of \(whole.count) bytes")
        #expect(try ArchiveBackup.verify(file).messages == 30, "the intact file still verifies")
    }

    @Test func foreignFilesAreRefused() throws {
        let directory = TemporaryArchive()
        try FileManager.default.createDirectory(atPath: directory.folder, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let inputs: [String: Data] = [
            "empty": Data(),
            "text": Data("hello, this is not a backup\n".utf8),
            "garbage": Data((0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            "zeros": Data(count: 4096),
        ]
        for (name, bytes) in inputs {
            let path = directory.folder + "/" + name
            try bytes.write(to: URL(fileURLWithPath: path))
            #expect(throws: BackupError.self, "\(name)") { try ArchiveBackup.verify(path) }
        }
        // A tar of something else: standard tools' output, but no Roost backup.
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory.folder + "/archive.sqlite"))
        _ = try run("/usr/bin/tar", ["cf", directory.folder + "/other.tar", "-C", directory.folder, "archive.sqlite"])
        #expect(throws: BackupError.self) { try ArchiveBackup.verify(directory.folder + "/other.tar") }
        #expect(throws: BackupError.self) { try ArchiveBackup.verify(directory.folder) }
        #expect(throws: BackupError.self) { try ArchiveBackup.verify(directory.folder + "/missing") }
    }

    @Test func largeSizesUseAPaxHeaderAndOctalFieldsAreStrict() throws {
        // 8 GiB and more do not fit the ustar size field: the pax record carries it, with its own length right.
        let record = BackupTar.paxSizeRecord(9_000_000_000)
        #expect(String(decoding: record, as: UTF8.self) == "19 size=9000000000\n")
        #expect(try BackupTar.paxSize(record) == 9_000_000_000)
        #expect(throws: BackupError.self) { try BackupTar.paxSize(Array("99 size=1\n".utf8)) }
        #expect(BackupTar.octalValue(Array("00000001750\0".utf8)[...]) == 0o1750)
        #expect(BackupTar.octalValue(Array("0000000175x\0".utf8)[...]) == nil)
        #expect(BackupTar.octalValue(Array("7777777777777777777\0".utf8)[...]) == nil)
        let header = BackupTar.header(name: "archive.sqlite", size: 1234, mtime: 1_700_000_000)
        #expect(try BackupTar.parse(header)?.size == 1234)
    }

    /// --encrypt: nothing readable in the file, the passphrase needed, and each chunk authenticated with its
    /// place — cut at a chunk boundary, a chunk dropped or swapped, one byte changed: refused.
    @Test func encryptedBackupsNeedTheirPassphraseAndDetectTruncationAndReordering() throws {
        let (archive, _) = try filledArchive()
        // 2.5 MiB more in the file store: three chunks.
        var generator = SystemRandomNumberGenerator()
        _ = try FileStore(archivePath: archive.path).put(Data((0..<2_600_000).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        let file = archive.folder + "/secret.backup"
        _ = try ArchiveBackup.create(archivePath: archive.path, to: file, includeFiles: true, roostVersion: "test", passphrase: "correct horse")
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(ArchiveBackup.isEncrypted(file))
        #expect(whole.range(of: Data("manifest.json".utf8)) == nil && whole.range(of: Data("backup message".utf8)) == nil, "nothing in clear")
        #expect(try ArchiveBackup.verify(file, passphrase: { "correct horse" }).messages == 30)
        #expect { try ArchiveBackup.verify(file) } throws: { error in
            if case BackupError.passphraseNeeded = error { true } else { false }
        }
        #expect { try ArchiveBackup.verify(file, passphrase: { "wrong horse" }) } throws: { error in
            if case BackupError.wrongPassphrase = error { true } else { false }
        }
        let restored = archive.folder + "/restored/archive.sqlite"
        _ = try ArchiveBackup.restore(file, to: restored, passphrase: { "correct horse" })
        #expect(try ArchiveReader(path: restored).stats().totalMessages == 30)

        let header = BackupCipher.headerSize, sealed = BackupCipher.chunkSize + BackupCipher.tagSize
        #expect(whole.count > header + 2 * sealed && whole.count < header + 3 * sealed, "three chunks: \(whole.count)")
        let chunk = { (i: Int) in whole.subdata(in: (header + i * sealed)..<min(whole.count, header + (i + 1) * sealed)) }
        let variants: [String: Data] = [
            "cut after the first chunk": whole.prefix(header + sealed),
            "cut after the second chunk": whole.prefix(header + 2 * sealed),
            "cut inside the last chunk": whole.prefix(whole.count - 100),
            "the last chunk dropped": whole.prefix(header) + chunk(0) + chunk(1),
            "chunks swapped": whole.prefix(header) + chunk(0) + chunk(2) + chunk(1),
            "a chunk repeated": whole.prefix(header) + chunk(0) + chunk(0) + chunk(1) + chunk(2),
            "bytes appended": whole + Data([0]),
            "only the header": whole.prefix(header),
        ]
        let damaged = archive.folder + "/damaged.backup"
        for (what, bytes) in variants {
            try bytes.write(to: URL(fileURLWithPath: damaged))
            // Seen by the encryption itself (a chunk's tag, the last-chunk mark), before the tar is read.
            #expect("\(what)") { try ArchiveBackup.verify(damaged, passphrase: { "correct horse" }) } throws: { error in
                "\(error)".contains("encrypted chunk")
            }
        }
        for position in [0, 8, 9, 12, 30, header, header + 5000, header + sealed - 1, header + sealed + 7, whole.count - 1] {
            var bytes = whole
            bytes[position] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: damaged))
            #expect(throws: BackupError.self, "byte \(position) changed") { try ArchiveBackup.verify(damaged, passphrase: { "correct horse" }) }
        }
    }

    private func run(_ program: String, _ arguments: [String], in directory: String? = nil) throws -> String {
        try RoostBinary.runProgram(program, arguments, directory: directory).stdout
    }
}
