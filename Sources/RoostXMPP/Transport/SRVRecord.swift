/// One DNS SRV answer (RFC 2782).
public struct SRVRecord: Sendable, Equatable {
    public let priority: UInt16
    public let weight: UInt16
    public let port: UInt16
    /// Target host name without the trailing dot.
    public let target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }
}
