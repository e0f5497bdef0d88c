/// One room of an account as the archive knows it (`rooms`, with its activity).
public struct RoomRow: Sendable, Equatable {
    public var account: String
    public var jid: String
    public var name: String?
    /// The nick Roost uses there (with its conflict suffix, if any).
    public var nick: String?
    public var bookmarked: Bool
    public var bookmarkNick: String?
    public var autojoin: Bool
    /// Joined with `roost rooms join` or from an invitation: joined again at every start.
    public var joinedByUser: Bool
    /// `bookmark`, `config`, `command`, `invitation` or nil. Never the password.
    public var passwordSource: String?
    /// The `--password-command` of `roost rooms join` (a reference, not a password).
    public var passwordCommand: String?
    /// The agent's view when it last wrote; only current while an agent runs.
    public var joined: Bool
    public var joinedAt: Int64?
    public var lastError: String?
    public var mam: Bool?
    public var nonAnonymous: Bool?
    public var occupantId: String?
    public var subject: String?
    public var catchUpId: String?
    public var catchUpTimestamp: Int64?
    public var occupants: Int
    public var messages: Int
    /// Newest message time, UTC milliseconds.
    public var lastActivity: Int64?
}

/// One invitation to a room (`room_invitations`).
public struct InvitationRow: Sendable, Equatable {
    public var account: String
    public var room: String
    public var inviter: String?
    public var kind: InvitationRecord.Kind
    public var reason: String?
    public var hasPassword: Bool
    public var fromContact: Bool
    public var status: InvitationStatus
    public var createdAt: Int64
    public var updatedAt: Int64
}

/// Who is in a room now, as the agent last saw it.
public struct OccupantRow: Sendable, Equatable {
    public var nick: String
    public var occupantId: String?
    public var realJid: String?
    public var role: String?
    public var affiliation: String?
    public var show: String?
    public var status: String?
    public var since: Int64
}
