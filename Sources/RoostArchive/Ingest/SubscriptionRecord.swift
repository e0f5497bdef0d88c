/// A presence subscription request or answer. An incoming `subscribe` is stored as pending; our
/// `subscribed`/`unsubscribed` answer to the same JID marks it accepted/denied (and likewise for our own
/// outgoing requests answered by the contact). Every event is kept as its own row.
public struct SubscriptionRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case subscribe, subscribed, unsubscribe, unsubscribed
    }

    public var account: String
    public var jid: String
    public var direction: MessageDirection
    public var kind: Kind
    /// The optional `<status/>` text sent with a request.
    public var message: String?
    public var timestamp: Int64
    /// Set by an import: the row exactly as it was exported — its status and last change — stored as it is,
    /// without settling other requests (the export carries the answers that did that, as rows of their own).
    public var restored: Restored?

    public struct Restored: Sendable, Equatable {
        public var status: SubscriptionStatus?
        public var updatedAt: Int64

        public init(status: SubscriptionStatus?, updatedAt: Int64) {
            self.status = status
            self.updatedAt = updatedAt
        }
    }

    public init(account: String, jid: String, direction: MessageDirection, kind: Kind, message: String? = nil, timestamp: Int64) {
        self.account = account
        self.jid = jid
        self.direction = direction
        self.kind = kind
        self.message = message
        self.timestamp = timestamp
    }
}

/// The state of a `subscribe` request.
public enum SubscriptionStatus: String, Sendable, Codable {
    case pending, accepted, denied
}
