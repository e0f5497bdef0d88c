import Foundation
import RoostArchive

/// `roost search QUERY...`: full-text search of the archive with the shared query language.
struct SearchCommand: Command {
    static let name = "search"
    static let summary = "search the archive (words, \"phrases\", OR, -word, prefix*, from: with: date: ...)"
    static let usage = "[options] QUERY..."
    static let discussion = """
        Words must all match (AND); "quoted phrases"; OR between alternatives; NOT word or -word to exclude \
        (-word needs no -- before it); prefix* for word starts (quote it, 'trav*', so the shell leaves it alone); \
        parentheses group. Filters: from:WHO to:WHO with:WHO (the conversation) in:ROOM, where WHO is a JID, \
        the start of one, or a roster name, nickname or full name (a name fitting several is an error listing \
        them); in rooms from:NAME also matches nicks starting with NAME; with:room@service/nick is the private \
        conversation with a room's occupant; account:JID date:A..B after:A before:B (YYYY-MM-DD, YYYY-MM, YYYY-MM-DDTHH:MM, or 7d 2w 3m 1y \
        today yesterday) is:in is:out is:chat is:groupchat is:edited has:file has:image filename:NAME type:MIME. \
        Chinese, Japanese and Korean words of any length are found (好友, 消息). No words means every message \
        matching the filters. Each line starts with the message's short id, for `roost show ID` and \
        `roost log WHO --around ID`, then reads sender → recipient: "Bob → me: …" is Bob's message to you, \
        "me → Bob: …" yours, "nick → room@service: …" a room's. On a terminal, when more match than are shown, stderr says how many. \
        Exit status: 0 found, 1 nothing matched (or a name matches no contact), 2 invalid query.
        """
    static let options: [OptionSpec] = [
        .flag("oldest-first", help: "oldest matches first (default: newest first)"),
        .flag("rank", help: "best matches first (bm25 over the newest 20000 candidates)"),
        .value("limit", short: "n", placeholder: "N", help: "at most N results (default 50, 0 = no limit)"),
        .value("offset", placeholder: "N", help: "skip the first N results"),
    ]
    static let takesQuery = true
    static let arguments: [ArgumentKind] = [.query]
    static let defaultLimit = 50

    let query: String
    let order: SearchOrder
    let limit: Int
    let offset: Int
    var pagesOutput: Bool { true }

    init(parsed: ParsedArguments) throws(UsageError) {
        query = parsed.positionals.joined(separator: " ")
        if parsed.flag("oldest-first") && parsed.flag("rank") {
            throw UsageError("--oldest-first and --rank cannot be combined", command: parsed.command)
        }
        order = parsed.flag("rank") ? .rank : parsed.flag("oldest-first") ? .oldestFirst : .newestFirst
        let l = try parsed.integer("limit", in: 0...10_000_000) ?? Self.defaultLimit
        limit = l == 0 ? Int.max / 2 : l
        offset = try parsed.integer("offset", in: 0...Int(Int32.max)) ?? 0
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let output = context.output.buffered()
        defer { output.flush() }
        let json = context.options.json
        var found = 0
        // Streamed: all matches of a common word (`--limit 0`) are printed as they are read, never held.
        do {
            if !json && !output.color {
                // Plain lines straight from the columns (`MessageText.appendSearchLine`), the rest as rows.
                let names = SearchLineNames()
                try view.reader.searchLines(query: query, account: view.account, order: order, limit: limit, offset: offset) { item in
                    found += 1
                    switch item {
                    case .line(let line): output.line { view.text.appendSearchLine(line, names: names, to: &$0) }
                    case .event(.message(let row)): output.line(view.text.searchLine(row, highlight: true))
                    case .event: break
                    }
                    return true
                }
            } else {
                try view.reader.search(query: query, account: view.account, order: order, limit: limit, offset: offset, forLines: !json) { row in
                    found += 1
                    if json { output.jsonLine(encoded: view.text.jsonLine(row)) } else { output.line(view.text.searchLine(row, highlight: true)) }
                    return true
                }
            }
        } catch let error as ArchiveError {
            throw ArchiveFailure(error: error)
        }
        // A full page on a terminal: say that there is more, and how to see it.
        if found == limit, output.standardOutputIsTTY, !json {
            let total = (try? view.reader.count(query: query, account: view.account)) ?? 0
            if total > offset + found {
                output.note(Counted.shownOf(found, total: total, hint: "--limit 0 for all"))
            }
        }
        return found == 0 ? .nothingFound : .ok
    }
}

/// Numbers and nouns as people write them: "1 message", "2 messages", "20,000".
enum Counted {
    static func number(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// `1 conversation`, `3 conversations`; `plural` when adding "s" is wrong.
    static func noun(_ count: Int, _ singular: String, plural: String? = nil) -> String {
        "\(number(count)) \(count == 1 ? singular : plural ?? singular + "s")"
    }

    /// `50 of 20,000 shown — --limit 0 for all`.
    static func shownOf(_ shown: Int, total: Int, hint: String) -> String {
        "\(number(shown)) of \(number(total)) shown — \(hint)"
    }
}
