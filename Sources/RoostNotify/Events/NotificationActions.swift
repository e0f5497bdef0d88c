/// What a notification can ask the agent to do when the user presses one of its buttons.
public protocol NotificationActions: Sendable {
    /// Accept (subscribed + subscribe back as the agent sees fit) or deny (unsubscribed) a presence
    /// subscription request; the agent archives the answer.
    func answerSubscription(account: String, jid: String, accept: Bool) async
    /// Join the room (and remember it) or decline the invitation; the agent archives the answer.
    func answerInvitation(account: String, room: String, join: Bool) async
    /// `Mark read` on a message notification: the conversation is marked read as `roost read --send` does (a
    /// XEP-0333 displayed marker for its newest incoming message, the unread count cleared) and its notification closed.
    func markRead(account: String, conversation: String) async
    /// `Reply` on a message notification: `text` is sent to the conversation as `roost send` sends it (archived,
    /// encrypted where the conversation is, to the room for a group chat).
    func reply(account: String, conversation: String, text: String) async
    /// A signed, single-use, expiring token for a push notification's button (`read`, `accept`, `deny` on `target`),
    /// which `roost serve` acts on at `public_url/act/TOKEN`; nil when none can be made.
    func pushActionToken(_ action: String, account: String, target: String) -> String?
}

extension NotificationActions {
    public func answerInvitation(account: String, room: String, join: Bool) async {}
    public func markRead(account: String, conversation: String) async {}
    public func reply(account: String, conversation: String, text: String) async {}
    public func pushActionToken(_ action: String, account: String, target: String) -> String? { nil }
}
