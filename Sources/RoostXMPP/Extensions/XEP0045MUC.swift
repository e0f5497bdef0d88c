public import Foundation

/// XEP-0045 Multi-User Chat: joining and leaving rooms, occupants' presence, mediated invitations.
///
/// A room is a bare JID (`room@service`); an occupant is `room@service/nick`. Everything a room says comes
/// from one of those two addresses, which the user's server stamps and the room service cannot forge for
/// another room — so the layer above accepts room traffic only from a room it joined.
public enum MUC {
    /// What the room sends of its history at join.
    public enum History: Sendable, Equatable {
        /// Nothing (`maxstanzas='0'`): the room's archive (XEP-0313) supplies what was missed.
        case nothing
        /// Everything since this time (rooms without an archive).
        case since(Date)
    }

    /// Status codes of `<status code/>` in occupant presence (XEP-0045 §15.6).
    public enum Status {
        public static let nonAnonymous = 100
        public static let selfPresence = 110
        public static let roomCreated = 201
        public static let nickAssigned = 210
        public static let banned = 301
        public static let nickChanged = 303
        public static let kicked = 307
        public static let affiliationChanged = 321
        public static let membersOnly = 322
        public static let shutdown = 332
        public static let technicalError = 333
    }

    /// disco#info features of a room.
    public static let nonAnonymousFeature = "muc_nonanonymous"
    public static let passwordProtectedFeature = "muc_passwordprotected"
    public static let membersOnlyFeature = "muc_membersonly"

    /// The presence that joins `occupant` (`room@service/nick`); `history` nil takes the room's default.
    public static func joinPresence(occupant: JID, password: String?, history: History?) -> Presence {
        var presence = Presence(to: occupant)
        var x = Element("x", namespace: Namespace.muc)
        switch history {
        case .nothing?:
            x.append(Element("history", namespace: Namespace.muc, attributes: [("maxstanzas", "0")]))
        case .since(let date)?:
            x.append(Element("history", namespace: Namespace.muc, attributes: [("since", XMPPDateTime.format(date))]))
        case nil:
            break
        }
        if let password { x.append(Element("password", namespace: Namespace.muc, text: password)) }
        presence.add(x)
        return presence
    }

    public static func leavePresence(occupant: JID) -> Presence {
        Presence(type: .unavailable, to: occupant)
    }

    /// An occupant's presence as the room broadcast it.
    public struct OccupantPresence: Sendable, Equatable {
        public var room: JID
        public var nick: String
        public var available: Bool
        public var statusCodes: Set<Int>
        public var affiliation: String?
        public var role: String?
        /// The occupant's real JID, when the room shows it (non-anonymous rooms, or to moderators).
        public var realJID: JID?
        /// The occupant's next nick (status 303).
        public var newNick: String?
        /// Why a moderator kicked or banned, or why the room was destroyed.
        public var reason: String?
        /// XEP-0421, when the room provides it.
        public var occupantID: String?
        public var show: String?
        public var status: String?
        /// The room was destroyed (`<destroy/>`).
        public var destroyed: Bool

        public var isSelf: Bool { statusCodes.contains(Status.selfPresence) }
    }

    /// The occupant presence in `presence`, if it is one (`from` = `room@service/nick`, `<x muc#user/>`).
    public static func occupantPresence(in presence: Presence) -> OccupantPresence? {
        guard presence.type == .available || presence.type == .unavailable,
              let from = presence.from, let nick = from.resource,
              let x = presence.element.child("x", namespace: Namespace.mucUser) else { return nil }
        let codes = Set(x.children("status", namespace: Namespace.mucUser).compactMap { $0[attribute: "code"].flatMap { Int($0) } })
        let item = x.child("item", namespace: Namespace.mucUser)
        let destroy = x.child("destroy", namespace: Namespace.mucUser)
        return OccupantPresence(
            room: from.bare, nick: nick, available: presence.type == .available, statusCodes: codes,
            affiliation: item?[attribute: "affiliation"], role: item?[attribute: "role"],
            realJID: JID(parsing: item?[attribute: "jid"]), newNick: item?[attribute: "nick"],
            reason: (item?.child("reason", namespace: Namespace.mucUser) ?? destroy?.child("reason", namespace: Namespace.mucUser))?.text,
            occupantID: OccupantID.id(in: presence.element), show: presence.show?.rawValue, status: presence.status,
            destroyed: destroy != nil)
    }

    /// A refused join (`<presence type='error' from='room@service/nick'/>`): the room, the nick and why.
    public static func joinError(in presence: Presence) -> (room: JID, nick: String, error: StanzaError)? {
        guard presence.type == .error, let from = presence.from, let nick = from.resource,
              let error = StanzaError(stanza: presence.element) else { return nil }
        return (from.bare, nick, error)
    }

    /// A mediated invitation (§7.8.2): the room forwards `<invite from='…'/>` from its bare JID.
    public static func mediatedInvitation(in message: Message) -> Invitation? {
        guard let x = message.element.child("x", namespace: Namespace.mucUser),
              let invite = x.child("invite", namespace: Namespace.mucUser),
              let from = message.from, from.isBare, from.localpart != nil else { return nil }
        return Invitation(room: from, inviter: JID(parsing: invite[attribute: "from"]),
                          reason: invite.child("reason", namespace: Namespace.mucUser)?.text,
                          password: x.child("password", namespace: Namespace.mucUser)?.text, kind: .mediated)
    }

    /// Declines a mediated invitation through the room (§7.8.2.3).
    public static func decline(room: JID, inviter: JID?, reason: String?) -> Message {
        var message = Message(to: room, type: .normal)
        var decline = Element("decline", namespace: Namespace.mucUser)
        if let inviter { decline[attribute: "to"] = inviter.description }
        if let reason { decline.append(Element("reason", namespace: Namespace.mucUser, text: reason)) }
        message.add(Element("x", namespace: Namespace.mucUser, children: [.element(decline)]))
        return message
    }

    /// Whether a message addressed from an occupant is a private message (§7.5): it carries `<x muc#user/>`.
    public static func isPrivateMessage(_ message: Message) -> Bool {
        message.type != .groupchat && message.element.child("x", namespace: Namespace.mucUser) != nil
    }
}

/// An invitation to a room, direct (XEP-0249) or through the room (XEP-0045).
public struct Invitation: Sendable, Equatable {
    public enum Kind: String, Sendable { case direct, mediated }
    public var room: JID
    /// Who invites; a direct invitation's sender, a mediated one's `from`.
    public var inviter: JID?
    public var reason: String?
    public var password: String?
    public var kind: Kind

    public init(room: JID, inviter: JID?, reason: String?, password: String?, kind: Kind) {
        self.room = room
        self.inviter = inviter
        self.reason = reason
        self.password = password
        self.kind = kind
    }
}
