#if canImport(Glibc)
import RoostCore
import Glibc
#endif

/// `--format mbox` and `--format maildir`: one RFC 5322 message per chat message (see `MailMessageBuilder`).
/// mbox files use the mboxrd convention (a `From ` line before each message, body lines matching `>*From `
/// get one more `>`); Maildir messages go to `cur/` marked seen, with names that are unique and stable.
/// Locally stored attachments are embedded as MIME parts (nothing is written beside the mail).
/// Chat states and presence have no place in mail and are skipped.
final class MailWriter: ExportWriter {
    enum Layout { case mbox, maildir }

    let layout: Layout
    let byConversation = true
    private var sink: ByteSink?
    private var maildir: [String] = []
    private var slice: ConversationSlice?
    private var firstID: String?
    private var previousID: String?
    private var names: [String: FileNameAllocator] = [:]

    init(layout: Layout) {
        self.layout = layout
    }

    func beginPartition(_ partition: ExportPartition, target: PartitionTarget, context: ExportContext) throws {
        switch target {
        case .file(let sink, _):
            self.sink = sink
        case .folder(let components):
            var folder = components
            if let single = partition.single {
                folder = context.conversationComponents(single, ext: nil, allocator: &names, in: components)
            }
            maildir = folder
            for sub in ["cur", "new", "tmp"] { try context.createFolder(folder + [sub]) }
        }
    }

    func beginConversation(_ slice: ConversationSlice, context: ExportContext) throws {
        self.slice = slice
        firstID = nil
        previousID = nil
    }

    func write(_ event: ExportEvent, context: ExportContext) throws {
        guard let slice, case .message(let view) = event else { return }
        let message = try view.load()
        let limit = context.options.mailAttachmentLimit
        let embedded = message.attachments.map { context.options.copyAttachments ? MailAttachment.load($0, limit: limit) : nil }
        let attachedCount = embedded.compactMap { $0 }.count
        context.summary.attachmentsCopied += attachedCount
        context.summary.attachmentsMissing += embedded.count - attachedCount
        let id = MailMessageBuilder.messageID(message)
        let builder = MailMessageBuilder(clock: context.clock, contacts: context.contacts)
        let text = builder.build(message, slice: slice, messageID: id, first: firstID, previous: previousID, embedded: embedded)
        if firstID == nil { firstID = id }
        previousID = id
        switch layout {
        case .mbox:
            guard let sink else { return }
            let time = CivilTime(milliseconds: message.timestamp)
            sink.append("From \(MailMessageBuilder.address(message.from)) \(time.asctime)\n")
            sink.append(Self.mboxrdQuoted(text))
            sink.append("\n")
        case .maildir:
            let seconds = CivilTime.floorDivide(message.timestamp, 1000)
            let unique = id.dropFirst("<roost.".count).prefix(16)
            let file = try createMaildirFile(base: "\(seconds.0).M\(seconds.1)P\(unique).roost", context: context)
            file.append(text)
            try context.close(file)
        }
        context.messageWritten()
    }

    /// `BASE:2,S`, or `BASE-2:2,S`… in the (practically impossible) case of two identical Message-IDs.
    private func createMaildirFile(base: String, context: ExportContext) throws -> ByteSink {
        var attempt = 1
        while true {
            let name = (attempt == 1 ? base : "\(base)-\(attempt)") + ":2,S"
            do {
                return try context.createFile(maildir + ["cur", name], bufferSize: 1 << 14, foldersExist: true)
            } catch {
                guard case .io(_, _, let code) = error, code == EEXIST, attempt < 100 else { throw error }
                attempt += 1
            }
        }
    }

    func endPartition(context: ExportContext) throws {
        sink = nil
    }

    /// Adds a `>` to every line that starts with any number of `>` followed by `From `. Works on the UTF-8
    /// bytes (Foundation's substring search here was ~45 % of an mbox export).
    static func mboxrdQuoted(_ text: String) -> String {
        var text = text
        let quoted = text.withUTF8 { bytes -> [UInt8]? in
            var output: [UInt8]? = nil
            var lineStart = 0
            while lineStart <= bytes.count {
                var index = lineStart
                while index < bytes.count && bytes[index] == UInt8(ascii: ">") { index += 1 }
                let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
                if end - index >= 5 && bytes[index..<index + 5].elementsEqual("From ".utf8) {
                    if output == nil { output = Array(bytes[..<lineStart]) }
                    output!.append(UInt8(ascii: ">"))
                }
                output?.append(contentsOf: bytes[lineStart..<min(end + 1, bytes.count)])
                lineStart = end + 1
            }
            return output
        }
        return quoted.map { String(decoding: $0, as: UTF8.self) } ?? text
    }
}
