/// Where one partition of an export goes.
enum PartitionTarget {
    /// Single-file formats: the partition's file, `depth` folders below the export's top level (for links).
    case file(ByteSink, depth: Int)
    /// Folder formats (html, maildir): the partition's folder under the staged root (`[]` or `["2026-01"]`).
    case folder([String])
}

/// One output format. The exporter calls, per partition: `beginPartition`, then either (when
/// `byConversation`) `beginConversation`/`write`…/`endConversation` for each conversation in turn, or `write`
/// for every event of the partition in time order; then `endPartition`. `finish` comes once at the end.
protocol ExportWriter: AnyObject {
    var byConversation: Bool { get }
    /// Whether the raw stanzas must be read (only jsonl writes them).
    var needsRawStanzas: Bool { get }
    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws
    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws
    func write(_ event: ExportEvent, context: ExportContext) throws
    func endConversation(_ slice: ConversationSlice, context: ExportContext) throws
    func endPartition(context: ExportContext) throws
    func finish(context: ExportContext) throws
}

extension ExportWriter {
    var needsRawStanzas: Bool { false }
    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws {}
    func endConversation(_ slice: ConversationSlice, context: ExportContext) throws {}
    func finish(context: ExportContext) throws {}
}
