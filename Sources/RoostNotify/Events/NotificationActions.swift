/// What a notification can ask the agent to do when the user presses one of its buttons.
public protocol NotificationActions: Sendable {
    /// Accept (subscribed + subscribe back as the agent sees fit) or deny (unsubscribed) a presence
    /// subscription request; the agent archives the answer.
    func answerSubscription(account: String, jid: String, accept: Bool) async
    /// Join the room (and remember it) or decline the invitation; the agent archives the answer.
    func answerInvitation(account: String, room: String, join: Bool) async
}

extension NotificationActions {
    public func answerInvitation(account: String, room: String, join: Bool) async {}
}
