/// An update of an account's resume state. Nil fields leave the stored value unchanged;
/// `clearStreamManagement` forgets the SM session (it expired or was closed cleanly).
public struct SyncStateRecord: Sendable, Equatable {
    public var account: String
    /// The newest trusted stanza-id stored, where MAM catch-up resumes.
    public var lastStanzaId: String?
    public var lastTimestamp: Int64?
    public var streamManagementId: String?
    public var streamManagementH: UInt32?
    public var clearStreamManagement: Bool
    /// MAM ranges known complete, as JSON the agent defines (e.g. `[{"start":"id1","end":"id2"}]`).
    public var completedRangesJSON: String?

    public init(account: String, lastStanzaId: String? = nil, lastTimestamp: Int64? = nil, streamManagementId: String? = nil,
                streamManagementH: UInt32? = nil, clearStreamManagement: Bool = false, completedRangesJSON: String? = nil) {
        self.account = account
        self.lastStanzaId = lastStanzaId
        self.lastTimestamp = lastTimestamp
        self.streamManagementId = streamManagementId
        self.streamManagementH = streamManagementH
        self.clearStreamManagement = clearStreamManagement
        self.completedRangesJSON = completedRangesJSON
    }
}
