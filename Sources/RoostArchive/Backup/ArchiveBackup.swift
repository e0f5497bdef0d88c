import Foundation
import RoostCore

/// Why a backup could not be written, verified or restored.
public enum BackupError: Error, Sendable, CustomStringConvertible {
    /// The file is not a Roost backup, or not a whole one (truncated, damaged, a member's hash differs).
    case damaged(String)
    case io(path: String, operation: String, errno: Int32)
    /// A file grew or shrank while it was copied into the backup.
    case changed(path: String)
    case sqlite(path: String, SQLiteError)
    /// `roost restore` never writes over an archive or key store that exists.
    case targetExists(path: String)
    case unsupportedVersion(Int)
    /// The backup is encrypted and no passphrase was given.
    case passphraseNeeded
    case wrongPassphrase
    case crypto(String)
    /// The backup's path names the archive or a file beside it that the backup copies.
    case overwritesArchive(path: String)

    public var description: String {
        switch self {
        case .damaged(let reason): "not a valid Roost backup: \(reason)"
        case .io(let path, let operation, let code): "\(operation) \(path): \(String(cString: strerror(code)))"
        case .changed(let path): "\(path) changed while it was copied"
        case .sqlite(let path, let error): "\(path): \(error)"
        case .targetExists(let path): "\(path) exists; roost restore writes only to a new archive path (choose one with --to, or move the old archive away)"
        case .passphraseNeeded: "the backup is encrypted: set backup_key_command in [backup], or run on a terminal to be asked for the passphrase"
        case .wrongPassphrase: "the passphrase does not open this backup (or its first chunk is damaged)"
        case .crypto(let reason): "encryption: \(reason)"
        case .overwritesArchive(let path): "\(path) is the archive or its key store; write the backup elsewhere"
        case .unsupportedVersion(let version): "the backup has format version \(version); this roost reads version \(BackupManifest.formatVersion) (upgrade roost)"
        }
    }
}

/// `manifest.json`, the backup's last member but one: what it holds and each member's SHA-256. Near the end, so a
/// backup cut short has none and is refused as a whole; `manifest.json.sha256` (`sha256sum -c` format) follows it,
/// so a change to the manifest itself is seen too.
public struct BackupManifest: Codable, Sendable, Equatable {
    public static let formatVersion = 1

    public struct Member: Codable, Sendable, Equatable {
        public var name: String
        public var size: Int64
        public var sha256: String
    }

    public var format = "roost-backup"
    public var formatVersion = BackupManifest.formatVersion
    public var roostVersion: String
    /// UTC milliseconds when the archive's snapshot was taken.
    public var createdAt: Int64
    public var messages: Int64
    public var conversations: Int64
    public var files: Int
    public var members: [Member]

    enum CodingKeys: String, CodingKey {
        case format, formatVersion = "format_version", roostVersion = "roost_version", createdAt = "created_at"
        case messages, conversations, files, members
    }
}

/// Backups of an archive: its snapshot, the OMEMO key store beside it and the file store, in one tar with a
/// manifest (docs/backup.md). Everything lives beside the archive (`omemo.sqlite`, `files/`): a restore puts it
/// back beside the archive path it restores to.
public enum ArchiveBackup {
    static let archiveMember = "archive.sqlite"
    static let omemoMember = "omemo.sqlite"
    static let manifestMember = "manifest.json"
    static let manifestHashMember = "manifest.json.sha256"
    /// A manifest larger than this is refused unread (a real one lists one line per stored file).
    static let largestManifest: Int64 = 256 << 20

    /// Writes a backup of the archive at `archivePath` to `file`, while the agent may keep writing: SQLite's
    /// online backup API copies one consistent snapshot of the archive and of the key store (never the live
    /// files), into a private folder beside `file`; the tar is written to `file.tmp-…`, synced and renamed over
    /// `file` only when complete, so an interrupted backup never leaves a file that looks whole.
    /// With a `passphrase`, the tar is encrypted as it is written (`BackupCipher`).
    public static func create(archivePath: String, to file: String, includeFiles: Bool, roostVersion: String,
                              passphrase: String? = nil) throws(BackupError) -> BackupManifest {
        let folder = (archivePath as NSString).deletingLastPathComponent
        for kept in [archivePath, folder + "/" + omemoMember] where resolved(kept) == resolved(file) { throw .overwritesArchive(path: file) }
        let temporary = file + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let snapshots = temporary + ".d"
        guard mkdir(snapshots, 0o700) == 0 else { throw .io(path: snapshots, operation: "mkdir", errno: errno) }
        defer { try? FileManager.default.removeItem(atPath: snapshots) }
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(path: temporary, operation: "create", errno: errno) }
        var renamed = false
        defer {
            close(fd)
            if !renamed { unlink(temporary) }
        }
        let createdAt = Timestamp.now()
        let archiveCopy = snapshots + "/" + archiveMember
        try snapshot(archivePath, to: archiveCopy)
        let (messages, conversations) = try counts(archiveCopy)
        let omemo = folder + "/" + omemoMember
        let hasOMEMO = FileManager.default.fileExists(atPath: omemo)
        if hasOMEMO { try snapshot(omemo, to: snapshots + "/" + omemoMember) }
        // Listed after the snapshot: every file stored before it is in the backup (the store only ever adds).
        let stored = includeFiles ? storedFiles(FileStore(archivePath: archivePath)) : []

        let writer = try BackupTarWriter(fd: fd, path: temporary, cipher: try passphrase.map { (phrase) throws(BackupError) in try BackupCipher(newFor: phrase) })
        let mtime = createdAt / 1000
        var members: [BackupManifest.Member] = []
        func add(_ name: String, _ source: String) throws(BackupError) {
            let (size, sha256) = try writer.addFile(name: name, source: source, mtime: mtime)
            members.append(.init(name: name, size: size, sha256: sha256))
        }
        try add(archiveMember, archiveCopy)
        if hasOMEMO { try add(omemoMember, snapshots + "/" + omemoMember) }
        for file in stored { try add(file.member, file.path) }
        let manifest = BackupManifest(roostVersion: roostVersion, createdAt: createdAt, messages: messages, conversations: conversations,
                                      files: stored.count, members: members)
        let manifestBytes = encode(manifest)
        try writer.addData(name: manifestMember, data: manifestBytes, mtime: mtime)
        try writer.addData(name: manifestHashMember, data: manifestHashLine(manifestBytes), mtime: mtime)
        try writer.finish()
        guard rename(temporary, file) == 0 else { throw .io(path: file, operation: "rename", errno: errno) }
        renamed = true
        syncFolder((file as NSString).deletingLastPathComponent)
        return manifest
    }

    /// Reads the whole backup, checks every member against the manifest, and checks that the archive (and the
    /// key store) open and pass `PRAGMA integrity_check`; writes nothing but a private scratch folder.
    /// `passphrase` is asked only when the backup is encrypted; nil then: `.passphraseNeeded`.
    public static func verify(_ file: String, passphrase: () throws(BackupError) -> String? = { nil }) throws(BackupError) -> BackupManifest {
        let scratch = try makeFolder(in: NSTemporaryDirectory(), prefix: "roost-backup-verify-")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        return try read(file, into: scratch, extractFiles: false, passphrase: passphrase)
    }

    /// Restores the backup as the archive `archivePath`, with the key store and the stored files beside it.
    /// Refuses when the archive or the key store exist. Every member is read into a private folder beside the
    /// archive and verified (hashes, integrity) before anything is moved into place; the archive comes last,
    /// so until then no archive exists at `archivePath`.
    public static func restore(_ file: String, to archivePath: String,
                               passphrase: () throws(BackupError) -> String? = { nil }) throws(BackupError) -> BackupManifest {
        let folder = (archivePath as NSString).deletingLastPathComponent
        let omemo = folder + "/" + omemoMember
        for path in [archivePath, archivePath + "-wal", omemo] where FileManager.default.fileExists(atPath: path) {
            throw .targetExists(path: path)
        }
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
            throw .io(path: folder, operation: "mkdir", errno: EACCES)
        }
        let staging = try makeFolder(in: folder + "/", prefix: ".roost-restore-")
        defer { try? FileManager.default.removeItem(atPath: staging) }
        let manifest = try read(file, into: staging, extractFiles: true, passphrase: passphrase)
        let store = FileStore(archivePath: archivePath)
        for member in manifest.members {
            guard let sha256 = fileMemberHash(member.name) else { continue }
            // The store is content-addressed: a file already there holds the same bytes.
            if store.contains(sha256: sha256) { continue }
            let target = store.path(forSHA256: sha256)
            try makeFolders((target as NSString).deletingLastPathComponent)
            try place(staging + "/" + member.name, at: target)
        }
        if manifest.members.contains(where: { $0.name == omemoMember }) { try place(staging + "/" + omemoMember, at: omemo) }
        try place(staging + "/" + archiveMember, at: archivePath)
        syncFolder(folder)
        return manifest
    }

    /// Whether the file at `path` starts as an encrypted backup does (false when it cannot be read).
    public static func isEncrypted(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path), let head = try? handle.read(upToCount: BackupCipher.magic.count) else { return false }
        try? handle.close()
        return BackupCipher.isEncrypted(Array(head))
    }

    // MARK: - Reading

    /// Streams the backup: each member hashed, the SQLite members (and with `extractFiles` the stored files)
    /// written into `folder` under their member names; then the manifest compared with what was read, and the
    /// databases checked.
    static func read(_ file: String, into folder: String, extractFiles: Bool,
                     passphrase: () throws(BackupError) -> String?) throws(BackupError) -> BackupManifest {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(path: file, operation: "open", errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .damaged("\(file) is not a regular file") }
        let reader = BackupTarReader(source: try BackupByteSource(fd: fd, path: file, passphrase: passphrase))
        var seen: [BackupManifest.Member] = []
        var names = Set<String>()
        var manifestBytes: [UInt8]?
        var manifestHash: [UInt8]?
        while let member = try reader.next() {
            let (name, size) = (member.name, member.size)
            guard manifestHash == nil else { throw .damaged("member \(name) follows the manifest's hash") }
            guard names.insert(name).inserted else { throw .damaged("member \(name) appears twice") }
            if name == manifestMember || name == manifestHashMember {
                guard (name == manifestMember) == (manifestBytes == nil) else { throw .damaged("the manifest and its hash are out of order") }
                guard size <= largestManifest else { throw .damaged("the manifest is too large") }
                var bytes: [UInt8] = []
                try reader.readMember(size: size) { bytes.append(contentsOf: $0) }
                if name == manifestMember { manifestBytes = bytes } else { manifestHash = bytes }
                continue
            }
            guard manifestBytes == nil else { throw .damaged("member \(name) follows the manifest") }
            let isDatabase = name == archiveMember || name == omemoMember
            guard isDatabase || fileMemberHash(name) != nil else { throw .damaged("unexpected member \(name)") }
            let digest = FileDigest(algorithm: "sha-256")!
            let output = isDatabase || extractFiles ? try createFile(folder + "/" + name) : -1
            defer { if output >= 0 { close(output) } }
            try reader.readMember(size: size) { (bytes) throws(BackupError) in
                bytes.withUnsafeBytes { digest.update($0) }
                if output >= 0 { try BackupTar.writeAll(output, bytes, path: folder + "/" + name) }
            }
            // Synced for a restore (the files are put in place next); a verify's scratch copies are thrown away.
            if output >= 0, extractFiles, fsync(output) != 0 { throw .io(path: folder + "/" + name, operation: "fsync", errno: errno) }
            seen.append(.init(name: name, size: size, sha256: Hex.string(digest.finish())))
        }
        guard try reader.atEndOfFile() else { throw .damaged("data after the end of the archive") }
        guard let manifestBytes, let manifestHash else { throw .damaged("no manifest (the backup was cut short)") }
        guard manifestHash == manifestHashLine(manifestBytes) else { throw .damaged("the manifest does not match its SHA-256 (damaged)") }
        let manifest = try decode(manifestBytes)
        guard manifest.members == seen else {
            let listed = Dictionary(manifest.members.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            if let bad = seen.first(where: { listed[$0.name] != $0 }) {
                throw .damaged(listed[bad.name] == nil ? "member \(bad.name) is not in the manifest" : "member \(bad.name) does not match its SHA-256 (damaged)")
            }
            throw .damaged("members listed in the manifest are missing")
        }
        guard seen.contains(where: { $0.name == archiveMember }) else { throw .damaged("no archive in the backup") }
        guard manifest.files == seen.filter({ fileMemberHash($0.name) != nil }).count else { throw .damaged("the manifest's file count does not match") }
        try checkIntegrity(folder + "/" + archiveMember)
        if seen.contains(where: { $0.name == omemoMember }) { try checkIntegrity(folder + "/" + omemoMember) }
        let (messages, conversations) = try counts(folder + "/" + archiveMember)
        guard messages == manifest.messages, conversations == manifest.conversations else {
            throw .damaged("the archive holds \(messages) messages in \(conversations) conversations, the manifest says \(manifest.messages) in \(manifest.conversations)")
        }
        return manifest
    }

    /// The SHA-256 of a file store member's name (`files/sha256/ab/cdef…`), or nil when the name is no such member.
    static func fileMemberHash(_ name: String) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "files", parts[1] == "sha256", parts[2].count == 2 else { return nil }
        let hex = String(parts[2] + parts[3])
        return FileStore.isSHA256(hex) ? hex : nil
    }

    // MARK: - Pieces

    private static func snapshot(_ source: String, to copy: String) throws(BackupError) {
        do { try Database(path: source, mode: .readOnly).backup(to: copy) } catch { throw .sqlite(path: source, error) }
    }

    /// Messages and conversations of the archive at `path` (a snapshot: nothing else writes to it).
    private static func counts(_ path: String) throws(BackupError) -> (messages: Int64, conversations: Int64) {
        do {
            let database = try Database(path: path, mode: .readOnly)
            return try database.read { () throws(SQLiteError) in
                (try database.cached("SELECT count(*) FROM messages").scalarInt() ?? 0,
                 try database.cached("SELECT count(*) FROM conversation_counts").scalarInt() ?? 0)
            }
        } catch {
            throw .sqlite(path: path, error)
        }
    }

    private static func checkIntegrity(_ path: String) throws(BackupError) {
        let result: String
        do {
            let database = try Database(path: path, mode: .readOnly)
            var lines: [String] = []
            try database.prepare("PRAGMA integrity_check").forEachRow { row in
                lines.append(row.text(0))
                return lines.count < 5
            }
            result = lines.joined(separator: "; ")
        } catch {
            throw .damaged("\((path as NSString).lastPathComponent) does not open as a database: \(error)")
        }
        guard result == "ok" else { throw .damaged("\((path as NSString).lastPathComponent) fails the integrity check: \(result)") }
    }

    private struct FileMember {
        let member: String
        let path: String
    }

    /// The file store's files, by name (`sha256/ab/cdef…`): what it holds, whichever rows name it.
    private static func storedFiles(_ store: FileStore) -> [FileMember] {
        let root = store.root + "/sha256"
        let manager = FileManager.default
        var files: [FileMember] = []
        for prefix in ((try? manager.contentsOfDirectory(atPath: root)) ?? []).sorted() where prefix.count == 2 {
            for rest in ((try? manager.contentsOfDirectory(atPath: root + "/" + prefix)) ?? []).sorted() {
                let member = "files/sha256/\(prefix)/\(rest)"
                guard let hex = fileMemberHash(member), store.stored(sha256: hex) != nil else { continue }
                files.append(FileMember(member: member, path: store.path(forSHA256: hex)))
            }
        }
        return files
    }

    private static func encode(_ manifest: BackupManifest) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array((try? encoder.encode(manifest)) ?? Data()) + [0x0a]
    }

    /// `HEX  manifest.json`, as `sha256sum` writes it.
    private static func manifestHashLine(_ manifest: [UInt8]) -> [UInt8] {
        let digest = FileDigest(algorithm: "sha-256")!
        manifest.withUnsafeBytes { digest.update($0) }
        return Array("\(Hex.string(digest.finish()))  \(manifestMember)\n".utf8)
    }

    private static func decode(_ bytes: [UInt8]) throws(BackupError) -> BackupManifest {
        struct Version: Decodable {
            let format: String
            let format_version: Int
        }
        guard let version = try? JSONDecoder().decode(Version.self, from: Data(bytes)), version.format == "roost-backup" else {
            throw .damaged("the manifest is not a Roost backup manifest")
        }
        guard version.format_version == BackupManifest.formatVersion else { throw .unsupportedVersion(version.format_version) }
        guard let manifest = try? JSONDecoder().decode(BackupManifest.self, from: Data(bytes)) else { throw .damaged("the manifest is malformed") }
        return manifest
    }

    private static func makeFolder(in parent: String, prefix: String) throws(BackupError) -> String {
        var template = Array(((parent.hasSuffix("/") ? parent : parent + "/") + prefix + "XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw .io(path: parent, operation: "mkdtemp", errno: errno) }
        return String(cString: made)
    }

    private static func makeFolders(_ path: String) throws(BackupError) {
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
            throw .io(path: path, operation: "mkdir", errno: EACCES)
        }
    }

    private static func createFile(_ path: String) throws(BackupError) -> Int32 {
        try makeFolders((path as NSString).deletingLastPathComponent)
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(path: path, operation: "create", errno: errno) }
        return fd
    }

    /// Moves a verified file into place without ever replacing one: link (which fails when the target
    /// exists), then unlink the staged name.
    private static func place(_ staged: String, at target: String) throws(BackupError) {
        guard link(staged, target) == 0 else {
            throw errno == EEXIST ? .targetExists(path: target) : .io(path: target, operation: "link", errno: errno)
        }
        unlink(staged)
    }

    /// The path with its folder's symbolic links resolved (the file itself may not exist yet).
    private static func resolved(_ path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent).path
    }

    private static func syncFolder(_ path: String) {
        let fd = open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
