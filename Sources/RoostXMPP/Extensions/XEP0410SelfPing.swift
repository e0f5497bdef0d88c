/// XEP-0410 MUC Self-Ping: pinging one's own occupant JID tells whether the room still counts the client
/// as joined (a room service restarted, or a lost presence, leaves "ghost" occupants that receive nothing).
public enum SelfPing {
    public enum Outcome: Sendable, Equatable {
        case joined
        case notJoined
        /// The room or its service did not answer usefully (timeout, server trouble): ask again later.
        case unknown
    }

    public static func request(to occupant: JID) -> IQ { Ping.request(to: occupant) }

    /// What an answer means (§3.1): a result, or an error saying the ping itself is not handled, means joined.
    public static func outcome(of error: StanzaError?) -> Outcome {
        guard let error else { return .joined }
        switch error.condition {
        case "service-unavailable", "feature-not-implemented":
            return .joined
        case "not-acceptable", "item-not-found", "forbidden", "not-allowed":
            return .notJoined
        default:
            return .unknown
        }
    }
}
