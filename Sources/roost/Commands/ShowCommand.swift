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
        to whom and when (server time and receipt time), its kind and how it arrived, the message it answers, \
        its reactions, ids, encryption, files and the whole text; a retracted message shows who retracted it and \
        when in place of its text; then every earlier version of a corrected message with its time, and every \
        change of its reactions. The user is `me` throughout. --json prints the message as export does (docs/export.md), whose \
        `revisions` and `reactions` hold the versions and every reaction update. \
        --context N shows N messages of the conversation before and after it as a transcript. Exit status: 0 shown, 1 no such message, 2 an id prefix \
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
                output.jsonLine(encoded: view.text.jsonLine(other, target: context > 0 ? other.id == row.id : nil))
            } else if other.id == row.id {
                if context > 0 { output.line("") }
                for line in details(of: row, view: view) { output.line(line) }
                if context > 0 { output.line("") }
            } else {
                output.line("  " + view.text.logLine(other))
            }
        }
        return .ok
    }

    private func details(of row: MessageRow, view: ArchiveView) -> [TerminalText] {
        let text = view.text
        let output = text.output
        func field(_ label: String, _ value: String?) -> TerminalText? {
            value.map { output.styled((label + ":").padding(toLength: 14, withPad: " ", startingAt: 0), .dim) + TerminalText($0) }
        }
        func time(_ at: Int64) -> String { TimeText.local(at, seconds: true) }
        let conversationName = text.conversationName(of: row)
        let conversation = conversationName == row.conversation ? row.conversation : "\(conversationName) (\(row.conversation))"
        let sender = text.sender(of: row)
        // The people in it named as everywhere: `me`, a room's occupant by nick, anyone else by their name now.
        let semantics = text.named(row.semantics, of: row)
        var lines: [TerminalText?] = [
            field("message", ShortID.text(for: row.id) + " (id \(row.id))"),
            field("account", row.account),
            field("conversation", conversation),
            field("from", sender == row.from ? row.from : "\(sender) <\(row.from)>"),
            field("to", row.to),
            field("time", time(row.timestamp) + (row.receivedAt != row.timestamp ? " (received \(time(row.receivedAt)))" : "")),
            field("kind", "\(row.kind.rawValue), \(row.direction == .incoming ? "incoming" : "outgoing")"),
            field("arrived", Self.arrival(of: row)),
            field("answers", semantics.replyContext.map { String($0.dropFirst(2)) }),
            field("retracted", semantics.retraction.map { "by \($0.byName) at \(time($0.at))" + ($0.reason.map { ": \($0)" } ?? "") }),
            field("reactions", semantics.reactionSummary),
            field("edited", row.edited ? Counted.noun(row.revisions, "correction") + " (versions below)" : nil),
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
        // A retracted message: the tombstone in place of its text (above it when `keep_retracted` kept the text).
        if let tombstone = semantics.tombstone(time: time) { result.append(output.styled("[\(tombstone)]", .dim)) }
        if semantics.retraction == nil || row.body != nil { result.append(TerminalText(row.displayBody ?? "")) }
        if !row.versions.isEmpty {
            result.append("")
            result.append(output.styled("versions, oldest first:", .dim))
            for revision in row.versions {
                let label = revision.revision == 0 ? "original" : "correction \(revision.revision)"
                let body = (revision.body ?? "").replacingOccurrences(of: "\n", with: "\n    ")
                result.append("  " + output.styled(time(revision.timestamp), .dim) + " \(label): " + TerminalText(body))
            }
        }
        if !row.reactionHistory.isEmpty {
            result.append("")
            result.append(output.styled("reactions over time:", .dim))
            for update in row.reactionHistory {
                let emojis = update.emojis.isEmpty ? "(took back every reaction)" : update.emojis.joined(separator: " ")
                result.append("  " + output.styled(time(update.timestamp), .dim) + " "
                              + output.styled(Self.reactor(update, of: row, view: view), .name) + ": " + TerminalText(emojis))
            }
        }
        return result
    }

    /// How the archive learnt of it, in words (a carbon is a copy of what another client of the user sent or got).
    private static func arrival(of row: MessageRow) -> String {
        let how = switch row.source {
        case .live: "live"
        case .carbon: "as a carbon copy"
        case .mam: "from the server archive"
        case .import: "imported"
        }
        return row.isCarbon && row.source != .carbon ? how + ", a carbon copy" : how
    }

    /// A reactor as `show` names everyone (`MessageText.person`): `me`, a room occupant by the nick the update
    /// came with, anyone else by their name now.
    private static func reactor(_ update: ReactionUpdate, of row: MessageRow, view: ArchiveView) -> String {
        if update.direction == .outgoing { return "me" }
        if let name = update.name, row.kind == .groupchat || row.conversation.contains("/") { return name }
        return view.text.person(update.reactor, about: row)
    }
}
