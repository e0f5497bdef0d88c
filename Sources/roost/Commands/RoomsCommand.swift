import Foundation
import RoostAgent
import RoostArchive

/// `roost rooms`: the group chats of the account — which Roost is in, bookmarks, occupants, activity — and
/// joining, leaving, invitations.
struct RoomsCommand: Command {
    static let name = "rooms"
    static let summary = "list group chats (joined, bookmarked, occupants, activity); join, leave, invitations"
    static let usage = "[options] [join ROOM [--nick N] [--password-command CMD] [--bookmark] | leave ROOM | invites [--all] | decline ROOM]"
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("join", [.text]), Subcommand("leave", [.contact]),
                                                          Subcommand("invites"), Subcommand("decline", [.text])])]
    static let discussion = """
        Without a subcommand, lists every room the account knows of: whether the agent is in it now (when an \
        agent runs), its bookmark (and autojoin), Roost's nick there, how many occupants it has, how many \
        messages are archived and the newest one, and why Roost is not in it when it should be.
        join ROOM joins now and at every start until `roost rooms leave`; --nick chooses the nick (else the \
        bookmark's, the account's `nick`, or the JID's local part), --password-command runs a command for the \
        room's password at each join (only the command is remembered, never the password), --bookmark also \
        publishes a bookmark with autojoin so the account's other clients join too. leave ROOM (its JID, the \
        start of one, or its name) leaves and clears the bookmark's autojoin. join, leave and decline go through the running agent, which is the one \
        in the rooms.
        invites lists pending invitations (--all: answered ones too); join accepts one, decline ROOM declines it.
        Exit status: 0, 1 when there is nothing to list, 2 on a usage error, 3 when the agent is not running or \
        the room refused.
        """
    static let options: [OptionSpec] = [
        .value("nick", placeholder: "NICK", help: "join: the nick to use in the room"),
        .value("password-command", placeholder: "CMD", help: "join: a command printing the room's password on its first line"),
        .flag("bookmark", help: "join: also bookmark the room with autojoin (XEP-0402)"),
        .flag("all", help: "invites: also invitations already accepted or declined"),
    ]

    enum Action {
        case list
        case join(RoomJoinAction)
        case leave(RoomLeaveAction)
        case invites(all: Bool)
        case decline(InvitationDeclineAction)
    }

    let action: Action

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        func room() throws(UsageError) -> String {
            guard words.count == 2 else { throw UsageError("usage: roost rooms \(words[0]) ROOM", command: parsed.command) }
            return words[1]
        }
        switch words.first {
        case nil:
            action = .list
        case "join":
            action = .join(RoomJoinAction(room: try room(), nick: parsed.value("nick"), passwordCommand: parsed.value("password-command"),
                                          bookmark: parsed.flag("bookmark")))
        case "leave":
            action = .leave(RoomLeaveAction(room: try room()))
        case "invites":
            guard words.count == 1 else { throw UsageError("usage: roost rooms invites [--all]", command: parsed.command) }
            action = .invites(all: parsed.flag("all"))
        case "decline":
            action = .decline(InvitationDeclineAction(room: try room()))
        case let other?:
            throw UsageError("unknown rooms subcommand '\(other)' (join, leave, invites, decline)", command: parsed.command)
        }
        let joinOnly = ["nick", "password-command", "bookmark"].filter { parsed.flag($0) || parsed.value($0) != nil }
        if case .join = action {} else if let first = joinOnly.first {
            throw UsageError("--\(first) only goes with `roost rooms join`", command: parsed.command)
        }
        if case .invites = action {} else if parsed.flag("all") {
            throw UsageError("--all only goes with `roost rooms invites`", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let link = try AgentLink(context: context, command: "roost rooms")
        let output = context.output
        let json = context.options.json
        switch action {
        case .list:
            return try list(link: link, context: context)
        case .invites(let all):
            guard FileManager.default.fileExists(atPath: link.config.archivePath) else {
                if !json { output.note("no invitations (no archive yet)") }
                return .nothingFound
            }
            let invitations = try ArchiveAccess.reader(context).invitations(account: link.account.jid, all: all)
            for invitation in invitations {
                if json {
                    output.jsonLine(["room": .string(invitation.room), "inviter": .string(invitation.inviter), "kind": .string(invitation.kind.rawValue),
                                     "reason": .string(invitation.reason), "from_contact": .bool(invitation.fromContact),
                                     "password": .bool(invitation.hasPassword), "status": .string(invitation.status.rawValue),
                                     "received": .string(TimeText.utc(invitation.createdAt))])
                } else {
                    let who = invitation.inviter.map { " from \($0)" } ?? ""
                    let contact = invitation.fromContact ? "" : (invitation.kind == .direct ? " (not a contact)" : " (through the room)")
                    let status = invitation.status == .pending ? "" : " [\(invitation.status.rawValue)]"
                    output.line("\(TimeText.local(invitation.createdAt)) \(invitation.room)\(who)\(contact)\(status)"
                        + (invitation.reason.map { ": \($0)" } ?? ""))
                }
            }
            if invitations.isEmpty {
                if !json { output.note("no \(all ? "" : "pending ")invitations for \(link.account.jid)") }
                return .nothingFound
            }
            if !json, invitations.contains(where: { $0.status == .pending }) {
                output.note("answer with: roost rooms join ROOM   or: roost rooms decline ROOM")
            }
        case .join(let join):
            let (joined, _) = try await link.perform(join)
            if json {
                output.jsonLine(["ok": true, "room": .string(joined.room), "nick": .string(joined.nick), "bookmarked": .bool(join.bookmark == true)])
            } else {
                output.line("joined \(joined.room) as \(joined.nick)" + (join.bookmark == true ? " (bookmarked, autojoin)" : ""))
            }
        case .leave(var leave):
            leave.room = try link.contact(leave.room, kinds: [.room])
            let (done, _) = try await link.perform(leave)
            if json { output.jsonLine(["ok": true, "room": .string(leave.room.lowercased())]) } else { output.line(done.message) }
        case .decline(var decline):
            decline.room = try link.contact(decline.room, kinds: [.room])
            let (done, _) = try await link.perform(decline)
            if json { output.jsonLine(["ok": true, "room": .string(decline.room.lowercased()), "declined": true]) } else { output.line(done.message) }
        }
        return .ok
    }

    /// The archive's rooms, with the agent's live state when one runs.
    private func list(link: AgentLink, context: CommandContext) throws -> ExitCode {
        let output = context.output
        let json = context.options.json
        var live: [String: RoomsListAction.Room]?
        if let agent = ControlClient.connect(path: link.socketPath), let rooms = try? agent.perform(RoomsListAction(), account: link.account.jid) {
            live = Dictionary(rooms.map { ($0.room.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        }
        let stored = FileManager.default.fileExists(atPath: link.config.archivePath)
            ? try ArchiveAccess.reader(context).rooms(account: link.account.jid) : []
        var names = stored.map { $0.jid.lowercased() }
        for room in live?.keys.sorted() ?? [] where !names.contains(room) { names.append(room) }
        if names.isEmpty {
            if !json { output.note("no rooms for \(link.account.jid): bookmark one on another client, add `rooms =` to the config, or `roost rooms join ROOM`") }
            return .nothingFound
        }
        if live == nil, !json { output.note("(no agent running: joined state unknown)") }
        for name in names.sorted() {
            let row = stored.first { $0.jid.lowercased() == name }
            let now = live?[name]
            let state = now?.state ?? (live == nil ? "unknown" : "out")
            let joined = state == "joined"
            let occupants = joined ? (row?.occupants ?? 0) : 0
            let error = now?.lastError ?? row?.lastError
            if json {
                output.jsonLine(["room": .string(name), "name": .string(now?.name ?? row?.name), "state": .string(state),
                                 "joined": live == nil ? .null : .bool(joined), "nick": .string(now?.nick ?? row?.nick),
                                 "bookmarked": .bool(now?.bookmarked ?? row?.bookmarked ?? false),
                                 "autojoin": .bool(now?.autojoin ?? row?.autojoin ?? false),
                                 "joined_by_user": .bool(row?.joinedByUser ?? false),
                                 "occupants": joined ? .int(Int64(occupants)) : .null,
                                 "messages": .int(Int64(row?.messages ?? 0)),
                                 "last_activity": row?.lastActivity.map { .string(TimeText.utc($0)) } ?? .null,
                                 "archive": (now?.mam ?? row?.mam).map { .bool($0) } ?? .null,
                                 "last_archive_read": now?.archiveRead.map { .string(TimeText.utc($0)) } ?? .null,
                                 "subject": .string(row?.subject), "error": .string(error)])
            } else {
                var flags: [String] = []
                if now?.bookmarked ?? row?.bookmarked ?? false { flags.append((now?.autojoin ?? row?.autojoin ?? false) ? "bookmark, autojoin" : "bookmark") }
                if row?.joinedByUser == true { flags.append("joined by you") }
                let nick = (now?.nick ?? row?.nick).map { " as \($0)" } ?? ""
                let who = joined ? ", \(Counted.noun(occupants, "occupant"))" : ""
                let activity = row?.lastActivity.map { ", last message \(TimeText.local($0))" } ?? ""
                let count = row.map { ", \(Counted.noun($0.messages, "message"))" } ?? ""
                output.line("\(name)  \(state)\(nick)\(who)\(count)\(activity)" + (flags.isEmpty ? "" : " [\(flags.joined(separator: "; "))]")
                    + (error.map { joined ? "" : "\n    \($0)" } ?? ""))
            }
        }
        return .ok
    }
}
