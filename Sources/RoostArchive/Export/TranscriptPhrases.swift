import RoostCore

/// The words the human-readable formats share, so txt, md and html describe events the same way.
enum TranscriptPhrases {
    /// `Alice is typing`, `Alice stopped typing`…
    static func chatState(_ state: ChatStateRow, who: String) -> String {
        switch state.state {
        case .composing: "\(who) is typing"
        case .paused: "\(who) stopped typing"
        case .active: "\(who) is active"
        case .inactive: "\(who) is inactive"
        case .gone: "\(who) left the conversation"
        }
    }

    /// `Alice (phone) is away: "on the train"`, `… went offline`; in a room `bob joined`, `bob was kicked: spam`….
    static func presence(_ presence: PresenceRow, who: String) -> String {
        if let room = presence.room { return roomEvent(room, nick: presence.resource ?? who) }
        let resource = presence.resource.map { $0.isEmpty ? "" : " (\($0))" } ?? ""
        let what: String
        if presence.availability == .unavailable {
            what = "went offline"
        } else {
            what = switch presence.show {
            case "away": "is away"
            case "xa": "is away for long"
            case "dnd": "does not want to be disturbed"
            case "chat": "is free to chat"
            default: "is online"
            }
        }
        let status = presence.status.map { $0.isEmpty ? "" : ": \"\($0)\"" } ?? ""
        return "\(who)\(resource) \(what)\(status)"
    }

    /// Who changed state: "me" for the account's own resources, the contact's name when the roster or vCard
    /// has one, else the full JID (in a room that is `room@service/nick`, which names the occupant).
    static func stateSender(_ state: ChatStateRow, accountID: Int64, contacts: ContactDirectory) -> String {
        let bare = JIDText.bare(state.from)
        if bare.lowercased() == state.account.lowercased() { return "me" }
        return contacts.contact(accountID: accountID, jid: bare)?.displayName ?? state.from
    }

    /// A room's timeline: who joined, left, changed nick, role or affiliation, was kicked or banned.
    static func roomEvent(_ event: RoomPresenceDetail, nick: String) -> String {
        let reason = event.reason.map { $0.isEmpty ? "" : ": \($0)" } ?? ""
        switch event.event {
        case .join: return "\(nick) joined" + (event.role == "moderator" ? " (moderator)" : "")
        case .leave: return "\(nick) left" + reason
        case .nick: return "\(nick) is now known as \(event.newNick ?? "?")"
        case .role: return "\(nick) is now " + (event.role == "none" || event.role == nil ? "without a role" : "a \(event.role!)")
        case .affiliation:
            return "\(nick) is now " + (event.affiliation == "none" || event.affiliation == nil ? "without affiliation" : "\(event.affiliation == "owner" ? "an" : "a") \(event.affiliation!)")
        case .kick: return "\(nick) was kicked" + reason
        case .ban: return "\(nick) was banned" + reason
        case .destroyed: return "the room was destroyed" + reason
        }
    }

    static func presenceSender(_ presence: PresenceRow, accountID: Int64, contacts: ContactDirectory) -> String {
        if presence.room != nil { return presence.resource ?? presence.contact }
        return contacts.contact(accountID: accountID, jid: presence.contact)?.displayName ?? presence.contact
    }

    /// The text shown for a message without a body.
    static func placeholder(for message: MessageRow) -> String {
        if message.retracted { return "(message retracted)" }
        if let text = message.encryption?.undecryptableText { return "(\(text))" }
        if let subject = message.subject { return "(subject) \(subject)" }
        if !message.attachments.isEmpty { return "" }
        return "(no text)"
    }

    /// A message's text in a transcript: body or placeholder, encryption mark, the tombstone of a retraction, the
    /// message a reply answers, reactions, and delivered/read ticks on what the user sent (see `MessageSemantics`).
    static func text(of message: MessageRow, clock: ZoneClock, edited: String = "") -> String {
        let body = message.retracted && message.body == nil ? "" : (message.body ?? placeholder(for: message))
        return message.semantics.decorate(body + encryptionMark(for: message) + (message.edited ? edited : "") + message.semantics.tick) {
            clock.minuteText($0)
        }
    }

    /// The text shown of a message's body: none when the body is only the address of one of its files (the
    /// XEP-0066 convention for sharing a file; the file is shown instead, as Conversations and Dino do).
    static func shownBody(of message: MessageRow) -> String? {
        guard let body = message.body else { return nil }
        guard !message.attachments.isEmpty else { return body }
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        return message.attachments.contains { $0.url == trimmed } ? nil : body
    }

    /// Marks an end-to-end encrypted message in transcripts: ` [OMEMO]`, ` [OMEMO, untrusted device]`, or "".
    static func encryptionMark(for message: MessageRow) -> String {
        guard let encryption = message.encryption, encryption.isDecrypted else { return "" }
        return encryption.isTrusted ? " [OMEMO]" : " [OMEMO, untrusted device]"
    }

    /// `Thursday 15 January 2026`-style heading text for the day containing `milliseconds`.
    static func dayHeading(_ time: CivilTime) -> String {
        "\(time.dateText) \(CivilTime.weekdayNames[time.weekday])"
    }

    /// The zone named in headers: `UTC` or the zone's identifier.
    static func zoneName(_ clock: ZoneClock) -> String {
        clock.isUTC ? "UTC" : clock.timeZone.identifier
    }
}
