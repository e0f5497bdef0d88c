/// One stored subscription event (`subscription_requests`); requests carry a status, answers do not.
public struct SubscriptionRequestRow: Sendable, Equatable {
    public var account: String
    public var jid: String
    public var direction: MessageDirection
    public var kind: SubscriptionRecord.Kind
    public var status: SubscriptionStatus?
    public var message: String?
    public var createdAt: Int64
    public var updatedAt: Int64
}
