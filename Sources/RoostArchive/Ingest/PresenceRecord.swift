/// A contact's presence change, for the presence log.
public struct PresenceRecord: Sendable, Equatable {
    public enum Availability: String, Sendable, Codable {
        case available, unavailable
    }

    public var account: String
    /// The contact's bare JID.
    public var contact: String
    public var resource: String?
    public var availability: Availability
    /// `away`, `chat`, `dnd`, `xa` or nil (plain available).
    public var show: String?
    public var status: String?
    public var priority: Int?
    public var timestamp: Int64
    /// A room's timeline event as exported (imports write it back as it was; live room presence goes through
    /// `RoomPresenceRecord`, which derives the event).
    public var room: RoomPresenceDetail? = nil

    public init(account: String, contact: String, resource: String?, availability: Availability,
                show: String? = nil, status: String? = nil, priority: Int? = nil, timestamp: Int64) {
        self.account = account
        self.contact = contact
        self.resource = resource
        self.availability = availability
        self.show = show
        self.status = status
        self.priority = priority
        self.timestamp = timestamp
    }
}
