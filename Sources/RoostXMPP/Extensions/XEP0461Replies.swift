/// XEP-0461 Message Replies: `<reply to='author' id='target'/>` names the message this one answers.
public enum Replies {
    public struct Target: Sendable, Equatable {
        /// The target's id: its `id` attribute in a chat, the room's stanza-id in a group chat.
        public var id: String
        /// The quoted message's author, as the replier claims it (full JID; optional in the XEP).
        public var author: String?
    }

    public static func target(in message: Message) -> Target? {
        guard let reply = message.element.child("reply", namespace: Namespace.reply), let id = reply[attribute: "id"], !id.isEmpty else {
            return nil
        }
        return Target(id: id, author: reply[attribute: "to"])
    }
}
