import RoostCore
public import Foundation

/// The content-addressed store of attachment files beside the archive: `<archive folder>/files/sha256/ab/cdef…`
/// (the lowercase hex SHA-256 of the bytes, split after two digits), files 0600 and folders 0700.
///
/// Files arrive through a `FileStoreWriter`: written to `files/tmp/`, hashed while written, flushed to disk and
/// renamed into place only when complete (and, when the sender advertised XEP-0300 hashes, only when they
/// match), so a name in the store always holds exactly the bytes it names. Identical files are stored once.
///
/// This is the API for anything that brings files into the archive (the download worker, `roost send --file`,
/// `roost import`, importers of other clients' histories): `put(contentsOf:)` copies a file in, and the
/// attachment row records the returned `sha256` with state `stored`.
public struct FileStore: Sendable {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    /// The store that belongs to the archive at `archivePath`.
    public init(archivePath: String) {
        self.init(root: (archivePath as NSString).deletingLastPathComponent + "/files")
    }

    /// Where the file with this SHA-256 (lowercase hex) lives, whether or not it is there.
    public func path(forSHA256 hex: String) -> String {
        "\(root)/sha256/\(hex.prefix(2))/\(hex.dropFirst(2))"
    }

    public func contains(sha256 hex: String) -> Bool {
        stored(sha256: hex) != nil
    }

    /// The file the store holds under this SHA-256 (lowercase hex), or nil when it holds none.
    public func stored(sha256 hex: String) -> StoredFile? {
        var info = stat()
        let path = path(forSHA256: hex)
        guard Self.isSHA256(hex), stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return StoredFile(sha256: hex, size: Int64(info.st_size), path: path)
    }

    /// Starts a new file; `checking` lists the advertised hashes that `commit` must find matching.
    public func writer(checking hashes: [FileHash] = []) throws(FileStoreError) -> FileStoreWriter {
        try FileStoreWriter(store: self, checking: hashes)
    }

    /// Copies the file at `path` into the store.
    /// `regularOnly`: the path's last component must not be a symbolic link, and what it opens must be a regular file
    /// (another program's history names the file: `ClientFileFolder` checked it; this closes the window after).
    public func put(contentsOf path: String, checking hashes: [FileHash] = [], regularOnly: Bool = false) throws(FileStoreError) -> StoredFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC | (regularOnly ? O_NOFOLLOW | O_NONBLOCK : 0))
        guard fd >= 0 else { throw .io(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        if regularOnly {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw .io(path: path, operation: "open", errno: EINVAL) }
        }
        let writer = try writer(checking: hashes)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            try writer.write(buffer, count: n)
        }
        return try writer.commit()
    }

    public func put(_ data: Data, checking hashes: [FileHash] = []) throws(FileStoreError) -> StoredFile {
        let writer = try writer(checking: hashes)
        try writer.write(data)
        return try writer.commit()
    }

    /// Copies the file at `path` into the store for `attachment` (checked against `hashes`), which then names
    /// it by its SHA-256 (state `stored`, no `localPath`); false, and `attachment` unchanged, when the file
    /// cannot be read or does not match.
    public func adopt(_ attachment: inout AttachmentRecord, from path: String, checking hashes: [FileHash] = [],
                      regularOnly: Bool = false) -> Bool {
        guard FileManager.default.isReadableFile(atPath: path),
              let stored = try? put(contentsOf: path, checking: hashes, regularOnly: regularOnly) else { return false }
        attachment.sha256 = stored.sha256
        attachment.size = stored.size
        attachment.state = .stored
        attachment.localPath = nil
        return true
    }

    /// Reads the stored file again and compares its hash with its name.
    public func check(sha256 hex: String) -> FileCheck {
        let path = path(forSHA256: hex)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .unreadable(String(cString: strerror(errno))) }
        defer { close(fd) }
        guard let digest = FileDigest(algorithm: "sha-256") else { return .unreadable("SHA-256 is not available") }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .unreadable(String(cString: strerror(errno)))
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        let actual = Hex.string(digest.finish())
        return actual == hex.lowercased() ? .intact : .corrupt(actual: actual)
    }

    /// Removes unfinished files a crashed process left in `tmp/` (older than `age` seconds, so a writer
    /// of another running process is not disturbed).
    public func removeStaleTemporaryFiles(olderThan age: TimeInterval = 3600) {
        let folder = root + "/tmp"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let cutoff = Double(Timestamp.now()) / 1000 - age
        for name in names {
            var info = stat()
            let path = folder + "/" + name
            if lstat(path, &info) == 0, TimeInterval(info.st_mtim.tv_sec) < cutoff { unlink(path) }
        }
    }

    /// Whether `path`, with every symbolic link and `..` resolved, is `folder` or lies inside it (resolved too).
    /// A path that does not exist (yet) is judged by its `..`-free form: nothing can be read through it. How an
    /// import decides that a path it was handed is one of the archive's own files, and an export that a file
    /// it would copy or link is (never `/etc/passwd`).
    public static func resolves(_ path: String, inside folder: String) -> Bool {
        func resolved(_ path: String) -> String? {
            guard let real = realpath(path, nil) else { return nil }
            defer { free(real) }
            return String(cString: real)
        }
        let root = resolved(folder) ?? (folder as NSString).standardizingPath
        let target = resolved(path) ?? (path as NSString).standardizingPath
        guard target.hasPrefix("/"), root.hasPrefix("/") else { return false }
        return target == root || target.hasPrefix(root == "/" ? "/" : root + "/")
    }

    static func isSHA256(_ hex: String) -> Bool {
        hex.utf8.count == 64 && hex.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    /// Creates `folder` (and missing parents inside the store's parent) with mode 0700.
    func makeFolder(_ folder: String) throws(FileStoreError) {
        var info = stat()
        if stat(folder, &info) == 0 { return }
        let parent = (folder as NSString).deletingLastPathComponent
        if parent != folder, !parent.isEmpty { try makeFolder(parent) }
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .io(path: folder, operation: "create the folder", errno: errno) }
    }
}

/// A file in the store.
public struct StoredFile: Sendable, Equatable {
    /// Lowercase hex SHA-256 of the bytes: the attachment row's `sha256`.
    public var sha256: String
    public var size: Int64
    public var path: String
}

/// What `FileStore.check` found.
public enum FileCheck: Sendable, Equatable {
    case intact
    case missing
    case corrupt(actual: String)
    case unreadable(String)
}

public enum FileStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    case io(path: String, operation: String, errno: Int32)
    /// The bytes do not match the hash the sender advertised; nothing was kept.
    case hashMismatch(algorithm: String)

    public var description: String {
        switch self {
        case .io(let path, let operation, let code):
            return "cannot \(operation) \(path): \(String(cString: strerror(code)))"
        case .hashMismatch(let algorithm):
            return "the file does not match its advertised \(algorithm) hash; it was not kept"
        }
    }
}

/// One file on its way into the store. Discarded (its temporary file removed) unless committed.
public final class FileStoreWriter {
    private let store: FileStore
    private let temporaryPath: String
    private var fd: Int32
    private let sha256: FileDigest
    private var checks: [(digest: FileDigest, expected: FileHash)] = []
    public private(set) var size: Int64 = 0
    private var finished = false

    fileprivate init(store: FileStore, checking hashes: [FileHash]) throws(FileStoreError) {
        self.store = store
        let folder = store.root + "/tmp"
        try store.makeFolder(folder)
        var path = ""
        var descriptor: Int32 = -1
        for _ in 0..<8 {
            path = folder + "/" + UUID().uuidString.lowercased()
            descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
            if descriptor >= 0 || errno != EEXIST { break }
        }
        guard descriptor >= 0 else { throw .io(path: folder, operation: "create a file in", errno: errno) }
        temporaryPath = path
        fd = descriptor
        guard let digest = FileDigest(algorithm: "sha-256") else {
            close(descriptor)
            unlink(path)
            throw .io(path: path, operation: "hash (no SHA-256 in OpenSSL)", errno: ENOSYS)
        }
        sha256 = digest
        for hash in hashes {
            if let digest = FileDigest(algorithm: hash.algorithm) { checks.append((digest, hash)) }
        }
    }

    deinit { discard() }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(FileStoreError) {
        precondition(!finished, "write after commit or discard")
        sha256.update(bytes)
        for check in checks { check.digest.update(bytes) }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: temporaryPath, operation: "write", errno: errno)
            }
            offset += n
        }
        size += Int64(bytes.count)
    }

    public func write(_ data: Data) throws(FileStoreError) {
        var failure: FileStoreError?
        data.withUnsafeBytes { bytes in
            do throws(FileStoreError) { try write(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// The first `count` bytes of `buffer`.
    public func write(_ buffer: [UInt8], count: Int) throws(FileStoreError) {
        var failure: FileStoreError?
        buffer.withUnsafeBytes { bytes in
            do throws(FileStoreError) { try write(UnsafeRawBufferPointer(rebasing: bytes[0..<count])) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Checks the advertised hashes, flushes the file to disk and moves it into place (replacing a damaged
    /// copy of the same name, if any). Throws `.hashMismatch` — and keeps nothing — when a hash differs.
    public func commit() throws(FileStoreError) -> StoredFile {
        precondition(!finished, "commit twice")
        let hex = Hex.string(sha256.finish())
        for check in checks {
            let actual = Data(check.digest.finish()).base64EncodedString()
            guard actual == Self.normalizedBase64(check.expected.base64) else {
                discard()
                throw .hashMismatch(algorithm: check.expected.algorithm)
            }
        }
        let final = store.path(forSHA256: hex)
        let folder = (final as NSString).deletingLastPathComponent
        do throws(FileStoreError) {
            guard fsync(fd) == 0 else { throw .io(path: temporaryPath, operation: "flush", errno: errno) }
            close(fd)
            fd = -1
            try store.makeFolder(folder)
            guard rename(temporaryPath, final) == 0 else { throw .io(path: final, operation: "move a file to", errno: errno) }
        } catch {
            discard()
            throw error
        }
        finished = true
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return StoredFile(sha256: hex, size: size, path: final)
    }

    /// Removes the temporary file; nothing reaches the store.
    public func discard() {
        guard !finished else { return }
        finished = true
        if fd >= 0 { close(fd) }
        fd = -1
        unlink(temporaryPath)
    }

    /// Base64 as OpenSSL/Foundation write it (some senders drop the padding).
    static func normalizedBase64(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: trimmed) ?? Data(base64Encoded: trimmed + String(repeating: "=", count: (4 - trimmed.count % 4) % 4)) else {
            return trimmed
        }
        return data.base64EncodedString()
    }
}
