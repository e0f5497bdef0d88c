/// An invitation to a room (XEP-0249 direct or XEP-0045 mediated). A repeated invitation to the same room by
/// the same inviter while the first is still pending updates it instead of adding another.
public struct InvitationRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable { case direct, mediated }

    public var account: String
    /// The room's bare JID.
    public var room: String
    /// Who invited (as the stanza named them), nil when the room did not say.
    public var inviter: String?
    public var kind: Kind
    public var reason: String?
    public var password: String?
    /// The inviter is in the roster.
    public var fromContact: Bool
    public var timestamp: Int64
    /// The `id` of the message that carried it (the same message seen again is the same invitation).
    public var messageId: String? = nil

    public init(account: String, room: String, inviter: String?, kind: Kind, reason: String? = nil, password: String? = nil,
                fromContact: Bool, timestamp: Int64) {
        self.account = account
        self.room = room
        self.inviter = inviter
        self.kind = kind
        self.reason = reason
        self.password = password
        self.fromContact = fromContact
        self.timestamp = timestamp
    }
}

/// Where an invitation stands.
public enum InvitationStatus: String, Sendable, Codable, CaseIterable {
    case pending, accepted, declined
}
