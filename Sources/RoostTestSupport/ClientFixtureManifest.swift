import Foundation

// The real-client tier's ground truth and the manifest it writes beside each client's history: Tests/RoostClientTests
// writes them, Tests/RoostArchiveTests reads them as fixtures (contrib/scripts/make-client-fixtures). One definition
// for both, and one reader of an archive's message rows to compare them with.

/// One message of the scenario, as it was said: what the archive and every import must show.
public struct Said: Codable, Sendable, CustomStringConvertible {
    public var marker: String
    /// The peer's bare JID, the room's, or `room@service/nick` for a private message in the room.
    public var conversation: String
    /// chat | groupchat
    public var kind: String
    /// in | out, from the account's side.
    public var direction: String
    /// The sender's nick in the room (the user's own too).
    public var nick: String?
    /// The text shown now.
    public var body: String
    /// The first text of a corrected message.
    public var first: String?
    /// An OMEMO message: Roost reads it, a client without the keys keeps a placeholder.
    public var encrypted: Bool
    /// A shared file's link.
    public var file: Bool
    /// Said in the room before the client joined (it gets it as the room's history, or not at all).
    public var beforeJoin: Bool
    /// The server's time, as Roost archived it (milliseconds).
    public var timestamp: Int64

    public init(marker: String, conversation: String, kind: String, direction: String, nick: String? = nil, body: String,
                first: String? = nil, encrypted: Bool = false, file: Bool = false, beforeJoin: Bool = false, timestamp: Int64 = 0) {
        self.marker = marker
        self.conversation = conversation
        self.kind = kind
        self.direction = direction
        self.nick = nick
        self.body = body
        self.first = first
        self.encrypted = encrypted
        self.file = file
        self.beforeJoin = beforeJoin
        self.timestamp = timestamp
    }

    public var description: String {
        "\(direction) \(conversation)\(nick.map { " <\($0)>" } ?? "") \(body.prefix(60).debugDescription)\(first.map { " (first \($0.prefix(30).debugDescription))" } ?? "")"
    }
}

/// A message as an import of one client's history must give it.
public struct ExpectedRow: Codable, Sendable, CustomStringConvertible {
    public var conversation: String
    public var kind: String
    public var direction: String
    public var nick: String?
    /// nil: undecryptable (the client kept a placeholder, never imported as text).
    public var body: String?
    public var first: String?
    /// The server's time; the client's own stamp may differ by the manifest's tolerance.
    public var timestamp: Int64

    public init(conversation: String, kind: String, direction: String, nick: String?, body: String?, first: String?, timestamp: Int64) {
        self.conversation = conversation
        self.kind = kind
        self.direction = direction
        self.nick = nick
        self.body = body
        self.first = first
        self.timestamp = timestamp
    }

    public var description: String {
        "\(direction) \(conversation)\(nick.map { " <\($0)>" } ?? "") \((body ?? "(undecryptable)").prefix(60).debugDescription)"
            + (first.map { " (first \($0.prefix(30).debugDescription))" } ?? "") + " @\(timestamp)"
    }

    public func matches(_ row: ArchivedRow, tolerance: Int64) -> Bool {
        row.conversation.lowercased() == conversation.lowercased() && row.kind == kind && row.direction == direction
            && (kind != "groupchat" || row.nick == nick) && row.body == body && row.first == first
            && row.undecryptable == (body == nil) && abs(row.timestamp - timestamp) <= tolerance
    }
}

/// What a fixture folder holds: which client wrote it, in which zone, what was said and what an import must give.
public struct ClientFixtureManifest: Codable, Sendable {
    public var client: String
    public var version: String
    public var timeZone: String
    public var account: String
    public var room: String
    /// The path to import, relative to the fixture folder (the client's home).
    public var path: String
    public var importArguments: [String]
    public var said: [Said]
    public var expected: [ExpectedRow]
    public var tolerance: Int64
    public var generated: String

    public init(client: String, version: String, timeZone: String, account: String, room: String, path: String, importArguments: [String],
                said: [Said], expected: [ExpectedRow], tolerance: Int64, generated: String) {
        self.client = client
        self.version = version
        self.timeZone = timeZone
        self.account = account
        self.room = room
        self.path = path
        self.importArguments = importArguments
        self.said = said
        self.expected = expected
        self.tolerance = tolerance
        self.generated = generated
    }
}

/// A message row as an archive holds it (one row per message; a correction edits its row), read with the sqlite3 shell.
public struct ArchivedRow: Sendable, Equatable, CustomStringConvertible {
    public var conversation: String
    public var kind: String
    public var direction: String
    public var nick: String?
    public var body: String?
    /// The first text of an edited message.
    public var first: String?
    public var edited: Bool
    /// Why there is no text (`e2e_failure`), for a message that could not be decrypted.
    public var failure: String?
    public var timestamp: Int64
    public var source: String
    public var files: Int

    public var undecryptable: Bool { failure != nil }

    public var description: String {
        "\(direction) \(conversation)\(nick.map { " <\($0)>" } ?? "") \((body ?? "(no text)").prefix(60).debugDescription)"
            + (first.map { " (first \($0.prefix(30).debugDescription))" } ?? "") + (undecryptable ? " [undecryptable]" : "")
            + " @\(timestamp) \(source)"
    }

    public func matches(_ said: Said) -> Bool {
        conversation.lowercased() == said.conversation.lowercased() && kind == said.kind && direction == said.direction
            && (kind != "groupchat" || nick == said.nick) && body == said.body && edited == (said.first != nil) && first == said.first
    }

    /// Every message row of an archive (none when it does not exist).
    public static func read(_ archive: String) throws -> [ArchivedRow] {
        guard FileManager.default.fileExists(atPath: archive) else { return [] }
        return try sqliteJSON(archive, """
            SELECT conversation, type, direction, from_jid, body, edited, e2e_failure, timestamp, source,
                   (SELECT body FROM message_revisions r WHERE r.message_row = m.id ORDER BY revision LIMIT 1) AS first,
                   (SELECT count(*) FROM attachments a WHERE a.message_row = m.id) AS files
            FROM messages m ORDER BY timestamp, id
            """).map { row in
            let kind = row["type"] as? String ?? ""
            let from = row["from_jid"] as? String ?? ""
            let edited = (row["edited"] as? Int ?? 0) != 0
            return ArchivedRow(conversation: row["conversation"] as? String ?? "", kind: kind, direction: row["direction"] as? String ?? "",
                               nick: kind == "groupchat" ? from.firstIndex(of: "/").map { String(from[from.index(after: $0)...]) } : nil,
                               body: row["body"] as? String, first: edited ? row["first"] as? String : nil, edited: edited,
                               failure: row["e2e_failure"] as? String, timestamp: (row["timestamp"] as? NSNumber)?.int64Value ?? 0,
                               source: row["source"] as? String ?? "", files: row["files"] as? Int ?? 0)
        }
    }
}

/// Runs a query with the sqlite3 shell (read-only, waiting up to 5 s for a lock) and returns its rows as JSON objects;
/// a failed query throws with sqlite3's message.
public func sqliteJSON(_ database: String, _ sql: String) throws -> [[String: Any]] {
    let result = try RoostBinary.runProgram("/usr/bin/sqlite3", ["-readonly", "-json", "-cmd", ".timeout 5000", database, sql])
    guard result.status == 0 else { throw SQLiteQueryFailed(path: database, message: result.stderr) }
    let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { return [] }
    return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
}
