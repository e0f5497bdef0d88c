#if canImport(Glibc)
import Glibc
#endif

/// Roost's runtime folder: `$XDG_RUNTIME_DIR/roost`, else `/tmp/roost-<uid>` (when no session provides a runtime
/// folder: a cron job, `su`, an ssh session without logind). It holds the agent's control socket, `serve.url` (the
/// web view's address with its access token) and the page `--open` hands to the browser.
///
/// `/tmp` is everyone's: another user may have made `/tmp/roost-<uid>` first, to read what Roost writes there or to
/// plant a `serve.url` or a socket of their own. So every use of the folder goes through one check, whether it
/// writes (the agent, `roost serve`) or reads and connects (the CLI): a folder, not a link, owned by this user, not
/// writable by others (and, when Roost makes or uses it to write, not readable by them either: 0700, tightened if it
/// is ours and looser). Files are written under a temporary name created exclusively (`O_EXCL | O_NOFOLLOW`: never
/// a file or link that was there before), made 0600 (a failing `fchmod` is an error), then renamed into place;
/// files are read only when they are regular, ours and private.
public enum RuntimeFolder {
    /// The folder for `environment` (its `XDG_RUNTIME_DIR`).
    public static func path(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/roost"
        }
        return "/tmp/roost-\(getuid())"
    }

    /// Makes the folder (0700) or checks the one there, for writing into it.
    public static func prepare(_ folder: String) throws(RuntimeFolderError) {
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .system(call: "mkdir", path: folder, errno: errno)
        }
        var info = try inspect(folder)
        if info.st_mode & 0o077 != 0 {
            guard chmod(folder, 0o700) == 0 else { throw .unsafe(path: folder, reason: "it is open to other users and cannot be made private") }
            info = try inspect(folder)
            guard info.st_mode & 0o077 == 0 else { throw .unsafe(path: folder, reason: "it is open to other users and cannot be made private") }
        }
    }

    /// Checks the folder before reading from it or connecting into it (nothing is changed): ours, a folder, and
    /// nobody else may write in it. A folder that does not exist is no danger (nothing is read from it).
    public static func check(_ folder: String) throws(RuntimeFolderError) {
        var info = stat()
        if lstat(folder, &info) != 0 && errno == ENOENT { return }
        let found = try inspect(folder)
        guard found.st_mode & 0o022 == 0 else { throw .unsafe(path: folder, reason: "other users may write in it") }
    }

    private static func inspect(_ folder: String) throws(RuntimeFolderError) -> stat {
        var info = stat()
        guard lstat(folder, &info) == 0 else { throw .system(call: "stat", path: folder, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .unsafe(path: folder, reason: "it is not a folder") }
        guard info.st_uid == getuid() else { throw .unsafe(path: folder, reason: "it belongs to another user (uid \(info.st_uid))") }
        return info
    }

    /// Writes `bytes` to `folder/name` (after `prepare`): mode 0600, through `name.tmp` created exclusively and
    /// renamed into place. Returns the path.
    @discardableResult
    public static func write(_ bytes: [UInt8], name: String, in folder: String) throws(RuntimeFolderError) -> String {
        try prepare(folder)
        let path = folder + "/" + name
        let temporary = path + ".tmp"
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 && errno == EEXIST {
            // Left by a run that died between creating and renaming it (the folder is ours and private): removed,
            // never opened — unlink takes a link itself, not what it points to.
            unlink(temporary)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw .system(call: "open", path: temporary, errno: errno) }
        var failure: RuntimeFolderError?
        if fchmod(fd, 0o600) != 0 { failure = .system(call: "fchmod", path: temporary, errno: errno) }
        var offset = 0
        while failure == nil && offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = .system(call: "write", path: temporary, errno: errno)
            } else {
                offset += written
            }
        }
        if failure == nil && fsync(fd) != 0 { failure = .system(call: "fsync", path: temporary, errno: errno) }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = .system(call: "rename", path: path, errno: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        return path
    }

    /// The contents of `folder/name` (at most `limit` bytes), after `check`: only a regular file of this user's,
    /// readable by nobody else, not reached through a link. nil when there is no such file.
    public static func read(name: String, in folder: String, limit: Int = 64 * 1024) throws(RuntimeFolderError) -> [UInt8]? {
        try check(folder)
        let path = folder + "/" + name
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .system(call: "open", path: path, errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .system(call: "stat", path: path, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .unsafe(path: path, reason: "it is not a regular file") }
        guard info.st_uid == getuid() else { throw .unsafe(path: path, reason: "it belongs to another user (uid \(info.st_uid))") }
        guard info.st_mode & 0o077 == 0 else { throw .unsafe(path: path, reason: "other users may read or change it") }
        var bytes = [UInt8](repeating: 0, count: limit)
        var count = 0
        while count < limit {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, limit - count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        return Array(bytes[0..<count])
    }
}

/// Why the runtime folder or a file in it was not used.
public enum RuntimeFolderError: Error, Sendable, Equatable, CustomStringConvertible {
    case unsafe(path: String, reason: String)
    case system(call: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .unsafe(let path, let reason):
            return "refusing to use \(path): \(reason); remove it (or set XDG_RUNTIME_DIR to a private folder)"
        case .system(let call, let path, let code):
            return "\(call) \(path): \(String(cString: strerror(code)))"
        }
    }
}
