/// Something a routed stanza means for notifications, told after its events are committed.
enum RoutingNote: Sendable, Equatable {
    /// The message event at this index of the outcome's events (notified only if it was newly inserted).
    case incomingMessage(eventIndex: Int)
    case userWrote(conversation: String, at: Int64)
    case conversationRead(conversation: String)
    case subscriptionRequest(from: String, text: String?)
    case ownPresence(resource: String, available: Bool, show: String?)
    /// A contact's presence announced its vCard photo hash (XEP-0153; nil = no photo).
    case avatarHash(contact: String, hash: String?)
    /// A contact published avatar metadata over PEP (XEP-0084).
    case pepAvatar(contact: String, id: String?, mimeType: String?)
}
