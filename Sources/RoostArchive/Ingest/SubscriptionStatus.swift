/// The state of a `subscribe` request.
public enum SubscriptionStatus: String, Sendable, Codable {
    case pending, accepted, denied
}
