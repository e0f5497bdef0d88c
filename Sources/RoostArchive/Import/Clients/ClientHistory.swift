import RoostCore
import Foundation

/// The XMPP clients whose histories Roost imports (see docs/import.md for the formats and versions).
public enum ClientFormat: String, CaseIterable, Sendable {
    case gajim, dino, profanity, pidgin, poezio

    public var displayName: String {
        switch self {
        case .gajim: "Gajim"
        case .dino: "Dino"
        case .profanity: "Profanity"
        case .pidgin: "Pidgin"
        case .poezio: "poezio"
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
    /// A line (or a file) the reader could not read at all: in no format it knows. Reported with counts and examples;
    /// a file of which no line could be read stops the import (`ClientLogFile`).
    case unread(reason: String, location: String)
    /// A file the history names that is not taken (`ClientFileFolder`): never read, copied or linked.
    case fileRefused(reason: String, location: String)
}

/// What the readers are told beyond their files: the names the user appears under where the history does not say
/// which lines are theirs (room nicks in Gajim 1.8 and earlier, Pidgin's plain-text logs, Profanity's text logs
/// without their database, poezio). `--me NAME`, and — when importing into an archive that already knows the rooms
/// — the nicks Roost used there (its `rooms` table) and those of the user's own messages it archived.
struct OwnNames: Sendable {
    /// `--me`.
    var given: Set<String> = []
    /// `account|room` (lowercase) → the nicks the archive knows as the user's there.
    var roomNicks: [String: Set<String>] = [:]

    /// The user's names in `room` of `account`.
    func inRoom(_ room: String, account: String) -> Set<String> {
        given.union(roomNicks[Self.key(account, room)] ?? [])
    }

    static func key(_ account: String, _ room: String) -> String { account.lowercased() + "|" + room.lowercased() }
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
    /// The peer's bare JID, the room's for group chats, `room@service/nick` for a private message in a room (the
    /// occupant's conversation, as Roost archives one it receives: see `privateInRoom`).
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
    /// The client kept a placeholder instead of the text (it could not decrypt the message): imported without a body,
    /// marked undecryptable as Roost marks an OMEMO message it cannot read — never the placeholder as text.
    var undecryptable: EncryptedPlaceholder.Recognised?

    /// A private message with `nick` in `room`: the occupant's own conversation, as a chat.
    static func privateInRoom(account: String, room: String, nick: String, direction: MessageDirection, body: String,
                              timestamp: Int64) -> ClientMessage {
        ClientMessage(account: account, conversation: "\(room)/\(nick)", kind: .chat, direction: direction, body: body, timestamp: timestamp)
    }

    /// The occupant of a private message in a room (`room@service/nick`), nil for other conversations.
    var privateNick: String? { kind == .groupchat ? nil : JIDText.resource(conversation) }

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
        // A private message's sender is named by the nick, as live (`StanzaRouter.records`).
        let name = senderName ?? (kind == .groupchat ? resource : nil) ?? (direction == .incoming ? privateNick : nil) ?? JIDText.bare(from)
        let trusted = stanzaId != nil && stanzaIdBy?.lowercased() == account.lowercased()
        var record = MessageRecord(account: account, conversation: conversation, direction: direction, kind: kind, from: from,
                                   to: to, senderName: name, body: undecryptable == nil ? body : nil, timestamp: timestamp,
                                   receivedAt: receivedAt ?? timestamp, stanzaId: stanzaId, stanzaIdBy: stanzaId == nil ? nil : stanzaIdBy,
                                   stanzaIdTrusted: trusted, originId: originId, messageId: messageId, replaces: replaces, source: .import,
                                   attachments: attachments)
        if let undecryptable {
            record.encryption = MessageEncryption(scheme: undecryptable.scheme, protocolNamespace: nil, failure: undecryptable.failure)
        }
        return record
    }
}

enum ClientText {
    /// A bare JID in the archive's spelling (lowercase), or nil when `text` cannot be one.
    static func bareJID(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        // The engine's check (`JIDSyntax`), and its normal form.
        return try? JIDSyntax.parse(JIDText.bare(text)).text
    }

    /// `room@service/nick` in the archive's spelling (the room lowercase, the nick as written), or nil.
    static func occupantJID(room: String, nick: String?) -> String? {
        guard let room = bareJID(room), let nick, !nick.isEmpty else { return nil }
        return try? JIDSyntax.parse("\(room)/\(nick)").text
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

/// Checks on a client's log file once read.
enum ClientLogFile {
    /// A file with lines none of which could be read is a format Roost does not know (another client, another version
    /// of it): the import stops there, nothing imported, instead of reporting success with nothing read.
    static func check(_ path: String, read: Int, unread: [(reason: String, line: Int)]) throws(ImportError) {
        guard read == 0, let first = unread.first else { return }
        throw .unrecognised(path: path, reason: "none of its \(unread.count) line\(unread.count == 1 ? "" : "s") is in a format Roost knows "
                            + "(line \(first.line): \(first.reason)); nothing was imported")
    }
}
