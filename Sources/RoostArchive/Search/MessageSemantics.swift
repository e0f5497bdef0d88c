/// What others did to a stored message (schema v8): its current reactions, the message it answers, whether it
/// was retracted, how far the contact got with it, whether the user has read it.
public struct MessageSemantics: Sendable, Equatable {
    public struct Reaction: Sendable, Equatable {
        public var emoji: String
        /// The reactor's name (nick, roster name or JID).
        public var from: String
        /// The user reacted (from Roost or another client).
        public var own: Bool
    }

    public struct Reply: Sendable, Equatable {
        /// The id the reply names, and the author it claims.
        public var id: String
        public var author: String?
        /// The archived message answered, when Roost has it.
        public var messageRow: Int64?
        /// Its sender's name (a room nick, the name it came with, else the bare JID); nil when it is the user's.
        public var sender: String?
        /// Its text, nil when retracted or unknown.
        public var text: String?
        /// The message answered is the user's own: named `me`.
        public var own = false
    }

    public struct Retraction: Sendable, Equatable {
        /// The sender, or the room / its moderator for a moderation (as stored: a full JID).
        public var by: String
        public var at: Int64
        public var reason: String?
        /// The user retracted it (from Roost or another of their clients).
        public var own = false
        /// Retracted in a room: `by` is an occupant (`room@service/nick`) or the room.
        public var inRoom = false

        /// Who retracted it as people name them: `me`, an occupant's nick (the room for a moderation by the
        /// room), else the bare JID — never a resource.
        public var byName: String {
            if own { return "me" }
            guard let slash = by.firstIndex(of: "/") else { return by }
            return inRoom ? String(by[by.index(after: slash)...]) : String(by[..<slash])
        }
    }

    /// How far the contact's clients got with an outgoing message (XEP-0184 receipts, XEP-0333 markers).
    public enum PeerProgress: String, Sendable, Equatable {
        case delivered, read
    }

    /// Grouped by emoji, in the order they first appear.
    public var reactions: [Reaction] = []
    public var reply: Reply?
    public var retraction: Retraction?
    public var peerProgress: PeerProgress?
    /// Incoming and after the conversation's read mark.
    public var unread = false

    public init() {}

    /// `👍 bob, carol  ❤️ me`.
    public var reactionSummary: String? {
        guard !reactions.isEmpty else { return nil }
        var order: [String] = []
        var names: [String: [String]] = [:]
        for reaction in reactions {
            if names[reaction.emoji] == nil { order.append(reaction.emoji) }
            names[reaction.emoji, default: []].append(reaction.own ? "me" : reaction.from)
        }
        return order.map { "\($0) \(names[$0]!.joined(separator: ", "))" }.joined(separator: "  ")
    }

    /// `message retracted (by bob@example.org, at 2026-11-30 14:02: spam)`, with `time` formatting the instant.
    public func tombstone(time: (Int64) -> String) -> String? {
        retraction.map { "message retracted (by \($0.byName), at \(time($0.at))\($0.reason.map { ": \($0)" } ?? ""))" }
    }

    /// `↪ bob: the first line of what bob wrote…`, shown above a reply.
    public var replyContext: String? {
        guard let reply else { return nil }
        guard reply.messageRow != nil else { return "↪ (a message not in the archive)" }
        let who = reply.own ? "me" : reply.sender ?? reply.author ?? "?"
        guard let text = reply.text else { return "↪ \(who): (retracted)" }
        let line = text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        return "↪ \(who): " + (line.count > 60 ? line.prefix(59) + "…" : line)
    }

    /// ` ✓` delivered, ` ✓✓` read, else "".
    public var tick: String {
        switch peerProgress {
        case .delivered: " ✓"
        case .read: " ✓✓"
        case nil: ""
        }
    }

    /// The text a transcript shows for a message: the tombstone of a retracted one (with its text when kept), the
    /// context of a reply above it, its reactions below.
    public func decorate(_ text: String, time: (Int64) -> String) -> String {
        var text = text
        if let tombstone = tombstone(time: time) { text = retraction != nil && !text.isEmpty ? "[\(tombstone)] \(text)" : "[\(tombstone)]" }
        if let context = replyContext { text = context + "\n" + text }
        if let reactions = reactionSummary { text += "\n" + reactions }
        return text
    }
}

/// The columns that read `MessageSemantics`, appended to the message queries (`m` is the message row). The
/// receipt and unread marks come from `ReadMarks` (one `read_state` row per conversation, read once), not from
/// two subqueries per message.
enum MessageSemanticsReading {
    static let columnCount: Int32 = 8

    static let columns = columns(reactions: reactionsColumn)

    /// The reactions each reactor holds now, as JSON, of the message `m`.
    static let reactionsColumn = """
        (SELECT json_group_array(json_array(r.emojis, coalesce(r.reactor_name, r.reactor), r.direction, r.timestamp, r.id))
         FROM reactions r
         WHERE r.message_row = m.id AND NOT EXISTS (SELECT 1 FROM reactions n WHERE n.message_row = r.message_row AND n.reactor = r.reactor
             AND (n.timestamp > r.timestamp OR (n.timestamp = r.timestamp AND n.id > r.id))))
        """

    /// The columns with `reactions` as the first (NULL when the reader reads them itself, see `DecoratedRows`).
    static func columns(reactions: String) -> String {
        """
        \(reactions),
        m.reply_to, m.reply_to_jid,
        CASE WHEN m.reply_to IS NOT NULL THEN (SELECT json_array(t.id, coalesce(t.sender_name, CASE WHEN t.type = 'groupchat'
             THEN substr(t.from_jid, instr(t.from_jid, '/') + 1) ELSE t.from_bare END), t.body, t.direction = 'out')
         FROM messages t
         WHERE t.id = (SELECT max(id) FROM (
             SELECT id FROM messages INDEXED BY messages_account_message_id
                 WHERE account_id = m.account_id AND conversation = m.conversation AND message_id = m.reply_to
             UNION ALL
             SELECT id FROM messages INDEXED BY messages_origin
                 WHERE account_id = m.account_id AND origin_id = m.reply_to AND conversation = m.conversation
             UNION ALL
             SELECT id FROM messages INDEXED BY messages_stanza_id
                 WHERE conversation = m.conversation AND stanza_id = m.reply_to AND account_id = m.account_id) WHERE id != m.id)) END,
        \(retractedColumn), m.retracted_by, m.retracted_at, m.retraction_reason
        """
    }

    /// 0 not retracted; else 1, plus 2 when the user retracted it (the sender of an outgoing message: in a room the
    /// same occupant, elsewhere the same bare JID), plus 4 in a room.
    static let retractedColumn = """
        (CASE WHEN m.retracted = 0 THEN 0 ELSE 1
            + CASE WHEN m.direction = 'out' AND CASE WHEN m.type = 'groupchat' THEN m.retracted_by = m.from_jid
                ELSE lower(substr(m.retracted_by, 1, instr(m.retracted_by || '/', '/') - 1)) = lower(m.from_bare) END THEN 2 ELSE 0 END
            + CASE WHEN m.type = 'groupchat' THEN 4 ELSE 0 END END)
        """

    /// Whether `m` is incoming, not retracted, and after its conversation's read mark (also the `is:unread` filter).
    static let unreadExpression = """
        (m.direction = 'in' AND m.retracted = 0 AND m.id > coalesce((SELECT s.read_row FROM read_state s
            WHERE s.account_id = m.account_id AND s.conversation = m.conversation), 0))
        """

    /// `marks`: the read marks of the message's conversation; `id` and `incoming` are the message's.
    /// `reactions`: the reactions column's JSON when the reader read it apart (else the row's column).
    static func semantics(_ row: Statement.Row, at column: Int32, marks: ReadMarks.Marks?, id: Int64, incoming: Bool,
                          reactions: String? = nil) -> MessageSemantics {
        var semantics = MessageSemantics()
        if let json = reactions ?? row.optionalText(column), json != "[]", case .array(let items)? = try? JSONParser.parse(Array(json.utf8)) {
            // Each reactor's current set, in the order they were made (SQLite's aggregate order is not defined).
            var sets: [(at: Int64, id: Int64, reactions: [MessageSemantics.Reaction])] = []
            for item in items {
                guard case .array(let fields) = item, fields.count == 5, case .string(let emojis) = fields[0],
                      case .string(let from) = fields[1], case .integer(let at) = fields[3], case .integer(let id) = fields[4],
                      case .array(let list)? = try? JSONParser.parse(Array(emojis.utf8)) else { continue }
                let own: Bool = if case .string("out") = fields[2] { true } else { false }
                var reactions: [MessageSemantics.Reaction] = []
                for case .string(let emoji) in list { reactions.append(.init(emoji: emoji, from: from, own: own)) }
                sets.append((at, id, reactions))
            }
            semantics.reactions = sets.sorted { ($0.at, $0.id) < ($1.at, $1.id) }.flatMap(\.reactions)
        }
        if let id = row.optionalText(column + 1) {
            var reply = MessageSemantics.Reply(id: id, author: row.optionalText(column + 2))
            if let json = row.optionalText(column + 3), case .array(let fields)? = try? JSONParser.parse(Array(json.utf8)), fields.count == 4 {
                if case .integer(let target) = fields[0] { reply.messageRow = target }
                if case .string(let sender) = fields[1] { reply.sender = sender }
                if case .string(let text) = fields[2] { reply.text = text }
                if case .integer(let own) = fields[3] { reply.own = own != 0 }
            }
            semantics.reply = reply
        }
        let retracted = row.int(column + 4)
        if retracted != 0 {
            semantics.retraction = .init(by: row.optionalText(column + 5) ?? "?", at: row.optionalInt(column + 6) ?? 0,
                                         reason: row.optionalText(column + 7), own: retracted & 2 != 0, inRoom: retracted & 4 != 0)
        }
        if incoming {
            semantics.unread = semantics.retraction == nil && id > (marks?.read ?? 0)
        } else if let marks {
            semantics.peerProgress = marks.displayed >= id ? .read : marks.received >= id ? .delivered : nil
        }
        return semantics
    }
}

/// Every conversation's read marks (`read_state`, one row per conversation; SchemaV8), read once per query: a
/// message's receipt ticks and unread state compare its id with them.
final class ReadMarks {
    struct Marks {
        /// The last message read here, and the last the peer confirmed as received and as displayed.
        var read: Int64
        var received: Int64
        var displayed: Int64
    }

    private var marks: [Key: Marks] = [:]
    /// The last conversation asked about and its answer: a transcript asks about one conversation only.
    private var last: (account: Int64, conversation: String, marks: Marks?)?

    private struct Key: Hashable {
        let account: Int64
        /// ASCII-lowercased, as the column's `COLLATE NOCASE` compares.
        let conversation: [UInt8]

        init(_ account: Int64, _ conversation: String) {
            self.account = account
            self.conversation = conversation.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        }
    }

    init(_ database: Database) throws(SQLiteError) {
        guard try database.cached("SELECT 1 FROM sqlite_master WHERE name = 'read_state'").scalarInt() != nil else { return }
        try database.cached("SELECT account_id, conversation, read_row, peer_received_row, peer_displayed_row FROM read_state")
            .forEachRow { row in
                marks[Key(row.int(0), row.text(1))] = Marks(read: row.int(2), received: row.int(3), displayed: row.int(4))
                return true
            }
    }

    /// No conversation has marks (`read_state` is empty, or older than its schema).
    var isEmpty: Bool { marks.isEmpty }

    func of(account: Int64, conversation: String) -> Marks? {
        if marks.isEmpty { return nil }
        if let last, last.account == account, last.conversation == conversation { return last.marks }
        let found = marks[Key(account, conversation)]
        last = (account, conversation, found)
        return found
    }
}
