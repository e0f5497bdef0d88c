/// One row of `contacts`: the roster fields and the cached vCard fields of a contact.
public struct ContactRow: Sendable, Equatable {
    public var account: String
    public var jid: String
    /// False once the contact was removed from the roster (its vCard and history stay).
    public var inRoster: Bool
    public var name: String?
    public var groups: [String]
    /// `none`, `to`, `from`, `both`, or `remove` after a removal; nil when only a vCard is known.
    public var subscription: String?
    /// `subscribe` while the account's own request is unanswered.
    public var ask: String?
    public var rosterUpdatedAt: Int64?
    public var nickname: String?
    public var fullName: String?
    public var photoHash: String?
    public var photoPath: String?
    public var vCardRaw: String?
    public var vCardFetchedAt: Int64?
}
