/// The file formats `roost export` writes. See docs/export.md.
public enum ExportFormat: String, Sendable, CaseIterable {
    /// One JSON object per event; lossless, re-importable.
    case jsonl
    /// Plain-text transcript.
    case txt
    /// Markdown transcript with headings per conversation and day.
    case md
    /// A folder of self-contained pages: `index.html` plus one page per conversation.
    case html
    /// One RFC 5322 message per chat message in an mboxrd file.
    case mbox
    /// One RFC 5322 message per chat message in a Maildir (`cur/`, `new/`, `tmp/`).
    case maildir
    /// RFC 4180 comma-separated values with a header row.
    case csv

    /// The extension of each file written, nil for formats written as folders.
    var fileExtension: String? {
        switch self {
        case .jsonl: "jsonl"
        case .txt: "txt"
        case .md: "md"
        case .csv: "csv"
        case .mbox: "mbox"
        case .html, .maildir: nil
        }
    }

    /// Whether the whole export can be one byte stream (and so go to standard output).
    public var canStream: Bool { fileExtension != nil }
}
