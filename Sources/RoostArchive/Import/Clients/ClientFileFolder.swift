import Foundation

/// A folder where a client keeps the files it downloaded (Gajim's `downloads/`, Dino's `files/`, beside their
/// databases): the only place an import copies files from (issue 29). A history names its files by path, and a
/// history is data — a database from a backup, another user's, a forged one — so a path is taken only when it is a
/// regular file inside this folder: not a symbolic link, not outside through `..` or through a link on the way
/// (`~/.ssh/id_ed25519`, the config holding the password and `/etc/shadow` are refused). A refused path is never read,
/// copied or linked; the import reports it.
struct ClientFileFolder {
    /// The folder, as the file system resolves it (no links).
    let root: String
    /// For the report: `Gajim's downloads folder`.
    let label: String

    init(path: String, label: String) {
        self.label = label
        root = Self.resolved(path) ?? URL(fileURLWithPath: path).standardizedFileURL.path
    }

    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The file at `path` (absolute, or relative to the folder) when it may be copied; else why not.
    func file(_ path: String) -> Result<String, Refusal> {
        let candidate = path.hasPrefix("/") ? path : root + "/" + path
        var info = stat()
        guard lstat(candidate, &info) == 0 else { return .failure(Refusal(reason: "not on disk", path: path)) }
        guard info.st_mode & S_IFMT != S_IFLNK else {
            return .failure(Refusal(reason: "a symbolic link, refused (only files in \(label) are copied)", path: path))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return .failure(Refusal(reason: "not a regular file, refused", path: path))
        }
        guard let real = Self.resolved(candidate), real.hasPrefix(root + "/") else {
            return .failure(Refusal(reason: "outside \(label), refused (only files there are copied)", path: path))
        }
        return .success(real)
    }

    struct Refusal: Error {
        let reason: String
        let path: String
    }
}
