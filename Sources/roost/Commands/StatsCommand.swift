import Foundation
import RoostArchive

/// `roost stats [QUERY] [--by month]`: how much is archived, per account and conversation, and over time.
struct StatsCommand: Command {
    static let name = "stats"
    static let summary = "message counts per account, conversation and room (or for a query, by day/week/month/year), archive size"
    static let usage = "[options] [QUERY...]"
    static let discussion = """
        Without a query: the archive's totals (messages, chat states, presence changes, friend requests and \
        answers, size) and, per account, every conversation and room with its messages in and out and its \
        first and last message; with a [retention] config, what its next run (at the agent's start, then daily) \
        removes, rule by rule. With a query (the language of `roost search`, e.g. with:bob or after:2025-01), \
        the matching messages counted per conversation; --by day, week, month or year splits each conversation \
        into time buckets (local time). --account (or default_account) keeps to one account. --json prints one \
        object per line with a "kind": archive, account, conversation, room, bucket, or retention.
        """
    static let options: [OptionSpec] = [
        .value("by", placeholder: "UNIT", help: "count per day, week, month or year")
            .completing(.choices(StatsBucket.allCases.map(\.rawValue))),
    ]
    static let takesQuery = true
    static let arguments: [ArgumentKind] = [.query]

    let query: String
    let bucket: StatsBucket?
    var pagesOutput: Bool { true }

    init(parsed: ParsedArguments) throws(UsageError) {
        query = parsed.positionals.joined(separator: " ")
        bucket = try parsed.choice("by", of: StatsBucket.self)
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        if query.isEmpty && bucket == nil { return try overview(view, context: context) }
        let counts: [ConversationCount]
        do { counts = try view.reader.counts(query: query, account: view.account, by: bucket) } catch { throw ArchiveFailure(error: error) }
        let output = context.output
        // Rows come per conversation, buckets in order: a conversation's total first, then its buckets.
        var conversations: [(key: String, rows: [ConversationCount])] = []
        for row in counts {
            let key = row.account.lowercased() + " " + row.conversation.lowercased()
            if conversations.last?.key == key { conversations[conversations.count - 1].rows.append(row) } else { conversations.append((key, [row])) }
        }
        for (_, rows) in conversations {
            let first = rows[0]
            let total = rows.reduce(0) { $0 + $1.messages }
            let incoming = rows.reduce(0) { $0 + $1.incoming }
            let outgoing = rows.reduce(0) { $0 + $1.outgoing }
            let earliest = rows.map(\.firstTimestamp).min() ?? first.firstTimestamp
            let latest = rows.map(\.lastTimestamp).max() ?? first.lastTimestamp
            let name = view.names.conversationName(of: first.conversation, account: first.account)
            if context.options.json {
                output.jsonLine(["kind": "conversation", "account": .string(first.account), "conversation": .string(first.conversation),
                                 "name": .string(name), "messages": .int(total), "incoming": .int(incoming), "outgoing": .int(outgoing),
                                 "first": .string(TimeText.utc(earliest)), "last": .string(TimeText.utc(latest))])
                if bucket != nil {
                    for row in rows {
                        output.jsonLine(["kind": "bucket", "account": .string(row.account), "conversation": .string(row.conversation),
                                         "bucket": .string(row.bucket), "by": .string(bucket?.rawValue), "messages": .int(row.messages),
                                         "incoming": .int(row.incoming), "outgoing": .int(row.outgoing)])
                    }
                }
            } else {
                let label = name == first.conversation ? name : "\(name) (\(first.conversation))"
                let account = view.text.showAccount ? " [\(first.account)]" : ""
                output.line("\(label)\(account): \(Counted.noun(total, "message")) (\(Counted.number(incoming)) in, "
                            + "\(Counted.number(outgoing)) out), \(TimeText.local(earliest)) .. \(TimeText.local(latest))")
                if bucket != nil {
                    let width = rows.map { Counted.number($0.messages).count }.max() ?? 1
                    for row in rows {
                        let number = Counted.number(row.messages)
                        output.line("  \(row.bucket ?? "-")  \(String(repeating: " ", count: width - number.count))\(number)  "
                                    + "(\(Counted.number(row.incoming)) in, \(Counted.number(row.outgoing)) out)")
                    }
                }
            }
        }
        return counts.isEmpty ? .nothingFound : .ok
    }

    private func overview(_ view: ArchiveView, context: CommandContext) throws -> ExitCode {
        let stats: ArchiveStats
        do { stats = try view.reader.stats(account: view.account) } catch { throw ArchiveFailure(error: error) }
        let output = context.output
        if context.options.json {
            output.jsonLine(["kind": "archive", "messages": .int(stats.totalMessages), "chat_states": .int(stats.chatStates),
                             "presence_events": .int(stats.presenceEvents), "subscription_events": .int(stats.subscriptionEvents),
                             "size_bytes": .int(stats.archiveSizeBytes), "account": .string(view.account)])
            for a in stats.accounts {
                output.jsonLine(["kind": "account", "account": .string(a.account), "messages": .int(a.messages),
                                 "conversations": .int(a.conversations),
                                 "first": a.firstTimestamp.map { .string(TimeText.utc($0)) } ?? .null,
                                 "last": a.lastTimestamp.map { .string(TimeText.utc($0)) } ?? .null])
            }
            for c in stats.conversations {
                output.jsonLine(["kind": c.isRoom ? "room" : "conversation", "account": .string(c.account), "conversation": .string(c.conversation),
                                 "name": .string(view.names.conversationName(of: c.conversation, account: c.account)),
                                 "messages": .int(c.messages), "incoming": .int(c.incoming), "outgoing": .int(c.outgoing),
                                 "senders": c.isRoom ? .int(c.senders) : .null,
                                 "first": .string(TimeText.utc(c.firstTimestamp)), "last": .string(TimeText.utc(c.lastTimestamp))])
            }
        } else {
            output.line("archive: \(Counted.noun(stats.totalMessages, "message")), \(Counted.noun(stats.chatStates, "chat state")), "
                + "\(Counted.noun(stats.presenceEvents, "presence change")), \(Counted.noun(stats.subscriptionEvents, "friend request or answer", plural: "friend requests and answers")), "
                + ByteCountFormatter.string(fromByteCount: stats.archiveSizeBytes, countStyle: .file)
                + (view.account.map { " (account \($0))" } ?? ""))
            for a in stats.accounts {
                output.line("\(a.account): \(Counted.noun(a.messages, "message")) in \(Counted.noun(a.conversations, "conversation"))"
                    + (a.firstTimestamp.map { ", \(TimeText.local($0))" } ?? "") + (a.lastTimestamp.map { " .. \(TimeText.local($0))" } ?? ""))
                for c in stats.conversations where c.account == a.account {
                    let name = view.names.conversationName(of: c.conversation, account: c.account)
                    let label = name == c.conversation ? name : "\(name) (\(c.conversation))"
                    let room = c.isRoom ? " [room, \(Counted.noun(c.senders, "occupant")) wrote]" : ""
                    output.line("  \(label)\(room): \(Counted.number(c.messages)) (\(Counted.number(c.incoming)) in, \(Counted.number(c.outgoing)) out), "
                                + "\(TimeText.local(c.firstTimestamp)) .. \(TimeText.local(c.lastTimestamp))")
                }
            }
        }
        try retention(view, context: context)
        return .ok
    }

    /// What `[retention]` removes at the agent's next run (at its start, then daily), rule by rule.
    private func retention(_ view: ArchiveView, context: CommandContext) throws {
        for rule in view.config.retention.rules {
            let due: (ids: [Int64], conversations: Int)
            do { due = try rule.selection(view.reader) } catch { throw ArchiveFailure(error: error) }
            if context.options.json {
                context.output.jsonLine(["kind": "retention", "rule": .string(rule.text), "messages": .int(due.ids.count),
                                         "conversations": .int(due.conversations), "before": .string(TimeText.utc(rule.cutoff()))])
            } else {
                context.output.line("retention (\(rule.text)): next run removes \(Counted.noun(due.ids.count, "message")) in "
                                    + "\(Counted.noun(due.conversations, "conversation")), older than \(TimeText.local(rule.cutoff()))")
            }
        }
    }
}
