public import RoostXMPP

/// A roster item as the control protocol and `roost roster --json` carry it.
public struct RosterEntry: Codable, Sendable, Equatable {
    public var jid: String
    public var name: String?
    public var groups: [String]
    /// `none`, `to`, `from` or `both` (RFC 6121 §2.1.2.5).
    public var subscription: String
    /// True while the account's own subscription request is unanswered (`ask='subscribe'`).
    public var pending: Bool

    public init(_ item: RosterItem) {
        jid = item.jid.description
        name = item.name
        groups = item.groups
        subscription = item.subscription.rawValue
        pending = item.askPending
    }
}

public struct RosterSnapshot: Codable, Sendable, Equatable {
    public var items: [RosterEntry]
}

extension RosterEntry {
    /// An entry from stored fields (the archive's contacts table).
    public init(jid: String, name: String?, groups: [String], subscription: String, pending: Bool) {
        self.jid = jid
        self.name = name
        self.groups = groups
        self.subscription = subscription
        self.pending = pending
    }
}
