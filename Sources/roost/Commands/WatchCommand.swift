import Foundation
import RoostAgent
import RoostArchive
import RoostCore
import RoostNotify

/// `roost watch list`: the watches (`[watch NAME]`, `highlight_words`) `roost run` notifies for;
/// `roost watch test QUERY|NAME [--days N]`: what a watch would have notified over the last days.
struct WatchCommand: Command {
    static let name = "watch"
    static let summary = "list the watches ([watch NAME], highlight_words); show what a watch query would have notified"
    static let usage = "[options] list | test QUERY...|NAME [--days N]"
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("list"), Subcommand("test", [.query])])]
    static let takesQuery = true
    static let discussion = """
        A watch is a search query (the language of `roost search`) in a [watch NAME] group of the config: a new \
        message it selects notifies even where the rules would stay silent (a muted room, a group chat message \
        without a mention), once, titled by the watches it matched. highlight_words in an [account] or [room] group \
        is a shortcut: a room message with one of the words notifies like a mention. \
        list prints each watch with its query, sink, priority and quiet_hours, then the highlight words. \
        test QUERY (or the NAME of a configured watch) lists the incoming messages of the last --days N days \
        (default 7) the query selects, oldest first, as `roost search` prints them: what the watch would have \
        notified, the rules and quiet hours aside. Exit status: 0 found (test) or listed, 1 nothing matched, \
        2 invalid query, 78 a config problem. See docs/notify.md.
        """
    static let options: [OptionSpec] = [
        .value("days", placeholder: "N", help: "test: how many days back (default 7)"),
    ]

    enum Action: Sendable {
        case list
        case test(String)
    }

    let action: Action
    let days: Int
    var pagesOutput: Bool { true }

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        switch words.first {
        case "list"?:
            guard words.count == 1 else { throw UsageError("usage: roost watch list", command: parsed.command) }
            action = .list
        case "test"?:
            guard words.count > 1 else { throw UsageError("usage: roost watch test QUERY...|NAME [--days N]", command: parsed.command) }
            action = .test(words.dropFirst().joined(separator: " "))
        case nil:
            throw UsageError("usage: roost watch list | test QUERY...|NAME [--days N]", command: parsed.command)
        case let other?:
            throw UsageError("unknown watch subcommand '\(other)' (list, test)", command: parsed.command)
        }
        days = try parsed.integer("days", in: 1...36_500) ?? 7
        if parsed.value("days") != nil, case .list = action { throw UsageError("--days goes with `roost watch test`", command: parsed.command) }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        guard let notify = NotifyCommand.settings(config, context: context) else { return .config }
        switch action {
        case .list:
            Self.show(notify.watches, accounts: config.accounts, output: context.output, json: context.options.json)
            return notify.watches.isEmpty && !config.accounts.contains(where: Self.highlights) ? .nothingFound : .ok
        case .test(let text):
            let query = notify.watches.first(where: { $0.name == text })?.query ?? text
            return try test(query, context: context)
        }
    }

    private func test(_ query: String, context: CommandContext) throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let output = context.output.buffered()
        defer { output.flush() }
        let since = Timestamp.now() - Int64(days) * 86_400_000
        var found = 0
        do {
            try view.reader.watchHistory(query: query, account: view.account, since: since) { row in
                found += 1
                if context.options.json { output.jsonLine(encoded: view.text.jsonLine(row)) } else { output.line(view.text.searchLine(row, highlight: true)) }
                return true
            }
        } catch {
            throw ArchiveFailure(error: error)
        }
        if !context.options.json {
            context.output.error("\(found) \(found == 1 ? "message" : "messages") of the last \(days) \(days == 1 ? "day" : "days") would have notified")
        }
        return found == 0 ? .nothingFound : .ok
    }

    private static func highlights(_ account: AccountConfig) -> Bool {
        !account.highlightWords.isEmpty || account.rooms.contains { !$0.highlightWords.isEmpty }
    }

    /// Also `roost notify` and `roost config`: each watch with its values, then the highlight words.
    static func show(_ watches: [WatchConfig], accounts: [AccountConfig], output: Output, json: Bool) {
        for watch in watches {
            if json {
                output.jsonLine(["kind": "watch", "watch": .string(watch.name), "query": .string(watch.query), "sink": .string(watch.sink),
                                 "priority": .string(watch.priority.rawValue), "quiet_hours": .string(watch.quietHours.rawValue)])
            } else {
                output.line("watch:        \(watch.name): \(watch.query) (sink \(watch.sink ?? "all"), priority \(watch.priority.rawValue), "
                            + "quiet_hours \(watch.quietHours.rawValue))")
            }
        }
        for account in accounts {
            let places = [(account.jid, account.highlightWords)] + account.rooms.map { ($0.jid, $0.highlightWords) }
            for (place, words) in places where !words.isEmpty {
                if json {
                    output.jsonLine(["kind": "highlight", "account": .string(account.jid), "in": .string(place),
                                     "words": .array(words.map { .string($0) })])
                } else {
                    output.line("highlight:    \(place == account.jid ? "rooms of \(place)" : place): \(words.joined(separator: ", "))")
                }
            }
        }
    }
}
