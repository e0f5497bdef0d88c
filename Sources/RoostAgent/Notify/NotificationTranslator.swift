import Foundation
import RoostArchive
import RoostCore
import RoostNotify
import RoostXMPP
import Synchronization

/// Turns committed archive events and router notes into notification events.
///
/// Only live messages are notified one by one; a message stamped much earlier than it arrived (an SM resend
/// after resumption, offline delivery) joins the backlog that the next catch-up summarises instead.
struct NotificationTranslator: Sendable {
    let account: String
    /// Display name (roster name, else vCard nickname, else full name) and cached avatar per contact bare JID.
    var names: [String: String]
    var avatars: [String: String]
    var liveWindowMilliseconds: Int64 = 60_000
    /// Requests already shown (or pending from before): the server repeats pending requests at each login.
    let knownRequests = KnownRequests()

    /// `archiveID`: the message's row, so a picture it shares can be shown once downloaded.
    func incoming(_ record: MessageRecord, archiveID: Int64? = nil, mentionsUser: Bool = false) -> IncomingMessage? {
        guard record.direction == .incoming, record.body != nil || record.encryption != nil || !record.attachments.isEmpty else { return nil }
        let sender = record.kind == .groupchat ? record.from : record.conversation
        let name = names[sender.lowercased()] ?? record.senderName ?? sender
        var (body, picture) = Self.text(of: record)
        if record.body == nil, record.attachments.isEmpty, record.encryption != nil { body = "encrypted message, could not be decrypted" }
        if let encryption = record.encryption, encryption.isDecrypted, !encryption.isTrusted { body = "(untrusted device) " + body }
        var message = IncomingMessage(account: account, conversation: record.conversation, from: record.from, displayName: name,
                                      body: body, isGroupchat: record.kind == .groupchat, mentionsUser: mentionsUser,
                                      timestamp: record.timestamp, avatarPath: avatars[record.conversation.lowercased()])
        message.archiveID = archiveID
        if picture {
            message.pictureMessageID = archiveID
            message.pictureSizeAwaited = record.attachments.count == 1 && record.attachments[0].size == nil
        }
        return message
    }

    /// What a notification says of a message: its text, or for a file message "sent a picture: bob.png
    /// (1.2 MB)" / "sent a file: …" (and whether it is a picture). The size is the one the message gave; for a
    /// picture without one, `NotificationHub` adds the downloaded file's.
    static func text(of record: MessageRecord) -> (String, picture: Bool) {
        let body = record.body ?? ""
        // Only a message with a file needs its body trimmed (Foundation's trimming of every body was 1 % of a live
        // flood's CPU).
        guard let first = record.attachments.first else { return (body, false) }
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.isEmpty || record.attachments.contains(where: { $0.url == trimmed }) else { return (body, false) }
        let pictures = record.attachments.filter { ($0.mime ?? MediaType.guess(name: $0.displayName, sample: []))?.hasPrefix("image/") == true }
        if record.attachments.count > 1 {
            let noun = pictures.count == record.attachments.count ? "pictures" : "files"
            return ("sent \(record.attachments.count) \(noun)", !pictures.isEmpty)
        }
        let noun = pictures.isEmpty ? "a file" : "a picture"
        return ("sent \(noun): \(VisibleText.name(first.displayName))" + sizeSuffix(first.size), !pictures.isEmpty)
    }

    /// " (1.2 MB)" after a file's name; nothing when the size is not known.
    static func sizeSuffix(_ size: Int64?) -> String { size.map { " (\(FileSize.text($0)))" } ?? "" }

    func isLive(_ record: MessageRecord) -> Bool { record.receivedAt - record.timestamp < liveWindowMilliseconds }

    /// What to post once a live submission committed, and what joins the catch-up backlog.
    func events(for notes: [RoutingNote], events: [ArchiveEvent], outcomes: [InsertOutcome]) -> (post: [NotificationEvent], backlog: [IncomingMessage]) {
        var post: [NotificationEvent] = []
        var backlog: [IncomingMessage] = []
        let mentioned = Set(notes.compactMap { if case .mention(let index) = $0 { index } else { nil } })
        for note in notes {
            switch note {
            case .incomingMessage(let index):
                guard index < events.count, index < outcomes.count, case .inserted(let id) = outcomes[index],
                      case .message(let record) = events[index],
                      let message = incoming(record, archiveID: id, mentionsUser: mentioned.contains(index)) else { continue }
                if isLive(record) { post.append(.message(message)) } else { backlog.append(message) }
            case .userWrote(let conversation, let at):
                post.append(.userActivity(account: account, conversation: conversation, at: at))
            case .conversationRead(let conversation):
                post.append(.conversationRead(account: account, conversation: conversation))
            case .subscriptionRequest(let from, let text):
                guard knownRequests.insert(from) else { continue }
                post.append(.subscriptionRequest(account: account, from: from, displayName: names[from.lowercased()], text: text))
            case .ownPresence(let resource, let available, let show):
                post.append(.ownPresence(account: account, resource: resource, available: available, show: show))
            case .room(.invitation(let invitation, _)):
                // Shown when it was archived as new (the same one again while it is pending is not).
                guard let index = events.firstIndex(where: { if case .invitation = $0 { true } else { false } }),
                      index < outcomes.count, outcomes[index] == .stored else { continue }
                let inviter = invitation.inviter?.bare.description
                post.append(.invitation(account: account, room: invitation.room.description, from: invitation.inviter?.description,
                                        displayName: inviter.flatMap { names[$0.lowercased()] }, reason: invitation.reason))
            case .avatarHash, .pepAvatar, .mention, .room:
                continue
            }
        }
        return (post, backlog)
    }
}

/// The bare JIDs whose friend request was already notified (or was pending before this process started).
final class KnownRequests: Sendable {
    private let jids = Mutex<Set<String>>([])

    /// True when `jid` was not known yet.
    func insert(_ jid: String) -> Bool { jids.withLock { $0.insert(jid.lowercased()).inserted } }

    /// A request answered (or withdrawn) may come again and be notified again.
    func forget(_ jid: String) { _ = jids.withLock { $0.remove(jid.lowercased()) } }
}
