import Foundation
import RoostArchive

/// `roost forget QUERY... | --id ID`: removes messages from the archive for good, and keeps them from coming back.
struct ForgetCommand: Command {
    static let name = "forget"
    static let summary = "remove messages for good (a query as in search, or --id ID); asks for confirmation"
    static let usage = "[options] QUERY... | --id ID"
    static let discussion = """
        Removes the messages matching QUERY (the language of `roost search`: with:bob, before:2020, in:room, \
        words) or the one message --id names (its short id from search or log, or the decimal id of --json) from \
        the archive: their text, stored stanzas, earlier versions, reactions, full-text entries, attachments' files \
        that no other message refers to, and their share of unread counts. The deleted content is overwritten \
        (SQLite's secure_delete, a merge of the full-text index, the write-ahead log emptied), so the words are gone \
        from the archive's files, not only from its answers. What stays is a tombstone per message (its \
        stanza-id and origin-id, never its text), so that the server's archive, a resend or a carbon does not bring it \
        back. Works while the agent runs (it waits for the archive's write lock like any writer). --dry-run shows \
        what would go: the count per conversation and the first messages as `roost search` shows them. Otherwise \
        asks on the terminal; without one, --yes is needed. Backups and other copies are not touched. \
        Exit status: 0 forgotten (or shown with --dry-run), 1 nothing matched or not confirmed, 2 invalid query, \
        no query, or no terminal to confirm on and no --yes.
        """
    static let options: [OptionSpec] = [
        .value("id", placeholder: "ID", help: "forget this one message (short id from search or log, or decimal id)"),
        .flag("dry-run", help: "show what would be forgotten, change nothing"),
        .flag("yes", short: "y", help: "do not ask for confirmation"),
    ]
    static let takesQuery = true
    static let arguments: [ArgumentKind] = [.query]
    /// How many of the messages `--dry-run` and the confirmation show.
    static let shown = 10

    let query: String
    let id: String?
    let dryRun: Bool
    let confirmed: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        query = parsed.positionals.joined(separator: " ")
        id = parsed.value("id")
        dryRun = parsed.flag("dry-run")
        confirmed = parsed.flag("yes")
        if let id {
            guard query.isEmpty else { throw UsageError("give a query or --id, not both", command: parsed.command) }
            if ShortID.normalised(id) == nil && ShortID.decimalID(id) == nil {
                throw UsageError("'\(id)' is not a message id: expected the short id of search or log output (4 to \(ShortID.length) "
                                 + "letters and digits) or a decimal id from --json", command: parsed.command)
            }
        } else if query.trimmingCharacters(in: .whitespaces).isEmpty {
            throw UsageError("say what to forget: a query (with:bob, before:2020, in:room, words) or --id ID", command: parsed.command)
        }
    }

    struct NoTerminal: CommandFailure {
        var exitCode: ExitCode { .usage }
        var description: String {
            "roost forget asks for a confirmation on a terminal, and there is none: pass --yes to forget, or --dry-run to see what would go"
        }
    }

    struct NotConfirmed: CommandFailure {
        var exitCode: ExitCode { .nothingFound }
        var description: String { "not confirmed; nothing was forgotten" }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let output = context.output
        let json = context.options.json
        // What goes: the ids, read in one snapshot; a message archived after it stays.
        let ids: [Int64]
        let sample: [MessageRow]
        let counts: [Share]
        do {
            if let id {
                var found = try view.reader.messages(withID: id)
                if let account = view.account { found = found.filter { $0.account.caseInsensitiveCompare(account) == .orderedSame } }
                if found.count > 1 {
                    let listed = found.map { "  " + view.text.searchLine($0, highlight: false).rendered }.joined(separator: "\n")
                    throw UsageError("the id \(id) fits \(found.count) messages; give more of it:\n\(listed)", command: "roost forget")
                }
                ids = found.map(\.id)
                sample = found
                counts = found.map { Share(account: $0.account, conversation: $0.conversation, messages: 1) }
            } else {
                ids = try view.reader.messageIDs(matching: query, account: view.account)
                sample = try view.reader.search(query: query, account: view.account, limit: Self.shown)
                counts = try view.reader.counts(query: query, account: view.account)
                    .map { Share(account: $0.account, conversation: $0.conversation, messages: $0.messages) }
            }
        } catch let error as ArchiveError {
            throw ArchiveFailure(error: error)
        }
        guard !ids.isEmpty else {
            if json { output.jsonLine(["ok": true, "dry_run": .bool(dryRun), "messages": 0]) }
            output.note(id.map { "no message has the id \($0)" } ?? "no message matches; nothing to forget")
            return .nothingFound
        }
        let what = Counted.noun(ids.count, "message") + " in " + Counted.noun(counts.count, "conversation")
        if dryRun || !json {
            if json {
                output.jsonLine(["ok": true, "dry_run": true, "messages": .int(ids.count),
                                 "conversations": .array(counts.map { .object(Self.json($0)) })])
                return .ok
            }
            output.line((dryRun ? "would forget " : "forgets ") + what + ":")
            for count in counts.sorted(by: { ($0.messages, $1.conversation) > ($1.messages, $0.conversation) }) {
                let name = view.names.conversationName(of: count.conversation, account: count.account)
                let label = name == count.conversation ? name : "\(name) (\(count.conversation))"
                output.line("  \(label): " + Counted.noun(count.messages, "message"))
            }
            if ids.count > sample.count { output.line("the newest \(sample.count):") }
            for row in sample { output.line(view.text.searchLine(row, highlight: false)) }
            if dryRun { return .ok }
        }
        if !confirmed {
            guard isatty(STDIN_FILENO) == 1 else { throw NoTerminal() }
            let answer = try TerminalInput.line("Forget \(what) for good? Type yes to confirm: ")
            guard answer.trimmingCharacters(in: .whitespaces).lowercased() == "yes" else { throw NotConfirmed() }
        }
        let result: ForgetResult
        do {
            let writer = try ArchiveWriter(path: view.config.archivePath)
            result = try writer.forget(ids: ids)
        } catch {
            throw ArchiveFailure(error: error)
        }
        if json {
            output.jsonLine(["ok": true, "dry_run": false, "messages": .int(result.messages), "versions": .int(result.versions),
                             "reactions": .int(result.reactions), "attachments": .int(result.attachments), "files": .int(result.files),
                             "log_truncated": .bool(result.logTruncated)])
        } else {
            var parts = [Counted.noun(result.messages, "message")]
            if result.versions > 0 { parts.append(Counted.noun(result.versions, "earlier version")) }
            if result.reactions > 0 { parts.append(Counted.noun(result.reactions, "reaction")) }
            if result.files > 0 { parts.append(Counted.noun(result.files, "file")) }
            output.line("forgot " + parts.joined(separator: ", "))
            if !result.logTruncated {
                output.note("readers hold the archive's write-ahead log: earlier copies of the changed pages stay in it until "
                            + "the next checkpoint without readers (the agent's clean stop does one)")
            }
        }
        return .ok
    }

    /// A conversation's share of what goes.
    struct Share {
        let account: String
        let conversation: String
        let messages: Int
    }

    private static func json(_ count: Share) -> JSONObject {
        ["account": .string(count.account), "conversation": .string(count.conversation), "messages": .int(count.messages)]
    }
}
