import RoostCore
import RoostArchive
import RoostXMPP

/// `conversation.read`: tells the contact (or room) and, through carbons, the user's other clients that the user
/// has seen the conversation up to a message (a XEP-0333 `displayed` marker), and marks it read in the archive.
public struct MarkReadAction: AccountAction {
    public static let command = "conversation.read"

    public var conversation: String
    /// The id the marker names: the newest incoming message's `id` (a room's stanza-id in a group chat).
    public var messageID: String
    public var groupchat: Bool

    public init(conversation: String, messageID: String, groupchat: Bool) {
        self.conversation = conversation
        self.messageID = messageID
        self.groupchat = groupchat
    }

    /// The marker for the newest incoming message of `conversation` as the archive holds it; nil when nothing came in.
    public static func newest(account: String, conversation: String, archivePath: String) -> MarkReadAction? {
        guard let newest = (try? ArchiveReader(path: archivePath).unreadConversations(account: account, conversation: conversation))?.first,
              let id = newest.newestIncomingId else { return nil }
        return MarkReadAction(conversation: conversation, messageID: id, groupchat: newest.groupchat)
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        guard let to = JID(parsing: conversation) else { throw ActionFailure(.invalidArgument, "'\(conversation)' is not a JID") }
        let marker = ChatMarkers.displayed(to: to, id: messageID, type: groupchat ? .groupchat : .chat)
        do {
            try context.client.send(marker)
        } catch {
            throw ActionFailure.from(error, doing: "sending a displayed marker to \(conversation)")
        }
        try await context.archive.record([.conversationRead(account: context.account.description, conversation: conversation,
                                                            timestamp: Timestamp.now())])
        guard await context.client.confirmDelivery(timeout: SendMessageAction.confirmationWait) else {
            throw ActionFailure(.connection, "the server did not confirm the displayed marker to \(conversation)")
        }
        return ActionDone("marked \(conversation) read on the user's other clients")
    }
}
