import RoostXMPP

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
    /// The group chat message at this index mentions the user (nick as a word, or a XEP-0372 reference).
    case mention(eventIndex: Int)
    /// Group chats: for the room manager, in stream order.
    case room(RoomNote)
}

/// What a stanza means for the rooms Roost is in.
enum RoomNote: Sendable, Equatable {
    /// Roost's own presence in the room (status 110): joined, as `nick`.
    case joined(room: JID, nick: String, occupantID: String?, statusCodes: Set<Int>)
    /// Roost is out of the room; 303 with `newNick`: only its nick changed.
    case left(room: JID, nick: String, statusCodes: Set<Int>, reason: String?, newNick: String?, destroyed: Bool)
    case joinFailed(room: JID, nick: String, error: StanzaError)
    case subject(room: JID, subject: String?, by: String?)
    /// The room's subject arrived after a join: no more history comes (see `RoomRoute.history`).
    case historyEnded(room: JID)
    /// The user's bookmarks changed on another client (a PEP event from the account itself).
    case bookmarks([Bookmarks.Change])
    case invitation(Invitation, fromContact: Bool)
    /// Another occupant came, went or changed nick; `realJID` where the room shows it (non-anonymous rooms).
    case occupant(room: JID, nick: String, realJID: JID?, available: Bool, newNick: String?)
}
