import Foundation
import RoostAgent
import RoostArchive

/// `roost roster`: the contact list with subscription state and presence; add, remove, rename, regroup.
struct RosterCommand: Command {
    static let name = "roster"
    static let summary = "list contacts (name, groups, subscription, presence, last seen); add, remove, rename, group"
    static let usage = "[options] [add JID | remove WHO | rename WHO NAME | group WHO [GROUP...]]"
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("add", [.text]), Subcommand("remove", [.contact]),
                                                          Subcommand("rename", [.contact, .text]), Subcommand("group", [.contact, .text])])]
    static let discussion = """
        Without a subcommand, lists the roster as the server has it (as last archived with --cached, and when \
        the agent is not online or the server cannot be reached: a note says so, and --json adds \
        "from_archive": true), with each contact's subscription \
        (none, to, from, both; "pending" while your request is unanswered) and, while an agent runs, its \
        presence now; "last seen" is the last time the presence log saw it available (never for a contact \
        that does not share its presence).
        add JID asks JID for a subscription and puts it on the roster (--name, --group, repeatable); JID may \
        see your presence too: the server pre-approves it where it can (RFC 6121 pre-approval), else the agent \
        answers JID's own request when it comes, so the friendship ends as "both". remove WHO takes a contact \
        off (cancelling subscriptions both ways). rename WHO NAME sets the name ("" removes it). group WHO \
        GROUP... sets the groups (none: no group). WHO is a JID, or a name or the start of a JID of the roster.
        These commands go through the running agent; when none runs, roost logs in once itself with the same \
        config (a separate resource at the configured priority, no presence broadcast), acts and logs out. \
        Everything done is archived.
        """
    static let options: [OptionSpec] = [
        .value("name", placeholder: "NAME", help: "add: the contact's name on the roster"),
        .values("group", placeholder: "GROUP", help: "add: a group for the contact (repeatable)"),
        .value("message", placeholder: "TEXT", help: "add: text sent with the subscription request"),
        .flag("cached", help: "list: read the roster from the archive, without contacting the server"),
    ]

    enum Action {
        case list(cached: Bool)
        case add(RosterAddAction)
        case remove(String)
        case update(RosterUpdateAction)
    }

    let action: Action

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        let command = parsed.command
        func jid() throws(UsageError) -> String {
            guard words.count >= 2 else { throw UsageError("`roster \(words[0])` needs a JID", command: command) }
            return words[1]
        }
        switch words.first {
        case nil:
            action = .list(cached: parsed.flag("cached"))
        case "add":
            guard words.count == 2 else { throw UsageError("usage: roost roster add JID [--name NAME] [--group GROUP]...", command: command) }
            action = .add(RosterAddAction(jid: words[1], name: parsed.value("name"), groups: parsed.values("group"), message: parsed.value("message")))
        case "remove":
            guard words.count == 2 else { throw UsageError("usage: roost roster remove JID", command: command) }
            action = .remove(words[1])
        case "rename":
            guard words.count == 3 else { throw UsageError("usage: roost roster rename JID NAME", command: command) }
            action = .update(RosterUpdateAction(jid: try jid(), name: words[2]))
        case "group":
            action = .update(RosterUpdateAction(jid: try jid(), groups: Array(words.dropFirst(2))))
        case let other?:
            throw UsageError("unknown roster subcommand '\(other)' (add, remove, rename, group)", command: command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let listing = if case .list(cached: true) = action { true } else { false }
        let link = try AgentLink(context: context, command: "roost roster", reading: listing)
        let output = context.output
        switch action {
        case .list(let cached):
            return try await list(link, cached: cached)
        case .add(let add):
            let (entry, route) = try await link.perform(add)
            report(entry, verb: "added", route: route, context: context)
        case .update(var update):
            update.jid = try link.contact(update.jid)
            let (entry, route) = try await link.perform(update)
            report(entry, verb: "updated", route: route, context: context)
        case .remove(let typed):
            let jid = try link.contact(typed)
            let (done, route) = try await link.perform(RosterRemoveAction(jid: jid))
            if context.options.json {
                output.jsonLine(["ok": true, "removed": .string(jid.lowercased()), "via": .string(route.rawValue)])
            } else {
                output.line(done.message)
            }
        }
        return .ok
    }

    private func report(_ entry: RosterEntry, verb: String, route: AgentLink.Route, context: CommandContext) {
        if context.options.json {
            var object = Self.json(entry)
            object["via"] = .string(route.rawValue)
            context.output.jsonLine(object)
        } else {
            context.output.line("\(verb) \(entry.jid)\(entry.name.map { " (\($0))" } ?? ""): subscription \(Self.subscriptionText(entry))"
                + (entry.groups.isEmpty ? "" : ", groups \(entry.groups.joined(separator: ", "))"))
        }
    }

    private func list(_ link: AgentLink, cached: Bool) async throws -> ExitCode {
        var entries: [RosterEntry]
        var route: AgentLink.Route?
        var archived = cached
        let account = link.account.jid
        func fromArchive() throws -> [RosterEntry] {
            try ArchiveAccess.reader(link.context).contacts(account: account).map { row in
                RosterEntry(jid: row.jid, name: row.name, groups: row.groups, subscription: row.subscription ?? "none",
                            pending: row.ask == "subscribe")
            }
        }
        if cached {
            entries = try fromArchive()
        } else {
            do {
                let (snapshot, how) = try await link.perform(RosterFetchAction())
                entries = snapshot.items
                route = how
            } catch let failure as ActionFailure where failure.kind == .connection {
                // The agent is reconnecting (or the server cannot be reached): the roster as last archived, said so.
                do { entries = try fromArchive() } catch { throw failure }
                link.context.output.note("\(failure.message): the roster as last archived")
                archived = true
            }
        }
        let reader = FileManager.default.fileExists(atPath: link.config.archivePath) ? try? ArchiveReader(path: link.config.archivePath) : nil
        let latest = Dictionary(grouping: (try? reader?.latestPresence(account: account)) ?? [], by: { $0.contact.lowercased() })
        let lastSeen = (try? reader?.lastSeen(account: account)) ?? [:]
        let contacts = Dictionary(((try? reader?.contacts(account: account, includeRemoved: true)) ?? []).map { ($0.jid.lowercased(), $0) },
                                  uniquingKeysWith: { a, _ in a })
        // Presence "now" is only known while an agent is online and logging it.
        let presenceKnown = route == .agent
        let output = link.context.output
        for entry in entries {
            let summary = PresenceSummary(latest: latest[entry.jid.lowercased()] ?? [], lastSeen: lastSeen[entry.jid.lowercased()])
            let vcard = contacts[entry.jid.lowercased()]
            if link.context.options.json {
                var object = Self.json(entry)
                object["presence"] = presenceKnown ? .string(summary.availability) : .null
                object["status"] = presenceKnown ? .string(summary.statusText) : .null
                object["last_seen"] = summary.isOnline && presenceKnown ? "now" : summary.lastSeen.map { .string(TimeText.utc($0)) } ?? .null
                object["nickname"] = .string(vcard?.nickname)
                object["fullname"] = .string(vcard?.fullName)
                object["from_archive"] = .bool(archived)
                output.jsonLine(object)
            } else {
                var line = entry.jid
                if let name = entry.name { line += " (\(name))" }
                line += "  [\(Self.subscriptionText(entry))]"
                if !entry.groups.isEmpty { line += "  groups: \(entry.groups.joined(separator: ", "))" }
                if presenceKnown, summary.isOnline {
                    line += "  \(summary.availability)" + (summary.statusText.map { ": \($0)" } ?? "")
                } else if let seen = summary.lastSeen {
                    line += "  last seen \(TimeText.local(seen))"
                }
                output.line(line)
            }
        }
        if entries.isEmpty, !link.context.options.json { output.note("the roster of \(account) is empty") }
        return .ok
    }

    static func subscriptionText(_ entry: RosterEntry) -> String {
        entry.subscription + (entry.pending ? ", pending" : "")
    }

    static func json(_ entry: RosterEntry) -> JSONObject {
        ["jid": .string(entry.jid), "name": .string(entry.name), "groups": .array(entry.groups.map { .string($0) }),
         "subscription": .string(entry.subscription), "pending": .bool(entry.pending)]
    }
}
