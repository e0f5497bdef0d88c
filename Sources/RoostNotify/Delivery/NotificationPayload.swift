import Foundation
import RoostCore

/// The JSON given to webhooks (format = json) and to commands on stdin. Field names are documented in
/// docs/notify.md and are a stable interface.
struct NotificationPayload: Encodable {
    let event: String
    let account: String
    let conversation: String?
    let from: String?
    let name: String
    let title: String
    let text: String
    let body: String?
    let count: Int
    let groupchat: Bool
    let mentions: Bool
    let timestamp: String
    let timestamp_ms: Int64
    /// The buttons of a push with `public_url` (JSON webhooks): each link acts once, by POST, before it expires.
    var actions: [Button]?

    struct Button: Encodable, Equatable {
        let action: String
        let label: String
        let url: String
        var method = "POST"
    }
    /// The watches a message matched (empty: none) and their priority.
    let watches: [String]?
    let priority: String?

    init(_ notification: OutgoingNotification) {
        event = notification.kind.rawValue
        account = notification.account
        conversation = notification.conversation
        from = notification.from
        name = notification.name
        title = notification.title
        text = notification.fullText
        body = notification.body
        count = notification.count
        groupchat = notification.isGroupchat
        mentions = notification.mentionsUser
        timestamp = Self.iso8601(notification.timestamp)
        timestamp_ms = notification.timestamp
        watches = notification.watches.isEmpty ? nil : notification.watches
        priority = notification.priority?.rawValue
    }

    static func json(_ notification: OutgoingNotification, actions: [Button] = []) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var payload = NotificationPayload(notification)
        if !actions.isEmpty { payload.actions = actions }
        return (try? encoder.encode(payload)) ?? Data("{}".utf8)
    }

    /// The variables a command sink's program receives.
    static func environment(_ notification: OutgoingNotification) -> [String: String] {
        let payload = NotificationPayload(notification)
        var variables = [
            "ROOST_EVENT": payload.event,
            "ROOST_ACCOUNT": payload.account,
            "ROOST_NAME": payload.name,
            "ROOST_TITLE": payload.title,
            "ROOST_TEXT": payload.text,
            "ROOST_COUNT": String(payload.count),
            "ROOST_GROUPCHAT": payload.groupchat ? "1" : "0",
            "ROOST_MENTIONS": payload.mentions ? "1" : "0",
            "ROOST_TIMESTAMP": payload.timestamp,
        ]
        variables["ROOST_CONVERSATION"] = payload.conversation
        variables["ROOST_FROM"] = payload.from
        variables["ROOST_BODY"] = payload.body
        variables["ROOST_WATCHES"] = payload.watches?.joined(separator: ",")
        variables["ROOST_PRIORITY"] = payload.priority
        return variables
    }

    static func iso8601(_ milliseconds: Int64) -> String {
        Timestamp.rfc3339(milliseconds)
    }
}
