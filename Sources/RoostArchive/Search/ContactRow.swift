import Foundation

/// A stored contact: its roster fields (when it is or was in the roster) and its vCard fields (when fetched).
public struct ContactRow: Sendable, Equatable {
    public var account: String
    public var jid: String
    public var inRoster: Bool
    public var name: String?
    public var groups: [String]
    public var subscription: String?
    public var ask: String?
    /// UTC milliseconds of the last roster change, nil when the contact never was in the roster.
    public var rosterUpdatedAt: Int64?
    public var nickname: String?
    public var fullName: String?
    public var photoHash: String?
    /// A local copy of the avatar, when the agent saved one.
    public var photoPath: String?
    public var vCardRaw: String?
    /// UTC milliseconds, nil when no vCard was fetched.
    public var vCardFetchedAt: Int64?

    public init(account: String, jid: String, inRoster: Bool, name: String?, groups: [String], subscription: String?,
                ask: String?, rosterUpdatedAt: Int64?, nickname: String?, fullName: String?, photoHash: String?,
                photoPath: String?, vCardRaw: String?, vCardFetchedAt: Int64?) {
        self.account = account
        self.jid = jid
        self.inRoster = inRoster
        self.name = name
        self.groups = groups
        self.subscription = subscription
        self.ask = ask
        self.rosterUpdatedAt = rosterUpdatedAt
        self.nickname = nickname
        self.fullName = fullName
        self.photoHash = photoHash
        self.photoPath = photoPath
        self.vCardRaw = vCardRaw
        self.vCardFetchedAt = vCardFetchedAt
    }

    /// The name people know the contact by: roster name, else vCard nickname, else full name.
    public var displayName: String? {
        for candidate in [name, nickname, fullName] {
            if let candidate, !candidate.trimmingCharacters(in: .whitespaces).isEmpty { return candidate }
        }
        return nil
    }
}
