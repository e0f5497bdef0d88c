import Foundation
import RoostArchive

/// `roost search QUERY...`: full-text search of the archive with the shared query language.
struct SearchCommand: Command {
    static let name = "search"
    static let summary = "search the archive (words, \"phrases\", OR, -word, prefix*, from: with: date: ...)"
    static let usage = "[options] QUERY..."
    static let discussion = """
        Words must all match (AND); "quoted phrases"; OR between alternatives; NOT word or -word to exclude; \
        prefix* for word starts; parentheses group. Filters: from:JID to:JID with:JID (the conversation) \
        account:JID date:A..B after:A before:B (YYYY-MM-DD, YYYY-MM, YYYY-MM-DDTHH:MM, or 7d 2w 3m 1y today \
        yesterday) is:in is:out is:chat is:groupchat is:edited has:file. Chinese, Japanese and Korean words \
        of any length are found (好友, 消息). No words means every message matching the filters. \
        Exit status: 0 found, 1 nothing matched, 2 invalid query.
        """
    static let options: [OptionSpec] = [
        .flag("oldest-first", help: "oldest matches first (default: newest first)"),
        .flag("rank", help: "best matches first (bm25 over the newest 20000 candidates)"),
        .value("limit", short: "n", placeholder: "N", help: "at most N results (default 50, 0 = no limit)"),
        .value("offset", placeholder: "N", help: "skip the first N results"),
    ]

    let query: String
    let order: SearchOrder
    let limit: Int
    let offset: Int

    init(parsed: ParsedArguments) throws(UsageError) {
        query = parsed.positionals.joined(separator: " ")
        if parsed.flag("oldest-first") && parsed.flag("rank") {
            throw UsageError("--oldest-first and --rank cannot be combined", command: parsed.command)
        }
        order = parsed.flag("rank") ? .rank : parsed.flag("oldest-first") ? .oldestFirst : .newestFirst
        let l = try parsed.integer("limit", in: 0...10_000_000) ?? 50
        limit = l == 0 ? Int.max / 2 : l
        offset = try parsed.integer("offset", in: 0...Int(Int32.max)) ?? 0
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let reader = try ArchiveAccess.reader(context)
        var text = query
        if let account = context.options.account { text = "account:\(account) (\(text.isEmpty ? "" : text))" }
        if query.isEmpty, let account = context.options.account { text = "account:\(account)" }
        let highlight = context.output.standardOutputIsTTY
        let output = context.output
        let json = context.options.json
        var found = 0
        // Streamed: all matches of a common word (`--limit 0`) are printed as they are read, never held.
        do {
            try reader.search(query: text, order: order, limit: limit, offset: offset) { row in
                found += 1
                if json { output.jsonLine(row.json) } else { output.line(row.humanLine(highlight: highlight)) }
                return true
            }
        } catch let error as ArchiveError {
            throw ArchiveFailure(error: error)
        }
        return found == 0 ? .nothingFound : .ok
    }
}
