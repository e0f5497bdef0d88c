/// `--format csv`: RFC 4180 (CRLF line ends, a header row, fields quoted when they contain a comma, quote,
/// CR or LF, quotes doubled), one row per message, conversation by conversation. Times are RFC 3339 in the
/// export's time zone.
final class CSVWriter: ExportWriter {
    let byConversation = true
    private var sink: ByteSink?
    private var depth = 0
    private var slice: ConversationSlice?

    static let header = ["time", "account", "conversation", "direction", "type", "from", "sender", "to", "body", "subject",
                         "edited", "attachments", "stanza_id", "origin_id", "message_id"]

    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws {
        guard case .file(let sink, let depth) = target else { preconditionFailure("csv writes files") }
        self.sink = sink
        self.depth = depth
        if context.options.csvByteOrderMark { sink.append("\u{FEFF}") }
        sink.append(Self.row(Self.header))
    }

    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        self.slice = slice
    }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard let sink, case .message(let view) = event else { return }
        let message = try view.load()
        var files: [String] = []
        for attachment in message.attachments {
            let copy = try context.attachments?.copy(attachment, of: message)
            files.append(copy.map { TextTranscriptWriter.up(depth) + $0 } ?? attachment.url)
        }
        let accountID = slice?.accountID ?? 0
        sink.append(Self.row([
            context.clock.civil(message.timestamp).rfc3339, message.account, message.conversation, message.direction.rawValue,
            message.kind.rawValue, message.from, context.contacts.sender(of: message, accountID: accountID), message.to,
            message.body ?? "", message.subject ?? "", message.edited ? "\(message.revisions.count - 1)" : "0",
            files.joined(separator: " "), message.stanzaId ?? "", message.originId ?? "", message.messageId ?? "",
        ]))
        context.messageWritten()
    }

    func endPartition(context: ExportContext) throws {
        sink = nil
    }

    static func row(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    static func field(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
