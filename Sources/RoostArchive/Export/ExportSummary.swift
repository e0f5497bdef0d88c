/// What an export wrote.
public struct ExportSummary: Sendable, Equatable {
    public var messages = 0
    public var chatStates = 0
    public var presenceChanges = 0
    /// Friend requests and answers (jsonl).
    public var subscriptions = 0
    public var contacts = 0
    /// Nil when not counted (a jsonl export of everything in one file does not list conversations).
    public var conversations: Int?
    /// Files written (pages, mail files and transcripts; copied attachments are counted apart).
    public var files = 0
    public var attachmentsCopied = 0
    /// Attachments whose local copy no longer exists or cannot be read.
    public var attachmentsMissing = 0
    public var bytes: Int64 = 0
    /// The final file or folder, nil for a stream.
    public var outputPath: String?
    /// With `ExportOptions.sinceCursor`: the change the export read up to, where the cursor goes next.
    public var feedPosition: Int64?

    public init() {}
}
