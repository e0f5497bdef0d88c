import RoostArchive

/// `roost count QUERY...`: how many messages match, without listing them (like `notmuch count`).
struct CountCommand: Command {
    static let name = "count"
    static let summary = "count the messages a query matches (the query language of search)"
    static let usage = "[options] [QUERY...]"
    static let discussion = """
        Prints the number of messages matching QUERY (no query: every message), with the query language of \
        `roost search`; --json prints {"count": N, "query": "..."}. Exit status: 0 (also for a count of 0), \
        1 when a name in the query matches no contact, 2 invalid query.
        """
    static let options: [OptionSpec] = []
    static let takesQuery = true
    static let arguments: [ArgumentKind] = [.query]

    let query: String

    init(parsed: ParsedArguments) throws(UsageError) {
        query = parsed.positionals.joined(separator: " ")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let count: Int
        do { count = try view.reader.count(query: query, account: view.account) } catch { throw ArchiveFailure(error: error) }
        if context.options.json {
            context.output.jsonLine(["count": .int(count), "query": .string(query), "account": .string(view.account)])
        } else {
            context.output.line("\(count)")
        }
        return .ok
    }
}
