/// Why an import failed. Nothing is written when the source is found invalid: jsonl lines and other clients'
/// histories are read through once before the first write (see `ArchiveImporter`, `ClientImporter`).
public enum ImportError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, errno: Int32)
    /// A device, a pipe or a folder where a file was expected (an import reads its file twice).
    case notARegularFile(path: String)
    /// The first problems (at most `ArchiveImporter.reportedProblemLimit`) and how many lines were invalid.
    case invalidLines([ImportProblem], invalidCount: Int, path: String)
    case archive(ArchiveError)
    /// `--format auto` found no history it knows at the path, or the path is not what `--format` said.
    case unrecognised(path: String, reason: String)
    /// The client's database or log is truncated or damaged.
    case sourceDamaged(path: String, detail: String)
    /// The source names no account (or several) where one is needed.
    case accountNeeded(path: String, reason: String)
    /// `--account` names an account the source has no history of.
    case accountNotInSource(account: String, found: [String], path: String)
    case invalidTimeZone(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let code):
            return "cannot read \(path): \(ExportError.message(code))"
        case .notARegularFile(let path):
            return "\(path) is not a regular file; save what you want to import to a file first"
        case .invalidLines(let problems, let count, let path):
            var text = "\(path) has \(count) invalid line\(count == 1 ? "" : "s"); nothing was imported:"
            for problem in problems { text += "\n  \(problem)" }
            if count > problems.count { text += "\n  … and \(count - problems.count) more" }
            text += "\nFix the file, or add --skip-invalid to import the valid lines only."
            return text
        case .archive(let error):
            return error.description
        case .unrecognised(let path, let reason):
            return "\(path): \(reason)"
        case .sourceDamaged(let path, let detail):
            return "\(path) is damaged or truncated (\(detail)); nothing was imported. "
                + "Copy the file again from where the client keeps it, or repair it with `sqlite3 FILE .recover`."
        case .accountNeeded(let path, let reason):
            return "\(path): \(reason); name the account with --account JID"
        case .accountNotInSource(let account, let found, let path):
            let list = found.isEmpty ? "none" : found.joined(separator: ", ")
            return "\(path) has no history of \(account) (accounts found: \(list))"
        case .invalidTimeZone(let name):
            return "unknown time zone \(name); use a name such as Europe/Berlin or UTC"
        }
    }
}
