import Foundation
import RoostAgent
import RoostArchive
#if canImport(Glibc)
import Glibc
#endif

/// `roost export [QUERY...] --format FORMAT [--output PATH]`: the archive (or what a query selects) to files.
struct ExportCommand: Command {
    static let name = "export"
    static let summary = "export history to jsonl, txt, md, html, mbox, maildir or csv"
    static let usage = "[options] --format FORMAT [QUERY...]"
    static let discussion = """
        Selects messages with the query language of `roost search` (no query: everything; names work as in \
        search, e.g. with:Bob) and writes them as jsonl (lossless, re-importable with `roost import`), txt, md, \
        html (a folder: index.html plus a page per conversation), mbox, maildir (a folder) or csv; only \
        conversations with matching messages are written. Without --output, single-file formats go to standard \
        output; missing parent folders of --output are created. --split conversation|month writes one file per \
        conversation or month into the --output folder. jsonl always carries every kind of record: messages, \
        chat states, presence changes, contacts and friend requests with their answers (each line's "event" \
        says which), so export, import and export again give the same bytes. For the other formats, \
        --include states,presence adds chat states and presence changes to the transcripts; with an empty \
        query they are exported whole, otherwise for the selected conversations' time span. --bom starts csv \
        files with a byte order mark, for spreadsheet programs. --conversation WHO exports one conversation, named \
        as in `roost log` (a JID, room@service/nick for a private conversation in a room, or a name) and taken as \
        it is, never read as query language (a room nick may be anything); a QUERY given too narrows it. \
        Attachments stored locally are copied into attachments/ (beside a single file: NAME_files/). \
        --since-last NAME writes only the messages that changed (new, corrected, retracted, reacted to, an \
        attachment stored) since the previous export with that NAME, in any format; the cursor NAME is kept in the \
        archive and moves only once the export is complete and on disk (the first run writes everything). \
        Output is written under a temporary name and renamed when complete; an existing output is only \
        replaced with --force. Exit status: 0 exported, 1 nothing matched, 2 invalid command line or query, \
        70 the output could not be written (e.g. disk full).
        """
    static let options: [OptionSpec] = [
        .value("format", short: "f", placeholder: "FORMAT", help: "jsonl, txt, md, html, mbox, maildir or csv")
            .completing(.choices(ExportFormat.allCases.map(\.rawValue))),
        .value("output", short: "o", placeholder: "PATH", help: "file or folder to create; - for standard output").completing(.file),
        .value("conversation", placeholder: "WHO", help: "only this conversation (as roost log names it), never read as a query")
            .completing(.contact),
        .value("split", placeholder: "MODE", help: "none (default), conversation or month")
            .completing(.choices(ExportSplit.allCases.map(\.rawValue))),
        .values("include", placeholder: "LIST", help: "txt, md, html, mbox, maildir, csv: also states, presence (comma-separated, or all); jsonl has all"),
        .flag("utc", help: "times in UTC instead of the local time zone"),
        .flag("bom", help: "csv: start with a UTF-8 byte order mark (for Excel and other spreadsheets)"),
        .flag("force", help: "replace an existing output"),
        .flag("no-attachments", help: "do not copy attachment files next to the export"),
        .value("max-attachment-size", placeholder: "SIZE", help: "mbox, maildir: embed files up to SIZE (default 25M), link larger ones"),
        .value("since-last", placeholder: "NAME", help: "only what changed since the last export with this NAME (a cursor in the archive)"),
    ]

    let query: String
    /// `--conversation WHO`, resolved when the archive is open.
    let conversation: String?
    let format: ExportFormat
    let output: String?
    let split: ExportSplit
    let include: Set<ExportInclusion>
    let utc: Bool
    let force: Bool
    let copyAttachments: Bool
    let mailAttachmentLimit: Int64
    let byteOrderMark: Bool
    /// `--since-last NAME`.
    let sinceLast: String?
    static let takesQuery = true
    static let arguments: [ArgumentKind] = [.query]

    init(parsed: ParsedArguments) throws(UsageError) {
        query = parsed.positionals.joined(separator: " ")
        conversation = parsed.value("conversation")
        guard let format = try parsed.choice("format", of: ExportFormat.self) else {
            let names = ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("missing --format (one of \(names))", command: parsed.command)
        }
        self.format = format
        output = parsed.value("output")
        split = try parsed.choice("split", of: ExportSplit.self) ?? .none
        var include: Set<ExportInclusion> = []
        for item in parsed.values("include").flatMap({ $0.split(separator: ",") }) {
            let word = item.trimmingCharacters(in: .whitespaces).lowercased()
            if word == "all" {
                include.formUnion(ExportInclusion.allCases)
            } else if let inclusion = ExportInclusion(rawValue: word) ?? (word == "state" || word == "chat-states" ? .states : nil) {
                include.insert(inclusion)
            } else {
                throw UsageError("invalid value '\(item)' for --include: expected states, presence, contacts or all", command: parsed.command)
            }
        }
        // jsonl is the lossless backup: every kind of record, always.
        self.include = format == .jsonl ? Set(ExportInclusion.allCases) : include
        byteOrderMark = parsed.flag("bom")
        sinceLast = parsed.value("since-last")
        if let sinceLast, sinceLast.isEmpty || sinceLast.count > 200 {
            throw UsageError("invalid --since-last '\(sinceLast.prefix(40))': expected a name of 1 to 200 characters", command: parsed.command)
        }
        if byteOrderMark && format != .csv {
            throw UsageError("--bom is for --format csv", command: parsed.command)
        }
        utc = parsed.flag("utc")
        force = parsed.flag("force")
        copyAttachments = !parsed.flag("no-attachments")
        if let text = parsed.value("max-attachment-size") {
            guard let limit = FileSize.parse(text) else {
                throw UsageError("invalid --max-attachment-size '\(text)': expected a size such as 25M, 1G or 500000", command: parsed.command)
            }
            mailAttachmentLimit = limit
        } else {
            mailAttachmentLimit = ExportOptions.defaultMailAttachmentLimit
        }
        if output == nil && (!format.canStream || split != .none) {
            let what = format.canStream ? "--split \(split.rawValue)" : "--format \(format.rawValue)"
            throw UsageError("\(what) writes a folder: give --output FOLDER", command: parsed.command)
        }
        if output == "-" && !format.canStream {
            throw UsageError("--format \(format.rawValue) writes a folder and cannot go to standard output", command: parsed.command)
        }
        if output == "-" && split != .none {
            throw UsageError("--split \(split.rawValue) writes several files and cannot go to standard output", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let reader = view.reader
        // A file size limit (ulimit -f) should end in a clear error, not a silent kill by SIGXFSZ.
        signal(SIGXFSZ, SIG_IGN)
        // By value: the conversation's address never becomes query text (a nick such as `z OR after:2000-01-01` would
        // select the whole archive).
        let selected = try conversation.map { try view.conversation($0) }
        let account = selected.flatMap { $0.account.isEmpty ? nil : $0.account } ?? view.account
        var options = ExportOptions(
            format: format, query: query, account: account, conversation: selected?.jid, split: split, include: include,
            timeZone: utc ? TimeZone(identifier: "UTC")! : .current, force: force, copyAttachments: copyAttachments)
        options.mailAttachmentLimit = mailAttachmentLimit
        options.csvByteOrderMark = byteOrderMark
        options.thumbnails = PixbufThumbnails()
        options.sinceCursor = sinceLast
        let toStandardOutput = output == nil || output == "-"
        let destination: ExportDestination = toStandardOutput ? .stream(fileDescriptor: STDOUT_FILENO) : .path(output!)
        let meter = ProgressMeter(output: context.output, enabled: context.output.standardErrorIsTTY && !context.options.quiet,
                                  noun: "messages")
        let summary: ExportSummary
        do {
            summary = try ArchiveExporter(reader: reader).export(options, to: destination) { meter.show($0) }
        } catch {
            meter.clear()
            throw ExportFailure(error: error)
        }
        meter.clear()
        if let sinceLast, let position = summary.feedPosition {
            // The export is complete and synced (a stream: written): only now does the cursor move.
            do {
                try ArchiveWriter(path: reader.path).setCursor(sinceLast, to: position)
            } catch {
                throw ArchiveFailure(error: error)
            }
        }
        report(summary, context: context, toStandardOutput: toStandardOutput)
        if summary.messages == 0 && summary.chatStates == 0 && summary.presenceChanges == 0 && summary.contacts == 0 && summary.subscriptions == 0 {
            if !context.options.quiet { context.output.warning("nothing matched the query; the export is empty") }
            return .nothingFound
        }
        return .ok
    }

    private func report(_ summary: ExportSummary, context: CommandContext, toStandardOutput: Bool) {
        if context.options.json && !toStandardOutput {
            context.output.jsonLine([
                "output": .string(summary.outputPath), "format": .string(format.rawValue), "messages": .int(summary.messages),
                "chat_states": .int(summary.chatStates), "presence": .int(summary.presenceChanges), "subscriptions": .int(summary.subscriptions),
                "contacts": .int(summary.contacts),
                "conversations": summary.conversations.map { .int($0) } ?? .null, "files": .int(summary.files),
                "attachments_copied": .int(summary.attachmentsCopied), "attachments_missing": .int(summary.attachmentsMissing),
                "bytes": .int(summary.bytes), "since_last": .string(sinceLast),
                "feed_position": summary.feedPosition.map { JSONValue.int($0) } ?? .null,
            ])
            return
        }
        guard !context.options.quiet else { return }
        var text = "exported \(Counted.noun(summary.messages, "message"))"
        if let conversations = summary.conversations {
            text += " from \(Counted.noun(conversations, "conversation"))"
        }
        var extras: [String] = []
        if summary.chatStates > 0 { extras.append(Counted.noun(summary.chatStates, "chat state")) }
        if summary.presenceChanges > 0 { extras.append(Counted.noun(summary.presenceChanges, "presence change")) }
        if summary.subscriptions > 0 { extras.append(Counted.noun(summary.subscriptions, "friend request or answer", plural: "friend requests and answers")) }
        if summary.contacts > 0 { extras.append(Counted.noun(summary.contacts, "contact")) }
        if summary.attachmentsCopied > 0 { extras.append(Counted.noun(summary.attachmentsCopied, "attachment file")) }
        if !extras.isEmpty { text += " (+ " + extras.joined(separator: ", ") + ")" }
        if let path = summary.outputPath { text += " to \(path)" }
        // The data may be on standard output: the summary always goes to standard error.
        context.output.note(text)
        if summary.attachmentsMissing > 0 {
            context.output.warning("\(Counted.noun(summary.attachmentsMissing, "attachment file")) \(summary.attachmentsMissing == 1 ? "is" : "are") not stored locally; the export links to \(summary.attachmentsMissing == 1 ? "its URL" : "their URLs")")
        }
    }
}

struct ExportFailure: CommandFailure {
    let error: any Error
    var exitCode: ExitCode {
        switch error {
        case let error as ExportError:
            switch error {
            case .archive(let archive): return ArchiveFailure(error: archive).exitCode
            case .outputExists, .needsPath: return .usage
            case .io, .cancelled: return .internalError
            }
        default: return .internalError
        }
    }

    var description: String {
        if let error = error as? ExportError, case .archive(let archive) = error { return ArchiveFailure(error: archive).description }
        return "\(error)"
    }
}

/// A one-line progress display on a terminal's standard error (count, rate, ETA), redrawn in place.
final class ProgressMeter: @unchecked Sendable {
    private let output: Output
    private let enabled: Bool
    private let noun: String
    private var shown = false

    init(output: Output, enabled: Bool, noun: String) {
        self.output = output
        self.enabled = enabled
        self.noun = noun
    }

    func show(_ progress: ExportProgress) {
        guard enabled else { return }
        output.standardError.write("\r\u{1B}[K" + progress.line(noun: noun))
        shown = true
    }

    func show(text: String) {
        guard enabled else { return }
        output.standardError.write("\r\u{1B}[K" + text)
        shown = true
    }

    /// `bob.png  [##########----------]  52%  1.4 MB of 2.7 MB`
    static func bar(name: String, _ progress: TransferProgress) -> String {
        let fraction = progress.total > 0 ? min(1, Double(progress.done) / Double(progress.total)) : 0
        let filled = Int((fraction * 20).rounded(.down))
        return "\(name)  [\(String(repeating: "#", count: filled))\(String(repeating: "-", count: 20 - filled))]  "
            + "\(Int((fraction * 100).rounded(.down)))%  \(FileSize.text(progress.done)) of \(FileSize.text(progress.total))"
    }

    func clear() {
        guard shown else { return }
        output.standardError.write("\r\u{1B}[K")
        shown = false
    }
}
