/// One notification after the rules, as every sink receives it.
struct OutgoingNotification: Sendable {
    enum Kind: String, Sendable {
        /// New messages in one conversation (coalesced: `count` since the user last read it).
        case message
        /// A presence subscription request.
        case request
        /// An invitation to a group chat.
        case invitation
        /// One summary after a catch-up.
        case summary
        /// An account waits for the user (it cannot log in, or another client keeps replacing it).
        case account
        /// The conversation was read elsewhere: close its notification (only the desktop sink acts on it).
        case close
        /// `roost notify test`.
        case test
    }

    var kind: Kind
    var account: String
    /// The conversation, or the JID asking for a subscription.
    var conversation: String?
    /// Full JID of the (latest) sender.
    var from: String?
    /// Contact display name, or "Roost" for summaries and tests.
    var name: String
    /// One line: the desktop summary, the mail subject, the ntfy title.
    var title: String
    /// Plain text for people: the body (with the count), the request, the summary.
    var text: String
    /// The latest message body; nil when `show_body = false` or not a message.
    var body: String?
    var count: Int = 1
    var isGroupchat = false
    var mentionsUser = false
    /// Milliseconds since 1970.
    var timestamp: Int64
    var avatarPath: String?
    /// A picture to show with the message (desktop: the `image-path` hint).
    var imagePath: String?
    /// For requests and invitations: how to answer from a terminal (sinks without buttons append it).
    var answerHint: String?
    /// The watches a message matched (`[watch NAME]`); with them, their highest priority and the sinks they name
    /// (nil: every sink).
    var watches: [String] = []
    var priority: WatchPriority?
    var onlySinks: Set<String>?

    /// Identifies what a later notification replaces, e.g. one per conversation.
    /// A summary of the chats and one of the rooms are two (each grows as further catch-ups add to it); a watched
    /// message does not replace its conversation's ordinary notification.
    var replacementKey: String {
        switch kind {
        case .summary: "summary|\(account)|\(isGroupchat ? "rooms" : "chats")"
        case .close: "message|\(account)|\(conversation ?? "")"
        default: "\(kind.rawValue)\(watches.isEmpty ? "" : "+watch")|\(account)|\(conversation ?? "")"
        }
    }

    var eventKind: SinkEventKind? {
        switch kind {
        case .message: .message
        case .request: .request
        case .invitation: .invitation
        case .summary: .summary
        case .account: .account
        case .close, .test: nil
        }
    }

    /// `text` plus the answer hint, for sinks without action buttons.
    var fullText: String {
        answerHint.map { text + "\n" + $0 } ?? text
    }
}
