import Foundation
import RoostArchive

/// `roost log JID`: one conversation as a transcript, oldest first.
struct LogCommand: Command {
    static let name = "log"
    static let summary = "show one conversation as a transcript, with chat states and presence if asked"
    static let usage = "[options] JID"
    static let discussion = """
        Prints every message with JID (a contact's or room's bare address, or room@service/nick for private \
        messages with an occupant), oldest first. --states interleaves chat-state notifications (composing, \
        paused, ...) and --presence the contact's presence changes — for a room, its timeline: who joined, left, \
        changed nick, role or affiliation, was kicked or banned — in time order.
        """
    static let options: [OptionSpec] = [
        .flag("states", help: "include chat states (composing, paused, active, inactive, gone)"),
        .flag("presence", help: "include the contact's presence changes (a room's joins, leaves, nick and role changes)"),
    ]

    let jid: String
    let states: Bool
    let presence: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        jid = try parsed.onePositional(named: "JID").lowercased()
        states = parsed.flag("states")
        presence = parsed.flag("presence")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let reader = try ArchiveAccess.reader(context)
        var count = 0
        let output = context.output
        let json = context.options.json
        let styled = output.standardOutputIsTTY && context.environment["NO_COLOR"] == nil
        do {
            try reader.transcript(account: context.options.account?.lowercased(), conversation: jid, includeStates: states,
                                  includePresence: presence) { event in
                count += 1
                switch event {
                case .message(let row):
                    if json {
                        var o = row.json
                        o["event"] = "message"
                        output.jsonLine(o)
                    } else {
                        output.line(row.humanLine(highlight: false, showConversation: false, styled: styled))
                    }
                case .chatState(let s):
                    if json {
                        output.jsonLine(["event": "chat_state", "account": .string(s.account), "conversation": .string(s.conversation),
                                         "from": .string(s.from), "state": .string(s.state.rawValue), "timestamp": .string(TimeText.utc(s.timestamp))])
                    } else {
                        output.line("\(TimeText.local(s.timestamp, seconds: true)) * \(s.from) is \(s.state.rawValue)")
                    }
                case .presence(let p):
                    if json, let room = p.room {
                        output.jsonLine(["event": "room_presence", "account": .string(p.account), "room": .string(p.contact),
                                         "nick": .string(p.resource), "room_event": .string(room.event.rawValue),
                                         "occupant_id": .string(room.occupantId), "real_jid": .string(room.realJid),
                                         "role": .string(room.role), "affiliation": .string(room.affiliation),
                                         "new_nick": .string(room.newNick), "reason": .string(room.reason),
                                         "timestamp": .string(TimeText.utc(p.timestamp))])
                    } else if json {
                        output.jsonLine(["event": "presence", "account": .string(p.account), "contact": .string(p.contact),
                                         "resource": .string(p.resource), "availability": .string(p.availability.rawValue),
                                         "show": .string(p.show), "status": .string(p.status),
                                         "priority": p.priority.map { .int($0) } ?? .null, "timestamp": .string(TimeText.utc(p.timestamp))])
                    } else if let text = p.roomEventText {
                        output.line("\(TimeText.local(p.timestamp, seconds: true)) * \(text)")
                    } else {
                        let who = p.contact + (p.resource.map { "/\($0)" } ?? "")
                        let what = p.availability == .available ? (p.show ?? "online") : "offline"
                        output.line("\(TimeText.local(p.timestamp, seconds: true)) * \(who) is \(what)\(p.status.map { " (\($0))" } ?? "")")
                    }
                }
                return true
            }
        } catch let error as ArchiveError {
            throw ArchiveFailure(error: error)
        }
        return count == 0 ? .nothingFound : .ok
    }
}
