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
        Self.append(row: Self.header, to: sink)
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
        Self.append(row: [
            context.clock.civil(message.timestamp).rfc3339, message.account, message.conversation, message.direction.rawValue,
            message.kind.rawValue, message.from, context.contacts.sender(of: message, accountID: accountID), message.to,
            message.body ?? "", message.subject ?? "", message.edited ? "\(message.versions.count - 1)" : "0",
            files.joined(separator: " "), message.stanzaId ?? "", message.originId ?? "", message.messageId ?? "",
        ], to: sink)
        context.messageWritten()
    }

    func endPartition(context: ExportContext) throws {
        sink = nil
    }

    /// One row, written field by field into the sink. Works on the UTF-8 bytes: the characters that matter are
    /// ASCII, and per-Character comparisons and joined strings were a third of the export's CPU.
    static func append(row fields: [String], to sink: ByteSink) {
        for (index, field) in fields.enumerated() {
            if index > 0 { sink.append(UInt8(ascii: ",")) }
            var field = field
            field.withUTF8 { bytes in
                let quote = UInt8(ascii: "\"")
                guard bytes.contains(where: { $0 == UInt8(ascii: ",") || $0 == quote || $0 == 0x0A || $0 == 0x0D }) else {
                    sink.append(UnsafeRawBufferPointer(bytes))
                    return
                }
                sink.append(quote)
                for byte in bytes {
                    if byte == quote { sink.append(quote) }
                    sink.append(byte)
                }
                sink.append(quote)
            }
        }
        sink.append(0x0D)
        sink.append(0x0A)
    }
}
