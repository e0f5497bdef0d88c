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
    /// `avatars/`) or, for an export's copies, inside the export's folder — or, in another client's history, inside
    /// the client's own download folder (`ClientFileFolder`): dropped, never read or linked; the first few of the latter.
    public var pathsRefused = 0
    public var pathsRefusedExamples: [ImportRefusal] = []
    /// Lines (and files) of another client's history in no format the importer knows, by reason, and the first few.
    public var unread: [String: Int] = [:]
    public var unreadExamples: [ImportRefusal] = []
    /// Messages of another client's history that were not imported, by reason, and the first few of them.
    public var refused: [String: Int] = [:]
    public var refusedExamples: [ImportRefusal] = []
    /// Entries of another client's history that are not messages (status changes, calls, …), by kind.
    public var notMessages: [String: Int] = [:]
    /// Reactions (XEP-0444) of another client's history, or of a jsonl export.
    public var reactions = Reactions()
    /// Lines skipped with `--skip-invalid`.
    public var skipped: [ImportProblem] = []
    public var skippedCount = 0
    /// jsonl lines decoded a second time by the write pass: those past what the check pass keeps decoded
    /// (`ArchiveImporter.defaultRetainedBytes`); 0 when the file fits.
    public var linesDecodedTwice = 0
    public var seconds = 0.0

    public init() {}

    public struct Reactions: Sendable, Equatable {
        /// Reactor sets read from another client's history (refused ones included).
        public var read = 0
        /// Sets stored (one update each), and how many of them wait for their message: it is not archived (the
        /// client had it but Roost refused it, or it was never in the history); attached if it comes later.
        public var added = 0
        public var waiting = 0
        /// The set the archive already shows for that reactor and message (received live, imported before).
        public var duplicates = 0
        /// Not imported, by reason, and the first few of them.
        public var refused: [String: Int] = [:]
        public var refusedExamples: [ImportRefusal] = []

        public var refusedCount: Int { refused.values.reduce(0, +) }
    }

    public var refusedCount: Int { refused.values.reduce(0, +) }
    public var unreadCount: Int { unread.values.reduce(0, +) }

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
            case (.annotation(let annotation), .stored):
                if case .reactions = annotation.kind { reactions.added += 1 }
            case (.annotation(let annotation), .duplicate):
                if case .reactions = annotation.kind { reactions.duplicates += 1 }
            default: break
            }
        }
    }

    public var messagesPerSecond: Double { seconds > 0 ? Double(messages + duplicates + corrections) / seconds : 0 }
}
