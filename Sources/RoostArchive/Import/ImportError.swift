/// Why an import failed. Invalid lines abort before anything is committed (unless they are skipped).
public enum ImportError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, errno: Int32)
    /// The first problems (at most `ArchiveImporter.reportedProblemLimit`) and how many lines were invalid.
    case invalidLines([ImportProblem], invalidCount: Int, path: String)
    case archive(ArchiveError)

    public var description: String {
        switch self {
        case .unreadable(let path, let code):
            return "cannot read \(path): \(ExportError.message(code))"
        case .invalidLines(let problems, let count, let path):
            var text = "\(path) has \(count) invalid line\(count == 1 ? "" : "s"); nothing was imported:"
            for problem in problems { text += "\n  \(problem)" }
            if count > problems.count { text += "\n  … and \(count - problems.count) more" }
            text += "\nFix the file, or add --skip-invalid to import the valid lines only."
            return text
        case .archive(let error):
            return error.description
        }
    }
}
