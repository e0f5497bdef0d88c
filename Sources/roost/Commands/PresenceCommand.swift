import Foundation
import RoostAgent
import RoostArchive

/// `roost presence WHO`: when a contact came and went, from the presence log.
struct PresenceCommand: Command {
    static let name = "presence"
    static let summary = "a contact's presence history and when it was last seen"
    static let usage = "[options] WHO"
    static let discussion = """
        Shows the presence changes the agent logged for WHO (a JID, the start of one, or a roster name, \
        nickname or full name; a full JID such as bob@example.org/phone or room@service/nick keeps to that \
        resource): online, away, dnd, xa, offline, with status texts and resources, newest first, \
        and when the contact was last seen available (never, for a contact that does not share its presence). \
        Reads the archive only. Exit status 1 when nothing is logged for WHO.
        """
    static let options: [OptionSpec] = [
        .value("limit", short: "n", placeholder: "N", help: "show at most N changes (default 50, 0 for all)"),
    ]
    static let arguments: [ArgumentKind] = [.contact]

    let who: String
    let limit: Int

    init(parsed: ParsedArguments) throws(UsageError) {
        who = try parsed.onePositional(named: "WHO")
        limit = try parsed.integer("limit", in: 0...1_000_000) ?? 50
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        // WHO as every command reads it; a full JID (room@service/nick, bob@example.org/phone) keeps to that resource.
        let resolved = try ArchiveView.resolve(who, reader: view.reader, account: view.account, kinds: [.contact])[0].jid
        let slash = resolved.firstIndex(of: "/")
        let jid = String(resolved[..<(slash ?? resolved.endIndex)]).lowercased()
        let resource = slash.map { String(resolved[resolved.index(after: $0)...]) }
        let accounts = view.account.map { [$0] } ?? (view.config.accounts.map(\.jid) + ((try? view.reader.accounts()) ?? []))
        let output = context.output
        var found = false
        var done = Set<String>()
        for account in accounts where done.insert(account.lowercased()).inserted {
            var history = try view.reader.presenceHistory(account: account, contact: jid, limit: resource == nil ? limit : 0)
            if let resource {
                history = history.filter { $0.resource == resource }
                if limit > 0 { history = Array(history.prefix(limit)) }
            }
            guard !history.isEmpty else { continue }
            found = true
            let latestByResource = Dictionary(grouping: try view.reader.latestPresence(account: account).filter {
                $0.contact.lowercased() == jid && (resource == nil || $0.resource == resource)
            },
                                              by: { $0.resource ?? "" }).compactMap { $0.value.first }
            let summary = PresenceSummary(latest: latestByResource, lastSeen: try view.reader.lastSeen(account: account)[jid])
            let name = view.names.displayName(of: jid, account: account)
            if context.options.json {
                output.jsonLine(["kind": "summary", "account": .string(account), "contact": .string(jid), "name": .string(name),
                                 "available": .bool(summary.isOnline), "presence": .string(summary.availability),
                                 "last_seen": summary.lastSeen.map { .string(TimeText.utc($0)) } ?? .null])
                for row in history {
                    output.jsonLine(["kind": "presence", "account": .string(row.account), "contact": .string(row.contact),
                                     "resource": .string(row.resource), "availability": .string(row.availability.rawValue),
                                     "show": .string(row.show), "status": .string(row.status),
                                     "priority": row.priority.map { .int($0) } ?? .null, "timestamp": .string(TimeText.utc(row.timestamp))])
                }
            } else {
                let seen = summary.isOnline ? "\(summary.availability) now (as last logged)"
                    : summary.lastSeen.map { "last seen \(TimeText.local($0))" } ?? "never seen online"
                let label = name == jid ? jid : "\(name) (\(jid))"
                output.line("\(label)" + (view.text.showAccount ? " [\(account)]" : "") + ": \(seen)")
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
