import Foundation
import RoostArchive

/// `roost show ID`: one message in full (the short id from search or log output), optionally amid its
/// conversation.
struct ShowCommand: Command {
    static let name = "show"
    static let summary = "show one message in full by its id (from search or log), optionally with context"
    static let usage = "[options] ID"
    static let discussion = """
        ID is the short id at the start of every line of `roost search` and `roost log` (at least four of its \
        characters when that is unique), or the decimal `id` of --json output. Prints who wrote the message \
        to whom and when (server time and receipt time), its kind and source, ids, corrections, encryption, \
        files, the message it answers, its reactions, a retraction (by whom, when; the text shows as its \
        tombstone), the whole text and every earlier version with the time it was written; you are "me" \
        throughout. --context N shows N messages of the conversation before and after it as a \
        transcript, the message marked with `*`. Exit status: 0 shown, 1 no such message, 2 an id prefix \
        that fits several messages (they are listed).
        """
    static let options: [OptionSpec] = [
        .value("context", short: "C", placeholder: "N", help: "also show N messages before and after it"),
    ]
    static let arguments: [ArgumentKind] = [.text]

    let id: String
    let context: Int
    var pagesOutput: Bool { context > 0 }

    init(parsed: ParsedArguments) throws(UsageError) {
        id = try parsed.onePositional(named: "ID")
        context = try parsed.integer("context", in: 0...10_000) ?? 0
        if ShortID.normalised(id) == nil && ShortID.decimalID(id) == nil {
            throw UsageError("'\(id)' is not a message id: expected the short id of search or log output (4 to \(ShortID.length) "
                             + "letters and digits) or a decimal id from --json", command: parsed.command)
        }
    }

    struct NotFound: CommandFailure {
        let id: String
        var exitCode: ExitCode { .nothingFound }
        var description: String { "no message has the id \(id)" }
    }

    func run(context commandContext: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(commandContext)
        let output = commandContext.output
        var found: [MessageRow]
        do { found = try view.reader.messages(withID: id) } catch { throw ArchiveFailure(error: error) }
        if let account = view.account { found = found.filter { $0.account.caseInsensitiveCompare(account) == .orderedSame } }
        guard let row = found.first else { throw NotFound(id: id) }
        if found.count > 1 {
            let listed = found.map { "  " + view.text.searchLine($0, highlight: false).rendered }.joined(separator: "\n")
            throw UsageError("the id \(id) fits \(found.count) messages; give more of it:\n\(listed)", command: "roost show")
        }
        let rows: [MessageRow]
        do { rows = context > 0 ? try view.reader.context(of: row, before: context, after: context) : [row] } catch {
            throw ArchiveFailure(error: error)
        }
        for other in rows {
            if commandContext.options.json {
                var object = view.text.json(other)
                if context > 0 { object["target"] = .bool(other.id == row.id) }
                output.jsonLine(object)
            } else if other.id == row.id {
                if context > 0 { output.line("") }
                let revisions: [MessageRevision]
                do { revisions = row.edited ? try view.reader.revisions(ofMessage: row.id) : [] } catch { throw ArchiveFailure(error: error) }
                for line in details(of: row, view: view, revisions: revisions) { output.line(line) }
                if context > 0 { output.line("") }
            } else {
                output.line("  " + view.text.logLine(other))
            }
        }
        return .ok
    }

    private func details(of row: MessageRow, view: ArchiveView, revisions: [MessageRevision]) -> [TerminalText] {
        let text = view.text
        let output = text.output
        func field(_ label: String, _ value: String?) -> TerminalText? {
            value.map { output.styled((label + ":").padding(toLength: 14, withPad: " ", startingAt: 0), .dim) + TerminalText($0) }
        }
        let conversationName = text.conversationName(of: row)
        let conversation = conversationName == row.conversation ? row.conversation : "\(conversationName) (\(row.conversation))"
        let sender = text.sender(of: row)
        let named = text.named(row.semantics, of: row)
        var lines: [TerminalText?] = [
            field("message", ShortID.text(for: row.id) + " (id \(row.id))"),
            field("account", row.account),
            field("conversation", conversation),
            field("from", sender == row.from ? row.from : "\(sender) <\(row.from)>"),
            field("to", row.to),
            field("time", TimeText.local(row.timestamp, seconds: true) + (row.receivedAt != row.timestamp
                ? " (received \(TimeText.local(row.receivedAt, seconds: true)))" : "")),
            // The source says where Roost got it; a carbon copy that came otherwise (the server archive) says so once.
            field("kind", "\(row.kind.rawValue), \(row.direction == .incoming ? "incoming" : "outgoing"), \(row.source.rawValue)"
                + (row.isCarbon && row.source != .carbon ? " (a carbon copy)" : "")),
            field("edited", row.edited ? Counted.noun(row.revisions, "correction") : nil),
            field("retracted", named.retraction.map { r in
                "by \(r.by), at \(TimeText.local(r.at, seconds: true))" + (r.reason.map { ": \($0)" } ?? "")
                    + (row.body == nil ? " (its text and earlier versions are erased)" : " (its text kept)")
            }),
            field("reply to", named.replyContext.map { String($0.dropFirst(2)) }),
            field("reactions", named.reactionSummary),
            field("encryption", row.encryption.map { e in
                [e.scheme, e.trust.map { "trust \($0)" }, e.failure.map { "could not be decrypted: \($0)" }].compactMap { $0 }.joined(separator: ", ")
            }),
            field("stanza-id", row.stanzaId),
            field("origin-id", row.originId),
            field("message-id", row.messageId),
            field("thread", row.thread),
            field("subject", row.subject),
        ]
        for attachment in row.attachments {
            lines.append(field("file", attachment.tag + " " + (attachment.localPath ?? attachment.url)))
        }
        var result = lines.compactMap { $0 }
        result.append("")
        // The whole text as `roost log` shows it (a retracted message as its tombstone); its reply context and
        // reactions are fields above.
        var shown = row
        shown.semantics.reactions = []
        shown.semantics.reply = nil
        result.append(text.body(of: shown, highlight: false))
        if revisions.count > 1 {
            // Every earlier version, with the time it was written (the last revision is the text above).
            result.append("")
            result.append(output.styled("earlier versions:", .dim))
            for revision in revisions.dropLast() {
                let written = output.styled(TimeText.local(revision.timestamp, seconds: true), .dim)
                let body = (revision.body ?? "(no text)").replacingOccurrences(of: "\n", with: "\n    ")
                result.append("  " + written + " " + TerminalText(body))
            }
        }
        return result
    }
}
