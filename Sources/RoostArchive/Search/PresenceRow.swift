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
}
