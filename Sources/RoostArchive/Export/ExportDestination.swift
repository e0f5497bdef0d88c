/// Where an export goes.
public enum ExportDestination: Sendable, Equatable {
    /// A file (single-file formats, no split) or a folder (html, maildir, or any split). Written under a
    /// temporary name and renamed into place when complete.
    case path(String)
    /// A byte stream such as standard output (single-file formats without split only).
    case stream(fileDescriptor: Int32)
}
