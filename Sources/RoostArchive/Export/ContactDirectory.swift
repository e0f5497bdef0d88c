import RoostCore

/// The contacts of the exported accounts, for names and avatars (vCard XML is left out: only jsonl needs
/// it, and reads it row by row), and the rooms they know (`RoomDirectory`): who is who on the pages.
struct ContactDirectory {
    private var contacts: [SliceKey: ContactRow] = [:]
    private(set) var rooms = RoomDirectory()
    /// Account id → bare JID.
    private var accounts: [Int64: String] = [:]
    /// The last title and sender's name looked up: a conversation's mails and lines ask for the same ones over and
    /// over (and the archive's reader hands the same String for a repeated JID, which compares at once).
    private let recent = Recent()

    private final class Recent {
        var title: (accountID: Int64, jid: String, title: String)?
        var sender: (accountID: Int64, from: String, name: String)?
    }

    static let columns = """
        c.account_id, c.jid, c.in_roster, c.name, c.groups, c.subscription, c.ask, c.roster_updated_at, c.nickname,
        c.fullname, c.photo_hash, c.photo_path, %RAW%, c.vcard_fetched_at
        """
    private static let columnsWithoutRaw = columns.replacingOccurrences(of: "%RAW%", with: "NULL")

    init() {}

    init(database: Database, selection: ExportSelection) throws(SQLiteError) {
        let (accountSQL, parameters) = selection.accountClause(column: "c.account_id")
        try self.init(database: database, accounts: selection.accounts, where: accountSQL, parameters)
    }

    /// Every contact of `accounts` (account id → bare JID), or those matching `where` on `contacts c`.
    init(database: Database, accounts: [Int64: String], where filter: String = "1", _ parameters: [SQLValue] = []) throws(SQLiteError) {
        self.accounts = accounts
        rooms = try RoomDirectory(database: database)
        // Prepared once per connection (the live mail mirror reads the contacts on every pass): `filter` is SQL of
        // the archive's own, never user text.
        try database.cached("SELECT \(Self.columnsWithoutRaw) FROM contacts c WHERE \(filter)").forEachRow(parameters) { row in
            let contact = Self.contact(row, accounts: accounts)
            contacts[SliceKey(accountID: row.int(0), conversation: contact.jid.lowercased())] = contact
            return true
        }
    }

    static func contact(_ row: Statement.Row, accounts: [Int64: String]) -> ContactRow {
        ContactRow(account: accounts[row.int(0)] ?? "", jid: row.text(1), inRoster: row.bool(2), name: row.optionalText(3),
                   groups: JSONGroups.decode(row.text(4)), subscription: row.optionalText(5), ask: row.optionalText(6),
                   rosterUpdatedAt: row.optionalInt(7), nickname: row.optionalText(8), fullName: row.optionalText(9),
                   photoHash: row.optionalText(10), photoPath: row.optionalText(11), vCardRaw: row.optionalText(12),
                   vCardFetchedAt: row.optionalInt(13))
    }

    func contact(accountID: Int64, jid: String) -> ContactRow? {
        contacts[SliceKey(accountID: accountID, jid: jid)]
    }

    /// The heading of a conversation: the contact's name, else the room's, else its address.
    func title(of slice: ConversationSlice) -> String {
        title(accountID: slice.accountID, jid: slice.conversation)
    }

    func title(accountID: Int64, jid: String) -> String {
        if let last = recent.title, last.accountID == accountID, last.jid == jid { return last.title }
        let title = contact(accountID: accountID, jid: jid)?.displayName ?? rooms.room(accountID: accountID, jid: jid)?.name ?? jid
        recent.title = (accountID, jid, title)
        return title
    }

    /// The user wrote this message: the archive stored it as sent by the account (from Roost or, in a room, any of
    /// the user's clients: see docs/rooms.md), or — a room message stored as received, e.g. imported from another
    /// client's log — it came from one of the user's nicks in that room.
    func isOwn(_ message: MessageRow, accountID: Int64) -> Bool {
        if message.direction == .outgoing { return true }
        guard message.kind == .groupchat, let nick = JIDText.resource(message.from), !nick.isEmpty,
              let room = rooms.room(accountID: accountID, jid: message.conversation) else { return false }
        return room.ownNicks.contains(nick)
    }

    /// A room message of someone else that names the user — one of the user's nicks there or the account's local
    /// part, as a whole word, case-insensitive (the rule of the agent's mention notifications, `Mention`). In a
    /// one-to-one chat every message is to the user: none is singled out.
    func mentionsUser(_ message: MessageRow, accountID: Int64) -> Bool {
        guard message.kind == .groupchat, let body = message.body, !body.isEmpty, !isOwn(message, accountID: accountID) else { return false }
        var names = rooms.room(accountID: accountID, jid: message.conversation)?.ownNicks ?? []
        if let account = accounts[accountID], let at = account.firstIndex(of: "@") { names.append(String(account[..<at])) }
        return Mention.containsAnyWord(of: names, in: body)
    }

    /// Who wrote a message, as people read it: "me" for the account's own messages, the nick in a room, the
    /// contact's name as it is now in a chat (roster name, nickname, full name), else the address — never the
    /// name stored with the message, so one contact has one name throughout (see `NameDirectory`).
    func sender(of message: MessageRow, accountID: Int64) -> String {
        if message.direction == .outgoing && message.kind != .groupchat { return "me" }
        if message.kind == .groupchat {
            if let nick = JIDText.resource(message.from), !nick.isEmpty { return nick }
            if let name = message.senderName, !name.isEmpty { return name }
        }
        // A private message in a room comes from an occupant, named by the nick (its bare JID is the room's).
        if message.conversation.utf8.contains(UInt8(ascii: "/")), let nick = JIDText.resource(message.from), !nick.isEmpty { return nick }
        if let last = recent.sender, last.accountID == accountID, last.from == message.from { return last.name }
        let bare = JIDText.bare(message.from)
        let name = contact(accountID: accountID, jid: bare)?.displayName ?? bare
        recent.sender = (accountID, message.from, name)
        return name
    }
}

/// The roster `groups` column holds a JSON array of strings; read it without Foundation's decoder.
enum JSONGroups {
    static func decode(_ text: String) -> [String] {
        guard case .array(let items)? = try? JSONParser.parse(Array(text.utf8)) else { return [] }
        return items.compactMap { if case .string(let name) = $0 { name } else { nil } }
    }
}
