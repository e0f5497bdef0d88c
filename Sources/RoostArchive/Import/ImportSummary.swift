/// What an import did.
public struct ImportSummary: Sendable, Equatable {
    /// Non-empty lines read.
    public var lines = 0
    /// New messages stored.
    public var messages = 0
    /// Messages (or corrections) already in the archive.
    public var duplicates = 0
    /// XEP-0308 corrections applied to stored messages.
    public var corrections = 0
    public var chatStates = 0
    public var presenceChanges = 0
    /// Friend requests and answers.
    public var subscriptions = 0
    public var contacts = 0
    /// Attachment files brought into the file store (from a jsonl export's copies, or found on another
    /// client's disk), and those a jsonl export did not carry (left to download again).
    public var files = 0
    public var filesMissing = 0
    /// Attachment and avatar paths that did not resolve inside the archive's own folders (the file store,
    /// `avatars/`) or, for an export's copies, inside the export's folder: dropped, never read or linked.
    public var pathsRefused = 0
    /// Messages of another client's history that were not imported, by reason, and the first few of them.
    public var refused: [String: Int] = [:]
    public var refusedExamples: [ImportRefusal] = []
    /// Entries of another client's history that are not messages (status changes, calls, …), by kind.
    public var notMessages: [String: Int] = [:]
    /// Lines skipped with `--skip-invalid`.
    public var skipped: [ImportProblem] = []
    public var skippedCount = 0
    public var seconds = 0.0

    public init() {}

    public var refusedCount: Int { refused.values.reduce(0, +) }

    /// Counts what a commit did with each event (`BatchCommitter`'s report).
    public mutating func count(_ events: [ArchiveEvent], _ outcomes: [InsertOutcome]) {
        for (event, outcome) in zip(events, outcomes) {
            switch (event, outcome) {
            case (.message(let record), .inserted):
                messages += 1
                files += record.attachments.count { $0.state == .stored }
            case (.message, .duplicate): duplicates += 1
            case (.message, .corrected): corrections += 1
            case (.chatState, .stored): chatStates += 1
            case (.presence, .stored): presenceChanges += 1
            case (.subscription, .stored): subscriptions += 1
            default: break
            }
        }
    }

    public var messagesPerSecond: Double { seconds > 0 ? Double(messages + duplicates + corrections) / seconds : 0 }
}
