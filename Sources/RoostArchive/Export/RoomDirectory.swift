import RoostCore

/// What the archive knows of the accounts' rooms (schema v6), for the pages: a room's name (its bookmark's, else the
/// one its disco#info gives: schema v15), its
/// subject, and the nicks that are the user's there — the one Roost uses and the one the bookmark gives (what the
/// user's other clients use). One place decides, for the web view and `roost export --format html` alike, which
/// room messages are the user's own and which mention the user.
struct RoomDirectory {
    struct Room {
        var name: String?
        var subject: String?
        /// The nick Roost uses there (with its conflict suffix, if any).
        var nick: String?
        var bookmarkNick: String?
        var joined: Bool

        /// The user's nicks in the room.
        var ownNicks: [String] { [nick, bookmarkNick].compactMap { $0 } }

        /// The conversation header's room parts (escaped HTML): `room (joined as Alice)`, `subject “…”`.
        var headerDetails: [String] {
            var room = "room"
            if let nick { room += " (\(joined ? "joined" : "left") as \(HTMLText.name(nick)))" }
            return [room] + (subject.map { ["subject “\(HTMLText.name($0))”"] } ?? [])
        }
    }

    private var rooms: [SliceKey: Room] = [:]

    init() {}

    init(database: Database) throws(SQLiteError) {
        func text(_ value: String?) -> String? { value.flatMap { $0.isEmpty ? nil : $0 } }
        try database.cached("SELECT account_id, jid, coalesce(name, disco_name), subject, nick, bookmark_nick, joined FROM rooms").forEachRow { row in
            rooms[SliceKey(accountID: row.int(0), conversation: row.text(1).lowercased())] =
                Room(name: text(row.optionalText(2)), subject: text(row.optionalText(3)), nick: text(row.optionalText(4)),
                     bookmarkNick: text(row.optionalText(5)), joined: row.bool(6))
            return true
        }
    }

    func room(accountID: Int64, jid: String) -> Room? {
        rooms[SliceKey(accountID: accountID, jid: jid)]
    }
}
