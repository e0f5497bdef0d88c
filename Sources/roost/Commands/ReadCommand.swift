import RoostCore
import Foundation
import RoostAgent
import RoostArchive

/// `roost read WHO|--all`: marks conversations read in the archive, and with --send on the user's other clients.
struct ReadCommand: Command {
    static let name = "read"
    static let summary = "mark a conversation (or --all) read; --send clears it on your other clients too"
    static let usage = "[options] WHO | --all"
    static let discussion = """
        Marks everything archived so far in WHO's conversation read: a contact or a room by its JID, the start \
        of one, a roster name, nickname or full name, a room's name (one that fits several is an error listing \
        them), or room@service/nick — in every account holding it, unless --account chooses one — so `roost \
        status` and `is:unread` no longer count it. With --all, every conversation with unread \
        messages. With --send, also sends a displayed marker (XEP-0333) for the newest incoming message, through \
        the running agent (or a one-shot login): the contact sees that you read it, and your other clients \
        (which get a carbon copy) clear the conversation too. Reading a conversation on another client does the \
        same for Roost: its displayed marker arrives as a carbon and the unread count drops.
        Exit status: 0 when something was marked, 1 when there was nothing to mark (or WHO matches nobody), \
        2 when WHO is ambiguous.
        """
    static let options: [OptionSpec] = [
        .flag("all", help: "every conversation with unread messages"),
        .flag("send", help: "also send a displayed marker, so the contact and your other clients see it read"),
    ]

    let jid: String?
    let all: Bool
    let send: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        all = parsed.flag("all")
        send = parsed.flag("send")
        if all {
            try parsed.requireNoPositionals()
            jid = nil
        } else {
            jid = try parsed.onePositional(named: "WHO")
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let reader = try ArchiveAccess.reader(context)
        let account = context.options.account?.lowercased()
        // WHO as every command reads it (names, prefixes, rooms by name); every account holding it unless --account.
        let conversation = try jid.map { try ArchiveView.resolve($0, reader: reader, account: account)[0].jid }
        let conversations: [ArchiveReader.UnreadConversation]
        do {
            conversations = try reader.unreadConversations(account: account, conversation: conversation)
        } catch {
            throw ArchiveFailure(error: error)
        }
        guard !conversations.isEmpty else {
            context.output.note(conversation.map { "nothing archived with \($0)" } ?? "nothing unread")
            return .nothingFound
        }
        let config = try context.loadConfig()
        let now = Timestamp.now()
        do {
            let writer = try ArchiveWriter(path: config.archivePath)
            _ = try writer.commitBlocking(conversations.map { .conversationRead(account: $0.account, conversation: $0.conversation, timestamp: now) })
        } catch {
            throw ArchiveFailure(error: error)
        }
        for conversation in conversations {
            var via: String?
            if send, let id = conversation.newestIncomingId {
                let link = try AgentLink(context: context, command: "roost read")
                let action = MarkReadAction(conversation: conversation.conversation, messageID: id, groupchat: conversation.groupchat)
                via = try await link.perform(action).1.rawValue
            }
            if context.options.json {
                context.output.jsonLine(["ok": true, "account": .string(conversation.account), "conversation": .string(conversation.conversation),
                                         "was_unread": .int(conversation.unread), "marker_sent": .bool(via != nil), "via": .string(via)])
            } else {
                context.output.line("\(conversation.conversation): \(conversation.unread) marked read" + (via.map { ", displayed marker sent (\($0))" } ?? ""))
            }
        }
        return .ok
    }
}
