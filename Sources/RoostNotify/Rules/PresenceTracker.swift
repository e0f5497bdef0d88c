/// What the notification layer knows about the user elsewhere: their other resources' presence and
/// when they last wrote in each conversation from another client.
struct PresenceTracker {
    /// account → resource → show ("" for plain available), available resources only.
    private var resources: [String: [String: String]] = [:]
    /// "account|conversation" → milliseconds.
    private var lastActivity: [String: Int64] = [:]

    mutating func update(account: String, resource: String, available: Bool, show: String?) {
        let account = account.lowercased()
        if available {
            resources[account, default: [:]][resource] = show ?? ""
        } else {
            resources[account]?[resource] = nil
        }
    }

    mutating func recordActivity(account: String, conversation: String, at: Int64) {
        let key = ConversationKey.make(account, conversation)
        lastActivity[key] = max(lastActivity[key] ?? at, at)
    }

    /// Other resources that count as "at the keyboard": available with no show, or show = chat.
    func activeResources(account: String) -> [String] {
        (resources[account.lowercased()] ?? [:]).filter { $0.value.isEmpty || $0.value == "chat" }.keys.sorted()
    }

    func lastActivity(account: String, conversation: String) -> Int64? {
        lastActivity[ConversationKey.make(account, conversation)]
    }
}

enum ConversationKey {
    static func make(_ account: String, _ conversation: String) -> String {
        account.lowercased() + "|" + conversation.lowercased()
    }
}
