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
    /// The message being written, built as bytes (the buffer is kept from one message to the next).
    private var text: [UInt8] = []
    /// An mbox message's `From ` line, or a Maildir message's name (kept like `text`).
    private var fromLine: [UInt8] = []
    private let addresses = MailMessageBuilder.AddressMemo()

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
        let (id, fromAddress) = Self.mail(message, slice: slice, first: firstID, previous: previousID, embedded: embedded,
                                          clock: context.clock, contacts: context.contacts, addresses: addresses, into: &text)
        if firstID == nil { firstID = id }
        previousID = id
        switch layout {
        case .mbox:
            guard let sink else { return }
            fromLine.removeAll(keepingCapacity: true)
            fromLine.append(contentsOf: "From ".utf8)
            fromLine.append(contentsOf: fromAddress.utf8)
            fromLine.append(0x20)
            CivilTime(milliseconds: message.timestamp).appendAsctime(to: &fromLine)
            fromLine.append(0x0A)
            sink.append(fromLine)
            text.withUnsafeBufferPointer { bytes in Self.mboxrdQuote(bytes) { sink.append($0) } }
            sink.append(0x0A)
        case .maildir:
            fromLine.removeAll(keepingCapacity: true)
            Self.appendStem(message.timestamp, id: id, to: &fromLine)
            fromLine.append(contentsOf: ".roost".utf8)
            let file = try createMaildirFile(base: String(decoding: fromLine, as: UTF8.self), context: context)
            file.append(text)
            // The file's time is the message's: Dovecot gives it as the INTERNALDATE, the arrival time by which phone
            // mail apps sort and date their lists (the export's own time would put every chat at "today").
            try context.close(file, modified: message.timestamp)
        }
        context.messageWritten()
    }

    /// One message as a mail, the bytes in `text` (emptied first): its Message-ID and its sender's address. `first`
    /// and `previous` are the Message-IDs of the conversation's first and previous mail in the same file or folder.
    /// The export and the live mirror (`MailMirror`) write every mail through here.
    static func mail(_ message: MessageRow, slice: ConversationSlice, first: String?, previous: String?, embedded: [MailAttachment?],
                     clock: ZoneClock, contacts: ContactDirectory, addresses: MailMessageBuilder.AddressMemo,
                     into text: inout [UInt8]) -> (id: String, from: String) {
        let id = MailMessageBuilder.messageID(message)
        text.removeAll(keepingCapacity: true)
        let fromAddress = addresses.address(message.from)
        MailMessageBuilder(clock: clock, contacts: contacts, addresses: addresses)
            .build(message, slice: slice, messageID: id, fromAddress: fromAddress, first: first, previous: previous,
                   embedded: embedded, into: &text)
        return (id, fromAddress)
    }

    /// The stem of a mail's Maildir name, `SECONDS.MMILLISECONDSPHASH` (the hash: the Message-ID's first 16 hex
    /// digits), appended to `out` as bytes.
    static func appendStem(_ timestamp: Int64, id: String, to out: inout [UInt8]) {
        appendStem(timestamp, hashDigits: hashDigits(of: id), to: &out)
    }

    /// The Message-ID's hash as the stem has it: the 16 hex digits after `<roost.`.
    static func hashDigits(of id: String) -> Substring.UTF8View {
        id.utf8.dropFirst("<roost.".count).prefix(16)
    }

    /// The same stem from the hash's 16 hex digits (the mirror keeps them as a number: `MailFiles`).
    static func appendStem(_ timestamp: Int64, hashDigits: some Sequence<UInt8>, to out: inout [UInt8]) {
        let (seconds, milliseconds) = CivilTime.floorDivide(timestamp, 1000)
        MailMessageBuilder.forEachDigit(of: seconds) { out.append($0) }
        out.append(contentsOf: ".M".utf8)
        MailMessageBuilder.forEachDigit(of: milliseconds) { out.append($0) }
        out.append(UInt8(ascii: "P"))
        out.append(contentsOf: hashDigits)
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

    /// `bytes` with mboxrd's quoting (a `>` added to every line that starts with any number of `>` followed by
    /// `From `), handed to `write` in pieces: the runs of lines that need none as they are
    /// (usually the whole message), a `>` before each line that does. Works on the UTF-8 bytes (Foundation's
    /// substring search here was ~45 % of an mbox export).
    static func mboxrdQuote(_ bytes: UnsafeBufferPointer<UInt8>, _ write: (UnsafeRawBufferPointer) -> Void) {
        var written = 0
        var lineStart = 0
        while lineStart < bytes.count {
            var index = lineStart
            while index < bytes.count && bytes[index] == UInt8(ascii: ">") { index += 1 }
            let end = bytes[index...].firstIndex(of: 0x0A) ?? bytes.count
            if end - index >= 5 && bytes[index..<index + 5].elementsEqual("From ".utf8) {
                write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[written..<lineStart])))
                withUnsafeBytes(of: UInt8(ascii: ">")) { write($0) }
                written = lineStart
            }
            lineStart = end + 1
        }
        write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[written...])))
    }
}
