import Foundation
import RoostArchive
import RoostXMPP

/// `message.send`: one chat message, archived as outgoing. It carries an XEP-0359 origin-id so the copy the
/// server archive hands back later is recognised as the same message.
public struct SendMessageAction: AccountAction {
    public static let command = "message.send"

    public var to: String
    public var body: String

    public init(to: String, body: String) {
        self.to = to
        self.body = body
    }

    public struct Sent: Codable, Sendable, Equatable {
        public var to: String
        public var id: String
        public var timestamp: Int64
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Sent {
        let recipient = try JIDArgument.bare(to)
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ActionFailure(.invalidArgument, "the message is empty")
        }
        let id = StanzaID.make()
        var message = Message(to: recipient, type: .chat, body: body, id: id)
        message.add(StanzaIDs.originIDElement(id))
        message.add(Element("active", namespace: Namespace.chatStates))
        try context.send(message, doing: "sending to \(recipient)")
        let now = ActionArchive.now()
        let from = context.client.boundJID ?? context.account
        var stored = message
        stored.element[attribute: "from"] = from.description
        let record = MessageRecord(account: context.account.description, conversation: recipient.description, direction: .outgoing,
                                   kind: .chat, from: from.description, to: recipient.description,
                                   senderName: context.account.description, body: body, timestamp: now, receivedAt: now,
                                   originId: id, messageId: id, source: .live, rawStanza: XMLSerializer.serialize(stored.element))
        try await context.archive.record([.message(record)])
        return Sent(to: recipient.description, id: id, timestamp: now)
    }
}
