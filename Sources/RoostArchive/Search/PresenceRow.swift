/// A stored presence change.
public struct PresenceRow: Sendable, Equatable {
    public var account: String
    public var contact: String
    public var resource: String?
    public var availability: PresenceRecord.Availability
    public var show: String?
    public var status: String?
    public var priority: Int?
    public var timestamp: Int64
    /// Set for a room's timeline (contact = the room, resource = the occupant's nick).
    public var room: RoomPresenceDetail? = nil

    /// `bob joined`, `bob was kicked: spam`… for a room's timeline event.
    public var roomEventText: String? { room.map { TranscriptPhrases.roomEvent($0, nick: resource ?? contact) } }
}

/// What happened to an occupant of a room (a `presence_log` row with `room_event`, schema v6).
public struct RoomPresenceDetail: Sendable, Equatable {
    public init(event: RoomEvent, occupantId: String? = nil, realJid: String? = nil, role: String? = nil, affiliation: String? = nil,
                newNick: String? = nil, reason: String? = nil) {
        self.event = event
        self.occupantId = occupantId
        self.realJid = realJid
        self.role = role
        self.affiliation = affiliation
        self.newNick = newNick
        self.reason = reason
    }

    public var event: RoomEvent
    public var occupantId: String?
    public var realJid: String?
    public var role: String?
    public var affiliation: String?
    public var newNick: String?
    public var reason: String?

    /// The columns `read(_:at:)` expects, in order, for a `presence_log` row aliased `p` (or unaliased).
    static func columns(_ alias: String = "") -> String {
        ["room_event", "occupant_id", "real_jid", "role", "affiliation", "new_nick", "reason"].map { alias + $0 }.joined(separator: ", ")
    }

    static func read(_ row: Statement.Row, at column: Int32) -> RoomPresenceDetail? {
        guard let event = row.optionalText(column).flatMap(RoomEvent.init(rawValue:)) else { return nil }
        return RoomPresenceDetail(event: event, occupantId: row.optionalText(column + 1), realJid: row.optionalText(column + 2),
                                  role: row.optionalText(column + 3), affiliation: row.optionalText(column + 4),
                                  newNick: row.optionalText(column + 5), reason: row.optionalText(column + 6))
    }
}
