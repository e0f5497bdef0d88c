import RoostCore

/// The words people read: titles and texts of each kind of notification.
struct NotificationText {
    let config: NotifyConfig

    func message(_ latest: IncomingMessage, count: Int) -> OutgoingNotification {
        let room = latest.conversation.split(separator: "@").first.map(String.init) ?? latest.conversation
        // Names come from others (a nick, a vCard): a right-to-left override in one is shown, not obeyed.
        let name = VisibleText.name(latest.displayName)
        let title = latest.isGroupchat ? "\(name) in \(room)" : name
        let body = config.showBody ? MarkupText.truncate(latest.body, limit: config.bodyLength) : nil
        let countLine = count == 1 ? "New message" : "\(count) new messages"
        let text: String
        switch (body, count) {
        case let (body?, 1): text = body
        case let (body?, _): text = "\(countLine)\n\(body)"
        case (nil, _): text = countLine
        }
        return OutgoingNotification(kind: .message, account: latest.account, conversation: latest.conversation, from: latest.from,
                                    name: latest.displayName, title: title, text: text, body: body, count: count,
                                    isGroupchat: latest.isGroupchat, mentionsUser: latest.mentionsUser, timestamp: latest.timestamp,
                                    avatarPath: latest.avatarPath, imagePath: latest.imagePath)
    }

    /// A message one or more watches matched: on its own (never counted with the conversation's), titled by them.
    func watched(_ message: IncomingMessage, by watches: [WatchConfig]) -> OutgoingNotification {
        var notification = self.message(message, count: 1)
        notification.watches = watches.map(\.name)
        notification.title = VisibleText.name(notification.watches.joined(separator: ", ")) + ": " + notification.title
        notification.priority = watches.map(\.priority).max()
        let sinks = watches.map(\.sink)
        notification.onlySinks = sinks.contains(nil) ? nil : Set(sinks.compactMap { $0 })
        return notification
    }

    func request(account: String, from: String, displayName: String?, text: String?, at: Int64) -> OutgoingNotification {
        let name = displayName.flatMap { $0.isEmpty ? nil : VisibleText.name($0) } ?? from
        var lines = [name == from ? "\(from) asks to see when you are online" : "\(name) (\(from)) asks to see when you are online"]
        if let text, !text.isEmpty, config.showBody { lines.append("“\(MarkupText.truncate(text, limit: config.bodyLength))”") }
        return OutgoingNotification(kind: .request, account: account, conversation: from, from: from, name: name,
                                    title: "Contact request from \(name)", text: lines.joined(separator: "\n"),
                                    body: config.showBody ? text : nil, timestamp: at,
                                    answerHint: "Answer with: roost requests accept \(from)   or: roost requests deny \(from)")
    }

    func invitation(account: String, room: String, from: String?, displayName: String?, reason: String?, at: Int64) -> OutgoingNotification {
        let parts = from.map { $0.split(separator: "/", maxSplits: 1).map(String.init) } ?? []
        var inviter = parts.first
        var nick: String?
        if let bare = inviter, bare.lowercased() == room.lowercased() {
            // Through the room, which names the inviter by their seat in it (room@service/nick): the nick, not the
            // room a second time.
            inviter = nil
            nick = parts.count > 1 ? VisibleText.name(parts[1]) : nil
        }
        let name = displayName.flatMap { $0.isEmpty ? nil : VisibleText.name($0) } ?? inviter ?? nick ?? "Someone"
        let who = inviter.map { name == $0 ? $0 : "\(name) (\($0))" } ?? name
        var lines = ["\(who) invites you to \(room)"]
        if let reason, !reason.isEmpty, config.showBody { lines.append("“\(MarkupText.truncate(reason, limit: config.bodyLength))”") }
        return OutgoingNotification(kind: .invitation, account: account, conversation: room, from: from, name: name,
                                    title: "Invitation to \(room)", text: lines.joined(separator: "\n"),
                                    body: config.showBody ? reason : nil, isGroupchat: true, timestamp: at,
                                    answerHint: "Answer with: roost rooms join \(room)   or: roost rooms decline \(room)")
    }

    /// One summary of a kind: the chats' (one-to-one, and private messages in rooms) or the rooms'.
    func summary(account: String, tally: SummaryTally, at: Int64) -> OutgoingNotification {
        let total = tally.total
        let plural = total == 1 ? "message" : "messages"
        let who: String
        if tally.conversations.count == 1, let only = tally.conversations.values.first {
            who = "\(tally.rooms ? "in" : "from") \(only.name)"
        } else {
            who = tally.rooms ? "in \(tally.conversations.count) rooms" : "from \(tally.conversations.count) contacts"
        }
        let top = tally.conversations.values.sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }.prefix(5)
        var text = "\(total) \(plural) \(who) while you were away"
        if tally.conversations.count > 1 {
            text += "\n" + top.map { "\($0.name) (\($0.count))" }.joined(separator: ", ") + (tally.conversations.count > 5 ? ", …" : "")
        }
        return OutgoingNotification(kind: .summary, account: account, conversation: nil, from: nil, name: "Roost",
                                    title: "\(total) new \(plural)" + (tally.rooms ? " in rooms" : ""), text: text, body: nil, count: total,
                                    isGroupchat: tally.rooms, timestamp: tally.newest == 0 ? at : tally.newest)
    }

    func accountNeedsUser(account: String, title: String, cause: String, at: Int64) -> OutgoingNotification {
        OutgoingNotification(kind: .account, account: account, conversation: nil, from: nil, name: "Roost", title: title,
                             text: "\(cause)\nFix it, then: systemctl --user reload roost (or send roost SIGHUP)", body: nil, timestamp: at)
    }

    static func test(at: Int64) -> OutgoingNotification {
        OutgoingNotification(kind: .test, account: "", conversation: nil, from: nil, name: "Roost", title: "Roost test notification",
                             text: "If you can read this, Roost can reach you here.", body: nil, timestamp: at)
    }
}

/// What one summary counts: messages per conversation, of chats or of rooms. A later catch-up of the same kind adds
/// to it (the account's catch-up, then each room's, after one outage), so one summary never hides another's messages;
/// the notifier starts a new one once the user is back.
struct SummaryTally {
    let rooms: Bool
    /// By lowercased conversation: the name shown and the count.
    private(set) var conversations: [String: (name: String, count: Int)] = [:]
    private(set) var total = 0
    private(set) var newest: Int64 = 0

    init(rooms: Bool) { self.rooms = rooms }

    mutating func add(_ messages: [IncomingMessage]) {
        for message in messages {
            conversations[message.conversation.lowercased(),
                          default: (message.isGroupchat ? message.conversation : VisibleText.name(message.displayName), 0)].count += 1
            newest = max(newest, message.timestamp)
        }
        total += messages.count
    }
}
