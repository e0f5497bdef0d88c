import RoostCore
import Foundation
import RoostAgent
import RoostArchive

/// `roost files`: the attachments of the archive and their files; `roost files fetch` downloads missing ones.
struct FilesCommand: Command {
    static let name = "files"
    static let summary = "list attachments (sender, name, type, size, state, local file); fetch missing ones"
    static let usage = "[options] [QUERY...] | fetch [--retry-failed] [QUERY...]"
    static let discussion = """
        Lists the files shared in the messages QUERY selects (the language of `roost search`; none: every \
        message), newest first: time, sender, name, media type, size, state and where the file is kept. \
        States: stored (kept in the archive's file store), pending (waiting for the download worker), \
        too-large ([files] max_size), failed:REASON (retried with backoff), refused:REASON (not-a-contact, \
        downloads-off, private-address, hash-mismatch, scheme, redirects). Filters for files: has:file \
        has:image has:video has:audio filename:NAME (or a glob: filename:*.pdf) type:image/png (or type:image).
        fetch downloads the selected files that are not kept — pending ones and those refused by the \
        [files] download policy or max_size, whoever sent them; --retry-failed adds failed and refused ones. \
        The size limit, the private-address rule and advertised hashes still apply. Goes through the running \
        agent; without one, roost downloads them itself. Exit status: 0 listed or all fetched, 1 nothing \
        matched or some files could not be fetched, 2 invalid query.
        """
    static let options: [OptionSpec] = [
        .value("state", placeholder: "STATE", help: "list only files in this state (stored, pending, too-large, failed, refused)")
            .completing(.choices(["stored", "pending", "too-large", "failed", "refused"])),
        .value("limit", short: "n", placeholder: "N", help: "list at most N files (default: all)"),
        .flag("retry-failed", help: "fetch: also retry failed and refused downloads"),
    ]

    static let takesQuery = true
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("fetch", [.query])]), .query]

    let fetch: Bool
    let query: String
    let state: String?
    let limit: Int
    let retryFailed: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        var words = parsed.positionals
        fetch = words.first == "fetch"
        if fetch { words.removeFirst() }
        query = words.joined(separator: " ")
        state = parsed.value("state")?.lowercased()
        if let state, !["stored", "pending", "too-large", "failed", "refused"].contains(where: { state == $0 || state.hasPrefix($0 + ":") }) {
            throw UsageError("unknown --state \(state) (expected stored, pending, too-large, failed or refused)", command: parsed.command)
        }
        limit = try parsed.integer("limit", in: 0...10_000_000) ?? 0
        retryFailed = parsed.flag("retry-failed")
        if retryFailed && !fetch { throw UsageError("--retry-failed goes with `roost files fetch`", command: parsed.command) }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let reader = view.reader
        var text = query
        if let account = view.account { text = "account:\(account)" + (query.isEmpty ? "" : " (\(query))") }
        var rows: [FileRow]
        do { rows = try reader.files(matching: text, limit: fetch ? 0 : limit) } catch { throw ArchiveFailure(error: error) }
        if let state { rows = rows.filter { $0.attachment.state.rawValue == state || $0.attachment.state.rawValue.hasPrefix(state + ":") } }
        return fetch ? try await fetchMissing(rows, context: context) : list(rows, context: context)
    }

    private func list(_ rows: [FileRow], context: CommandContext) -> ExitCode {
        for row in rows {
            if context.options.json {
                var object = row.attachment.summaryJSON
                object["id"] = .int(row.id)
                object["message_id"] = .int(row.messageID)
                object["account"] = .string(row.account)
                object["conversation"] = .string(row.conversation)
                object["direction"] = .string(row.direction.rawValue)
                object["from"] = .string(row.from)
                object["sender_name"] = .string(row.senderName)
                object["timestamp"] = .string(TimeText.utc(row.timestamp))
                object["width"] = row.attachment.width.map { .int(Int64($0)) } ?? .null
                object["height"] = row.attachment.height.map { .int(Int64($0)) } ?? .null
                object["description"] = .string(row.attachment.description)
                object["attempts"] = .int(Int64(row.attempts))
                object["next_attempt"] = row.nextAttemptAt.map { .string(TimeText.utc($0)) } ?? .null
                context.output.jsonLine(object)
            } else {
                let file = row.attachment
                let who = row.direction == .outgoing ? "me" : (row.senderName ?? row.from)
                var line = "\(TimeText.local(row.timestamp))  \(who)  \(file.displayName)  \(file.mime ?? "-")  "
                line += "\(file.size.map(FileSize.text) ?? "-")  \(file.state.rawValue)"
                if let path = file.localPath { line += "  \(path)" }
                context.output.line(line)
            }
        }
        return rows.isEmpty ? .nothingFound : .ok
    }

    private func wanted(_ state: AttachmentState) -> Bool {
        switch state {
        case .stored: false
        case .pending, .tooLarge: true
        case .refused(let reason): retryFailed || reason == "not-a-contact" || reason == "downloads-off"
        case .failed: retryFailed
        }
    }

    private func fetchMissing(_ rows: [FileRow], context: CommandContext) async throws -> ExitCode {
        let selected = rows.filter { wanted($0.attachment.state) }
        guard !selected.isEmpty else {
            if !context.options.quiet && !context.options.json {
                context.output.note(rows.isEmpty ? "no files match" : "nothing to fetch: every selected file is kept" + (retryFailed ? "" : " or failed (add --retry-failed)"))
            }
            return rows.isEmpty ? .nothingFound : .ok
        }
        let config = try context.loadConfig()
        let request = FileFetchRequest(ids: selected.map(\.id))
        if context.output.standardErrorIsTTY && !context.options.quiet && !context.options.json {
            context.output.note("fetching \(selected.count) file\(selected.count == 1 ? "" : "s")…")
        }
        let results: [FileFetchRequest.Result]
        if let agent = ControlClient.connect(path: ControlSocketPath.resolve(environment: context.environment)) {
            results = try agent.fetchFiles(request)
        } else {
            let level = context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .warning)
            results = try await request.runWithoutAgent(config: config, log: Logger(level: level))
        }
        let byID = Dictionary(uniqueKeysWithValues: selected.map { ($0.id, $0) })
        var kept = 0
        for result in results {
            let name = byID[result.id]?.attachment.displayName ?? "#\(result.id)"
            if result.state == AttachmentState.stored.rawValue { kept += 1 }
            if context.options.json {
                context.output.jsonLine(["id": .int(result.id), "name": .string(name), "state": .string(result.state)])
            } else {
                context.output.line("\(result.state ?? "gone")  \(name)")
            }
        }
        return kept == results.count ? .ok : .nothingFound
    }
}
