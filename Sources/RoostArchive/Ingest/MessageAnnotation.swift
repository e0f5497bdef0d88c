/// What a jsonl export recorded of a message's state (schema v8), restored on import.
public struct ImportedState: Sendable, Equatable {
    public var retraction: MessageSemantics.Retraction?
    public var peerProgress: MessageSemantics.PeerProgress?
    public var unread: Bool

    public init(retraction: MessageSemantics.Retraction?, peerProgress: MessageSemantics.PeerProgress?, unread: Bool) {
        self.retraction = retraction
        self.peerProgress = peerProgress
        self.unread = unread
    }
}

/// Something a participant did to an earlier message, named by its id (see `SchemaV8`).
public struct MessageAnnotation: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// XEP-0444: the sender's whole new set of reactions (empty: all removed).
        case reactions([String])
        /// XEP-0424: the sender retracts their message.
        case retraction
        /// XEP-0425: the room removed the message (`moderator` as the room names them).
        case moderation(moderator: String?, reason: String?)
        /// XEP-0184 receipt or XEP-0333 `received` marker.
        case received
        /// XEP-0333 `displayed` (or `acknowledged`) marker: everything up to the target was seen.
        case displayed
    }

    /// The account's bare JID.
    public var account: String
    /// The conversation the target is in (bare JID, room JID, or room@service/nick for a MUC private chat).
    public var conversation: String
    public var kind: Kind
    /// The id the stanza names (see `SchemaV8`, "Finding the message meant").
    public var target: String
    /// Who did it, as on the stanza (full JID; `room@service/nick` in a room).
    public var from: String
    /// `.outgoing`: the user did it (from Roost or another client).
    public var direction: MessageDirection
    public var groupchat: Bool
    /// The sender's XEP-0421 id in a room.
    public var occupantId: String?
    /// How to show the reactor (nick, roster name).
    public var senderName: String?
    public var timestamp: Int64
    public var source: MessageSource
    /// The stanza's identity, so the same one seen live, as a carbon and from the archive counts once.
    public var messageId: String?
    public var stanzaId: String?
    /// `[archive] keep_retracted`: a retraction marks the message but keeps its text.
    public var keepRetractedText: Bool
    /// The archive's own key for it, when it comes from a jsonl export (else derived from the stanza).
    public var key: String? = nil

    public init(account: String, conversation: String, kind: Kind, target: String, from: String, direction: MessageDirection,
                groupchat: Bool = false, occupantId: String? = nil, senderName: String? = nil, timestamp: Int64,
                source: MessageSource = .live, messageId: String? = nil, stanzaId: String? = nil, keepRetractedText: Bool = false) {
        self.account = account
        self.conversation = conversation
        self.kind = kind
        self.target = target
        self.from = from
        self.direction = direction
        self.groupchat = groupchat
        self.occupantId = occupantId
        self.senderName = senderName
        self.timestamp = timestamp
        self.source = source
        self.messageId = messageId
        self.stanzaId = stanzaId
        self.keepRetractedText = keepRetractedText
    }

    /// Who reacted or retracted, as one key: the occupant id (or nick) in a room, the bare JID elsewhere.
    var actor: String {
        if groupchat { return occupantId.map { "occupant:\($0)" } ?? from }
        return JIDText.bare(from).lowercased()
    }

    /// The same update seen again (live, carbon, server archive) has the same key.
    var dedupKey: String {
        if let key { return key }
        let identity = messageId.map { "m|\($0)" } ?? stanzaId.map { "s|\($0)" } ?? "t|\(timestamp / 1000)"
        let what: String = switch kind {
        case .reactions(let emojis): "r|" + emojis.joined(separator: " ")
        case .retraction: "x"
        case .moderation: "mod"
        case .received: "rcv"
        case .displayed: "dsp"
        }
        return "\(conversation.lowercased())|\(actor)|\(target)|\(what)|\(identity)"
    }
}
