/// A roster item as pushed or fetched (RFC 6121); stored in `contacts`.
public struct RosterItemRecord: Sendable, Equatable {
    public var account: String
    public var jid: String
    public var name: String?
    public var groups: [String]
    /// `none`, `to`, `from`, `both`.
    public var subscription: String
    /// `subscribe` when a request is pending, else nil.
    public var ask: String?
    public var timestamp: Int64

    public init(account: String, jid: String, name: String? = nil, groups: [String] = [], subscription: String = "none",
                ask: String? = nil, timestamp: Int64) {
        self.account = account
        self.jid = jid
        self.name = name
        self.groups = groups
        self.subscription = subscription
        self.ask = ask
        self.timestamp = timestamp
    }
}
