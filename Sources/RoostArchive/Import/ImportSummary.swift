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
    public var contacts = 0
    /// Lines skipped with `--skip-invalid`.
    public var skipped: [ImportProblem] = []
    public var skippedCount = 0
    public var seconds = 0.0

    public init() {}

    public var messagesPerSecond: Double { seconds > 0 ? Double(messages + duplicates + corrections) / seconds : 0 }
}
