/// An occupant's presence in a room. The archive compares it with the occupant list it keeps and turns it into
/// timeline events (join, leave, nick change, role or affiliation change, kick, ban; see `SchemaV6`).
public struct RoomPresenceRecord: Sendable, Equatable {
    public var account: String
    /// The room's bare JID.
    public var room: String
    public var nick: String
    public var available: Bool
    public var occupantId: String?
    /// Bare JID, when the room shows it.
    public var realJid: String?
    public var role: String?
    public var affiliation: String?
    public var show: String?
    public var status: String?
    /// XEP-0045 status codes (303 nick change, 307 kick, 301 ban, 110 self…).
    public var statusCodes: [Int]
    public var newNick: String?
    public var reason: String?
    public var destroyed: Bool
    /// Part of the occupant list the room sends when Roost joins: these occupants were there already.
    public var initial: Bool
    public var timestamp: Int64

    public init(account: String, room: String, nick: String, available: Bool, occupantId: String? = nil, realJid: String? = nil,
                role: String? = nil, affiliation: String? = nil, show: String? = nil, status: String? = nil,
                statusCodes: [Int] = [], newNick: String? = nil, reason: String? = nil, destroyed: Bool = false,
                initial: Bool = false, timestamp: Int64) {
        self.account = account
        self.room = room
        self.nick = nick
        self.available = available
        self.occupantId = occupantId
        self.realJid = realJid
        self.role = role
        self.affiliation = affiliation
        self.show = show
        self.status = status
        self.statusCodes = statusCodes
        self.newNick = newNick
        self.reason = reason
        self.destroyed = destroyed
        self.initial = initial
        self.timestamp = timestamp
    }
}

/// What happened to an occupant, in `roost log ROOM --presence` and exports.
public enum RoomEvent: String, Sendable, Codable, CaseIterable {
    case join, leave, nick, role, affiliation, kick, ban, destroyed
}
