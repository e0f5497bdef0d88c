#if canImport(Glibc)
import Glibc
#endif

/// Why an export failed. Nothing is left under the final name when it does.
public enum ExportError: Error, Sendable, CustomStringConvertible {
    case archive(ArchiveError)
    /// The output exists and `--force` was not given.
    case outputExists(path: String)
    /// The format cannot be written to a stream, or a split needs a folder.
    case needsPath(reason: String)
    /// Creating, writing or renaming failed (full disk, permissions, missing folder, …).
    case io(path: String, operation: String, errno: Int32)
    /// `ExportOptions.isCancelled` said stop (the web view is stopping); nothing was left under the final name.
    case cancelled

    public var description: String {
        switch self {
        case .archive(let error):
            return error.description
        case .outputExists(let path):
            return "\(path) already exists; choose another --output or add --force to replace it"
        case .needsPath(let reason):
            return reason
        case .cancelled:
            return "the export was cancelled; nothing was left under the final name"
        case .io(let path, let operation, let code):
            var hint = ""
            switch code {
            case 28: hint = " — the disk is full; free some space or export elsewhere"
            case 122: hint = " — the disk quota is exhausted"
            case 27: hint = " — the file is larger than allowed (ulimit -f)"
            case 13, 1: hint = " — check the folder's permissions"
            case 2: hint = " — does the folder exist?"
            case 20: hint = " — a part of the path is a file, not a folder"
            case 30: hint = " — the file system is read-only"
            default: break
            }
            return "cannot \(operation) \(path): \(Self.message(code))\(hint); nothing was left under the final name"
        }
    }

    static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
