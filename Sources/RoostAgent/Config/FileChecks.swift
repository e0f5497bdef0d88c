import Foundation
import RoostArchive
import RoostCore
import RoostXMPP
#if canImport(Glibc)
import Glibc
#endif

/// What the files a config names are, checked when the config is read, so `roost config` refuses what
/// `roost run` (or any reading command) would fail on later, with the key and line instead of an SQLite or
/// OpenSSL code. Messages name the path and what is there; they never quote the file's content.
enum FileChecks {
    /// The 16 bytes every SQLite database file starts with.
    private static let sqliteHeader = Array("SQLite format 3\0".utf8)

    /// `[archive] path`: an SQLite database (or an empty file), or a file Roost can create.
    static func archive(_ path: String) throws(ConfigValueError) {
        var info = stat()
        if stat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR:
                throw ConfigValueError("\(path) is a directory, not an archive file; name a file in it, e.g. "
                                       + (path.hasSuffix("/") ? path : path + "/") + "archive.sqlite")
            default:
                throw ConfigValueError("\(path) is not a regular file (it is \(kind(info.st_mode))); name the archive's SQLite file")
            }
            guard info.st_size > 0 else { return }   // SQLite makes an empty file a new database
            let head: [UInt8]
            do { head = try firstBytes(of: path, count: 512) } catch {
                throw shortageOr("cannot read the archive \(path)", error.code)
            }
            guard !head.starts(with: sqliteHeader) else { return }
            throw ConfigValueError("\(path) is not an SQLite database (it is \(contentKind(head, size: Int64(info.st_size)))); "
                                   + "point path at the archive, or move this file away and Roost makes a new archive there")
        }
        let code = errno
        guard code == ENOENT else {
            throw shortageOr("cannot use the archive \(path)", code)
        }
        // Not there yet: Roost creates it, and the folders up to it; the nearest folder that exists must take a new file.
        var folder = (path as NSString).deletingLastPathComponent
        while !folder.isEmpty && folder != "/" && stat(folder, &info) != 0 && errno == ENOENT {
            folder = (folder as NSString).deletingLastPathComponent
        }
        if folder.isEmpty { folder = "/" }
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw ConfigValueError("the archive \(path) cannot be created: \(folder) is not a directory")
        }
        if let code = creationRefused(in: folder) {
            guard !ResourceShortage.isShortage(errno: code) else {
                throw shortageOr("the archive \(path) cannot be checked now", code)
            }
            throw ConfigValueError("the archive \(path) cannot be created: \(folder) is not a directory Roost can write "
                                   + "(\(ResourceShortage.text(code)))")
        }
    }

    /// `ca_file`: a readable file of PEM certificates, loaded the way TLS loads it.
    static func certificates(_ path: String) throws(ConfigValueError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            guard !ResourceShortage.isShortage(errno: code) else { throw shortageOr("\(path) cannot be checked now", code) }
            throw ConfigValueError("\(path): \(ResourceShortage.text(code)); ca_file names a PEM file of CA certificates")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ConfigValueError("\(path) is not a regular file (it is \(kind(info.st_mode))); ca_file names a PEM file of CA certificates")
        }
        do {
            try TLSEngine.checkCAFile(path)
        } catch {
            switch error {
            // Short of memory or descriptors says nothing about the file: the connection tries again and reports it.
            case .resourceShortage: return
            case let .invalidConfiguration(reason): throw ConfigValueError(reason)
            default: throw ConfigValueError(error.description)
            }
        }
    }

    /// `what: reason`, marked as a shortage (exit 70, tried again later) when `code` is one, with what to expect.
    private static func shortageOr(_ what: String, _ code: Int32) -> ConfigValueError {
        let shortage = ResourceShortage.isShortage(errno: code)
        return ConfigValueError(what + ": " + ResourceShortage.text(code)
                                + (shortage ? " (this machine or process is short of descriptors, memory or disk; nothing to change in the config)" : ""),
                                resourceShortage: shortage)
    }

    private struct ReadError: Error { let code: Int32 }

    private static func firstBytes(of path: String, count: Int) throws(ReadError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw ReadError(code: errno) }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard read >= 0 else { throw ReadError(code: errno) }
        return Array(bytes.prefix(read))
    }

    /// Whether a new file can be made in `folder`, tried by making one (as root, permission bits say nothing:
    /// /proc and read-only mounts refuse anyway). Nil when it can, else the errno.
    private static func creationRefused(in folder: String) -> Int32? {
        let probe = (folder.hasSuffix("/") ? folder : folder + "/") + ".roost-write-check-\(getpid())"
        let descriptor = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            return code == EEXIST ? nil : code
        }
        close(descriptor)
        unlink(probe)
        return nil
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFIFO: "a pipe"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// What a file that is not SQLite looks like: text, or some other binary file.
    private static func contentKind(_ head: [UInt8], size: Int64) -> String {
        // UTF-8 without NULs, allowing for a character cut at the end of the bytes read.
        let isText = !head.contains(0) && (0...3).contains { String(validating: head.dropLast($0), as: UTF8.self) != nil }
        return (isText ? "a text file of " : "a binary file of ") + FileSize.text(size)
    }
}
