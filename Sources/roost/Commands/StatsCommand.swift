import Foundation
import RoostArchive

/// `roost stats`: how much is archived, per account and conversation.
struct StatsCommand: Command {
    static let name = "stats"
    static let summary = "message counts per account, conversation and room, first/last message, archive size"
    static let options: [OptionSpec] = []

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let reader = try ArchiveAccess.reader(context)
        let stats: ArchiveStats
        do { stats = try reader.stats() } catch { throw ArchiveFailure(error: error) }
        let output = context.output
        if context.options.json {
            output.jsonLine(["kind": "archive", "messages": .int(stats.totalMessages), "chat_states": .int(stats.chatStates),
                             "presence_events": .int(stats.presenceEvents), "subscription_events": .int(stats.subscriptionEvents),
                             "size_bytes": .int(stats.archiveSizeBytes)])
            for a in stats.accounts {
                output.jsonLine(["kind": "account", "account": .string(a.account), "messages": .int(a.messages),
                                 "conversations": .int(a.conversations),
                                 "first": a.firstTimestamp.map { .string(TimeText.utc($0)) } ?? .null,
                                 "last": a.lastTimestamp.map { .string(TimeText.utc($0)) } ?? .null])
            }
            for c in stats.conversations {
                output.jsonLine(["kind": c.isRoom ? "room" : "conversation", "account": .string(c.account), "conversation": .string(c.conversation),
                                 "messages": .int(c.messages), "incoming": .int(c.incoming), "outgoing": .int(c.outgoing),
                                 "senders": c.isRoom ? .int(c.senders) : .null,
                                 "first": .string(TimeText.utc(c.firstTimestamp)), "last": .string(TimeText.utc(c.lastTimestamp))])
            }
        } else {
            output.line("archive: \(stats.totalMessages) messages, \(stats.chatStates) chat states, \(stats.presenceEvents) presence events, \(stats.subscriptionEvents) subscription events, \(ByteCountFormatter.string(fromByteCount: stats.archiveSizeBytes, countStyle: .file))")
            for a in stats.accounts {
                output.line("\(a.account): \(a.messages) messages in \(a.conversations) conversations"
                    + (a.firstTimestamp.map { ", \(TimeText.local($0))" } ?? "") + (a.lastTimestamp.map { " .. \(TimeText.local($0))" } ?? ""))
                for c in stats.conversations where c.account == a.account {
                    let room = c.isRoom ? " [room, \(c.senders) \(c.senders == 1 ? "occupant" : "occupants") wrote]" : ""
                    output.line("  \(c.conversation)\(room): \(c.messages) (\(c.incoming) in, \(c.outgoing) out), \(TimeText.local(c.firstTimestamp)) .. \(TimeText.local(c.lastTimestamp))")
                }
            }
        }
        return .ok
    }
}
