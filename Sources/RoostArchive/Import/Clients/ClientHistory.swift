import RoostCore
import Foundation

/// The XMPP clients whose histories Roost imports (see docs/import.md for the formats and versions).
public enum ClientFormat: String, CaseIterable, Sendable {
    case gajim, dino, profanity, pidgin

    public var displayName: String {
        switch self {
        case .gajim: "Gajim"
        case .dino: "Dino"
        case .profanity: "Profanity"
        case .pidgin: "Pidgin"
        }
    }
}

/// One entry of a client's history, as a reader hands it on.
enum ClientItem {
    case message(MessageRecord)
    /// A message Roost will not import, and why (`location` says where it is in the source).
    case refused(reason: String, location: String)
    /// A reactor's set of reactions (XEP-0444) to a message, named by the id the archive finds it by.
    case reaction(MessageAnnotation)
    /// A reaction Roost will not import, and why.
    case refusedReaction(reason: String, location: String)
    /// Something that is not a message (a status change, a call, a system line), by kind.
    case notMessage(String)
}

/// Reads one history (a database, a log folder) of one client.
protocol ClientHistoryReader: AnyObject {
    /// What was found, for the user: `Gajim 1.9 or later: /…/logs.db (history schema 19)`.
    var description: String { get }
    /// The accounts (bare JIDs) the history has messages of.
    func accounts() throws(ImportError) -> [String]
    /// Every entry of `account` (all accounts when nil), originals always before their corrections, reactions after
    /// the messages.
    func read(account: String?, _ body: (ClientItem) throws(ImportError) -> Void) throws(ImportError)
}

/// A message as the readers describe it; `record` turns it into the archive's shape the same way for every
/// client (full JIDs built from the parts the client kept).
struct ClientMessage {
    var account: String
    /// The peer's bare JID, or the room's for group chats and private messages in a room.
    var conversation: String
    var kind: MessageKind = .chat
    var direction: MessageDirection
    /// The peer's resource in a chat; the occupant's nick in a room (also the own nick, when known).
    var resource: String?
    var senderName: String?
    var body: String
    var timestamp: Int64
    var receivedAt: Int64?
    var stanzaId: String?
    /// Whose archive assigned `stanzaId`: the account (trusted, as MAM ids are) or the room.
    var stanzaIdBy: String?
    var messageId: String?
    var originId: String?
    var replaces: String?
    var attachments: [AttachmentRecord] = []

    var record: MessageRecord {
        let peer = resource.map { "\(conversation)/\($0)" } ?? conversation
        let from: String
        let to: String
        switch (direction, kind) {
        case (.incoming, _):
            from = peer
            to = account
        case (.outgoing, .groupchat):
            from = resource == nil ? account : peer
            to = conversation
        case (.outgoing, _):
            from = account
            to = peer
        }
        let name = senderName ?? (kind == .groupchat ? resource : nil) ?? JIDText.bare(from)
        let trusted = stanzaId != nil && stanzaIdBy?.lowercased() == account.lowercased()
        return MessageRecord(account: account, conversation: conversation, direction: direction, kind: kind, from: from,
                             to: to, senderName: name, body: body, timestamp: timestamp, receivedAt: receivedAt ?? timestamp,
                             stanzaId: stanzaId, stanzaIdBy: stanzaId == nil ? nil : stanzaIdBy, stanzaIdTrusted: trusted,
                             originId: originId, messageId: messageId, replaces: replaces, source: .import,
                             attachments: attachments)
    }
}

enum ClientText {
    /// A bare JID in the archive's spelling (lowercase), or nil when `text` cannot be one.
    static func bareJID(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        // The engine's check (`JIDSyntax`), and its normal form.
        return try? JIDSyntax.parse(JIDText.bare(text)).text
    }

    /// Nil for nil, empty and whitespace-only text.
    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.allSatisfy(\.isWhitespace) else { return nil }
        return text
    }

    /// Seconds since 1970 (as clients store them, possibly fractional) → milliseconds.
    static func milliseconds(seconds: Double) -> Int64 {
        Int64((seconds * 1000).rounded())
    }

    /// Percent-escapes (`%40`, as Pidgin writes file names) decoded; the text as is when it has none or bad ones.
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        return text.removingPercentEncoding ?? text
    }
}
