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
        let inviter = from.map { String($0.split(separator: "/", maxSplits: 1).first ?? Substring($0)) }
        let name = displayName.flatMap { $0.isEmpty ? nil : VisibleText.name($0) } ?? inviter ?? "Someone"
        let who = inviter.map { name == $0 ? $0 : "\(name) (\($0))" } ?? name
        var lines = ["\(who) invites you to \(room)"]
        if let reason, !reason.isEmpty, config.showBody { lines.append("“\(MarkupText.truncate(reason, limit: config.bodyLength))”") }
        return OutgoingNotification(kind: .invitation, account: account, conversation: room, from: from, name: name,
                                    title: "Invitation to \(room)", text: lines.joined(separator: "\n"),
                                    body: config.showBody ? reason : nil, isGroupchat: true, timestamp: at,
                                    answerHint: "Answer with: roost rooms join \(room)   or: roost rooms decline \(room)")
    }

    func summary(account: String, messages: [IncomingMessage], at: Int64) -> OutgoingNotification {
        var counts: [String: (name: String, count: Int)] = [:]
        for message in messages {
            counts[message.conversation.lowercased(), default: (message.isGroupchat ? message.conversation : VisibleText.name(message.displayName), 0)].count += 1
        }
        let anyRoom = messages.contains(where: \.isGroupchat)
        let total = messages.count
        let plural = total == 1 ? "message" : "messages"
        let who: String
        if counts.count == 1, let only = counts.values.first {
            who = "\(anyRoom ? "in" : "from") \(only.name)"
        } else {
            who = anyRoom ? "in \(counts.count) conversations" : "from \(counts.count) contacts"
        }
        let top = counts.values.sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }.prefix(5)
        var text = "\(total) \(plural) \(who) while you were away"
        if counts.count > 1 {
            text += "\n" + top.map { "\($0.name) (\($0.count))" }.joined(separator: ", ") + (counts.count > 5 ? ", …" : "")
        }
        return OutgoingNotification(kind: .summary, account: account, conversation: nil, from: nil, name: "Roost",
                                    title: "\(total) new \(plural)", text: text, body: nil, count: total,
                                    timestamp: messages.map(\.timestamp).max() ?? at)
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
