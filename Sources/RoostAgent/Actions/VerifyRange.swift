/// A run of messages the server archive holds, consecutive in its order, that the local archive lacks.
public struct VerifyRange: Codable, Sendable, Equatable {
    public var count: Int
    public var firstId: String
    public var lastId: String
    /// Server timestamps of the first and last message, UTC milliseconds.
    public var firstTimestamp: Int64
    public var lastTimestamp: Int64
}
