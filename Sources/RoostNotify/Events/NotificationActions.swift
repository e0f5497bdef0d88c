/// What a notification can ask the agent to do when the user presses one of its buttons.
public protocol NotificationActions: Sendable {
    /// Accept (subscribed + subscribe back as the agent sees fit) or deny (unsubscribed) a presence
    /// subscription request; the agent archives the answer.
    func answerSubscription(account: String, jid: String, accept: Bool) async
}
