import Foundation
import RoostAgent
import RoostArchive

/// `roost presence JID`: when a contact came and went, from the presence log.
struct PresenceCommand: Command {
    static let name = "presence"
    static let summary = "a contact's presence history and when it was last seen"
    static let usage = "[options] JID"
    static let discussion = """
        Shows the presence changes the agent logged for JID (online, away, dnd, xa, offline, with status \
        texts and resources), newest first, and when the contact was last seen. Reads the archive only.
        Exit status 1 when nothing is logged for JID.
        """
    static let options: [OptionSpec] = [
        .value("limit", short: "n", placeholder: "N", help: "show at most N changes (default 50, 0 for all)"),
    ]

    let jid: String
    let limit: Int

    init(parsed: ParsedArguments) throws(UsageError) {
        jid = try parsed.onePositional(named: "JID").lowercased()
        limit = try parsed.integer("limit", in: 0...1_000_000) ?? 50
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        let accounts = try context.selectedAccounts(in: config)
        let reader = try ArchiveAccess.reader(context)
        let output = context.output
        var found = false
        for account in accounts {
            let history = try reader.presenceHistory(account: account.jid, contact: jid, limit: limit)
            guard !history.isEmpty else { continue }
            found = true
            let latestByResource = Dictionary(grouping: try reader.latestPresence(account: account.jid).filter { $0.contact.lowercased() == jid },
                                              by: { $0.resource ?? "" }).compactMap { $0.value.first }
            let summary = PresenceSummary(latest: latestByResource)
            if context.options.json {
                output.jsonLine(["kind": "summary", "account": .string(account.jid), "contact": .string(jid),
                                 "available": .bool(summary.isOnline), "presence": .string(summary.availability),
                                 "last_seen": summary.lastSeen.map { .string(TimeText.utc($0)) } ?? .null])
                for row in history {
                    output.jsonLine(["kind": "presence", "account": .string(row.account), "contact": .string(row.contact),
                                     "resource": .string(row.resource), "availability": .string(row.availability.rawValue),
                                     "show": .string(row.show), "status": .string(row.status),
                                     "priority": row.priority.map { .int($0) } ?? .null, "timestamp": .string(TimeText.utc(row.timestamp))])
                }
            } else {
                let seen = summary.isOnline ? "\(summary.availability) now (as last logged)" : summary.lastSeen.map { "last seen \(TimeText.local($0))" } ?? "never seen"
                output.line("\(jid) (\(account.jid)): \(seen)")
                for row in history {
                    let state = row.availability == .available ? (row.show ?? "online") : "offline"
                    output.line("  \(TimeText.local(row.timestamp, seconds: true)) \(state)" + (row.resource.map { " [\($0)]" } ?? "")
                        + (row.status.map { ": \($0)" } ?? ""))
                }
            }
        }
        if !found {
            if !context.options.json { output.note("no presence logged for \(jid)") }
            return .nothingFound
        }
        return .ok
    }
}
