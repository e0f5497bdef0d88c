/// `--format txt`: one conversation after another, a line per event with date and time in the export's
/// time zone; continuation lines of a multi-line message are indented under its text.
final class TextTranscriptWriter: ExportWriter {
    let byConversation = true
    private var sink: ByteSink?
    private var depth = 0
    private var firstInFile = true
    private var slice: ConversationSlice?

    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws {
        guard case .file(let sink, let depth) = target else { preconditionFailure("txt writes files") }
        self.sink = sink
        self.depth = depth
        firstInFile = true
    }

    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        guard let sink else { return }
        self.slice = slice
        if !firstInFile { sink.append("\n\n") }
        firstInFile = false
        let title = context.contacts.title(of: slice)
        var heading = title == slice.conversation ? "Conversation with \(slice.conversation)" : "Conversation with \(title) <\(slice.conversation)>"
        heading += "\n" + "Account: \(slice.account) · times in \(TranscriptPhrases.zoneName(context.clock))"
        sink.append(heading + "\n" + String(repeating: "=", count: 72) + "\n")
    }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard let sink, let slice else { return }
        let time = context.clock.civil(event.timestamp)
        let stamp = "\(time.dateText) \(time.secondText)  "
        let indent = String(repeating: " ", count: stamp.count)
        switch event {
        case .message(let view):
            let message = try view.load()
            let who = context.contacts.sender(of: message, accountID: slice.accountID)
            var text = TranscriptPhrases.text(of: message, clock: context.clock, edited: " (edited)")
            for attachment in message.attachments {
                let copy = try context.attachments?.copy(attachment, of: message)
                text += (text.isEmpty ? "" : "\n") + "[file] \(attachment.url)" + (copy.map { " (saved as \(Self.up(depth))\($0))" } ?? "")
            }
            let prefix = "\(who): "
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            var output = stamp + prefix + (lines.first.map(String.init) ?? "") + "\n"
            let continuation = indent + String(repeating: " ", count: prefix.count)
            for line in lines.dropFirst() {
                output += continuation + line + "\n"
            }
            sink.append(output)
            context.messageWritten()
        case .chatState(let state):
            let who = TranscriptPhrases.stateSender(state, accountID: slice.accountID, contacts: context.contacts)
            sink.append(stamp + "* " + TranscriptPhrases.chatState(state, who: who) + "\n")
            context.summary.chatStates += 1
        case .presence(let presence):
            let who = TranscriptPhrases.presenceSender(presence, accountID: slice.accountID, contacts: context.contacts)
            sink.append(stamp + "* " + TranscriptPhrases.presence(presence, who: who) + "\n")
            context.summary.presenceChanges += 1
        }
    }

    func endPartition(context: ExportContext) throws {
        sink = nil
    }

    static func up(_ depth: Int) -> String { String(repeating: "../", count: depth) }
}
