import Foundation

/// `--format md`: a heading per conversation (`#`) and per day (`##`), one list item per event.
final class MarkdownWriter: ExportWriter {
    let byConversation = true
    private var sink: ByteSink?
    private var depth = 0
    private var firstInFile = true
    private var slice: ConversationSlice?
    private var currentDay: String?

    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws {
        guard case .file(let sink, let depth) = target else { preconditionFailure("md writes files") }
        self.sink = sink
        self.depth = depth
        firstInFile = true
    }

    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        guard let sink else { return }
        self.slice = slice
        currentDay = nil
        if !firstInFile { sink.append("\n") }
        firstInFile = false
        let title = context.contacts.title(of: slice)
        var heading = "# " + MarkdownText.escape(title)
        if title != slice.conversation { heading += " (" + MarkdownText.escape(slice.conversation) + ")" }
        sink.append(heading + "\n\nAccount: " + MarkdownText.escape(slice.account) + " · times in "
                    + MarkdownText.escape(TranscriptPhrases.zoneName(context.clock)) + "\n")
    }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard let sink, let slice else { return }
        let time = context.clock.civil(event.timestamp)
        if time.dateText != currentDay {
            currentDay = time.dateText
            sink.append("\n## \(TranscriptPhrases.dayHeading(time))\n\n")
        }
        switch event {
        case .message(let view):
            let message = try view.load()
            let who = context.contacts.sender(of: message, accountID: slice.accountID)
            var text = MarkdownText.escape(TranscriptPhrases.text(of: message, clock: context.clock, edited: " (edited)"))
            for attachment in message.attachments {
                let copy = try context.attachments?.copy(attachment, of: message)
                let target = copy.map { TextTranscriptWriter.up(depth) + $0 } ?? attachment.url
                let name = attachment.url.split(separator: "/").last.map(String.init) ?? "file"
                let label = MarkdownText.escape(name.removingPercentEncoding ?? name)
                let isImage = attachment.mime?.hasPrefix("image/") == true && copy != nil
                text += (text.isEmpty ? "" : "\n") + (isImage ? "!" : "") + "[\(label)](\(MarkdownText.destination(target)))"
            }
            // Hard line breaks (backslash at line end) keep multi-line messages inside their list item.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            var item = "- **\(time.secondText) \(MarkdownText.escape(who)):** " + (lines.first.map(String.init) ?? "")
            for line in lines.dropFirst() { item += "\\\n  " + line }
            sink.append(item + "\n")
            context.messageWritten()
        case .chatState(let state):
            let who = TranscriptPhrases.stateSender(state, accountID: slice.accountID, contacts: context.contacts)
            sink.append("- *\(time.secondText) \(MarkdownText.escape(TranscriptPhrases.chatState(state, who: who)))*\n")
            context.summary.chatStates += 1
        case .presence(let presence):
            let who = TranscriptPhrases.presenceSender(presence, accountID: slice.accountID, contacts: context.contacts)
            sink.append("- *\(time.secondText) \(MarkdownText.escape(TranscriptPhrases.presence(presence, who: who)))*\n")
            context.summary.presenceChanges += 1
        }
    }

    func endPartition(context: ExportContext) throws {
        sink = nil
    }
}
