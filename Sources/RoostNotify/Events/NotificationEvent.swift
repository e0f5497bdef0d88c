/// What the agent tells the notification layer. Posting never blocks: events are queued and handled off
/// the ingest path.
public enum NotificationEvent: Sendable {
    /// A new chat message that was just archived from the live stream. Catch-up never posts these.
    case message(IncomingMessage)
    /// Someone asked to see the user's presence (`<presence type="subscribe"/>`).
    case subscriptionRequest(account: String, from: String, displayName: String?, text: String?)
    /// A catch-up (server archive, stream resumption, first sync) finished; `messages` are the incoming
    /// messages it archived that were new. Yields at most one summary.
    case catchUpFinished(account: String, messages: [IncomingMessage])
    /// The user read or answered this conversation elsewhere (an outgoing carbon, or a XEP-0333 displayed
    /// marker seen through carbons): its notification is closed and its count starts again.
    case conversationRead(account: String, conversation: String)
    /// Presence of one of the user's *other* resources (never Roost's own).
    case ownPresence(account: String, resource: String, available: Bool, show: String?)
    /// The user wrote in a conversation from another client, at `at` (milliseconds since 1970).
    case userActivity(account: String, conversation: String, at: Int64)
    /// Someone invited the user to a group chat (XEP-0249 or XEP-0045); `from` is the inviter's JID when known.
    case invitation(account: String, room: String, from: String?, displayName: String?, reason: String?)
    /// An account that cannot log in (its password or certificate refused, its password_command hanging) or that
    /// another client keeps replacing waits for the user: said once per wait, not at each retry. `title` is one line
    /// ("Roost cannot log in to alice@example.org"), `cause` what failed.
    case accountNeedsUser(account: String, title: String, cause: String)
}
