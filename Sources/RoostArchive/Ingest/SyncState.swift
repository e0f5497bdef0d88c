/// An account's stored resume state.
public struct SyncState: Sendable, Equatable {
    public var account: String
    public var lastStanzaId: String?
    public var lastTimestamp: Int64?
    public var streamManagementId: String?
    public var streamManagementH: UInt32?
    public var completedRangesJSON: String
    public var updatedAt: Int64
}
