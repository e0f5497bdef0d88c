public import Foundation

/// Everything that decides what an export writes.
public struct ExportOptions: Sendable {
    public var format: ExportFormat
    /// The query language of `roost search`; empty selects every message.
    public var query: String
    /// Only this account (bare JID), or every account when nil.
    public var account: String?
    /// Only this one conversation (a bare JID, or `room@service/nick`), selected by value: the way to export a
    /// conversation the caller already knows, since a JID or a room nick written into `query` would be read as
    /// query language (a nick `z OR after:2000-01-01` would select the whole archive).
    public var conversation: String?
    public var split: ExportSplit
    public var include: Set<ExportInclusion>
    /// The calendar for human-readable times, day headings and month splits.
    public var timeZone: TimeZone
    /// Replace an existing output instead of refusing.
    public var force: Bool
    /// Copy locally stored attachments (and avatars, for html) next to the export.
    public var copyAttachments: Bool
    /// "Now" for relative dates in the query (`date:7d..`).
    public var now: Date
    /// mbox and maildir embed stored files up to this size; larger ones are linked by URL.
    public var mailAttachmentLimit: Int64 = ExportOptions.defaultMailAttachmentLimit
    /// csv: start each file with a UTF-8 byte order mark, so spreadsheet programs (Excel) read it as UTF-8.
    public var csvByteOrderMark = false
    /// Makes the html export's thumbnails of large pictures (none without it: pictures are shown full size).
    public var thumbnails: (any ThumbnailMaker)?
    /// Asked between messages: true stops the export with `ExportError.cancelled` (the web view stopping).
    public var isCancelled: (@Sendable () -> Bool)?
    /// `--since-last NAME`: only the messages changed after where the cursor `NAME` stands (everything when it was
    /// never set), up to the newest change when the export starts (`ExportSummary.feedPosition`). The caller moves the
    /// cursor there (`ArchiveWriter.setCursor`) once the export is complete. See docs/mirror.md.
    public var sinceCursor: String?

    public static let defaultMailAttachmentLimit: Int64 = 25 << 20

    public init(format: ExportFormat, query: String = "", account: String? = nil, conversation: String? = nil,
                split: ExportSplit = .none, include: Set<ExportInclusion> = [], timeZone: TimeZone = .current, force: Bool = false,
                copyAttachments: Bool = true, now: Date = Date()) {
        self.format = format
        self.query = query
        self.account = account
        self.conversation = conversation
        self.split = split
        self.include = include
        self.timeZone = timeZone
        self.force = force
        self.copyAttachments = copyAttachments
        self.now = now
    }

    /// True when the query selects everything: then chat states, presence and contacts are exported whole
    /// (even for conversations without messages), which is what makes a jsonl export a complete backup.
    var selectsEverything: Bool { conversation == nil && query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
}
