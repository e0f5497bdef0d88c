/// A presence subscription request or answer. An incoming `subscribe` is stored as pending; our
/// `subscribed`/`unsubscribed` answer to the same JID marks it accepted/denied (and likewise for our own
/// outgoing requests answered by the contact). Every event is kept as its own row.
public struct SubscriptionRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case subscribe, subscribed, unsubscribe, unsubscribed
    }

    public var account: String
    public var jid: String
    public var direction: MessageDirection
    public var kind: Kind
    /// The optional `<status/>` text sent with a request.
    public var message: String?
    public var timestamp: Int64

    public init(account: String, jid: String, direction: MessageDirection, kind: Kind, message: String? = nil, timestamp: Int64) {
        self.account = account
        self.jid = jid
        self.direction = direction
        self.kind = kind
        self.message = message
        self.timestamp = timestamp
    }
}
