/// How an export is divided into files.
public enum ExportSplit: String, Sendable, CaseIterable {
    /// One file (or, for html and maildir, one folder).
    case none
    /// One file per conversation.
    case conversation
    /// One file per calendar month (in the export's time zone).
    case month
}
