import Foundation
import Testing
import RoostTestSupport
import RoostXMPP

/// The real-client tier (issue 28): Profanity, Finch, poezio and Gajim — the Debian 12 packages users run — logged
/// into the account Roost archives, as one more resource of it, chatting with independent peers (slixmpp:
/// contrib/scripts/xmpp-peer.py; OMEMO: slixmpp-omemo) on the test Prosody. One scenario for all: chats, a room,
/// corrections, Chinese/emoji/markup, long and multi-line messages, private messages in the room, files where the
/// client can, an encrypted message the client cannot read, and a stretch while Roost is down. The test keeps what
/// was said (the ground truth) and checks:
///
/// 1. Roost archived each message exactly once, as said (text, direction, nick, edits), nothing more;
/// 2. importing the client's own history into a fresh archive, in three time zones, gives the same messages (text,
///    direction, nick, time within seconds of the server's, corrections, private messages, undecryptable ones
///    marked, never their placeholder as text), identical in every zone;
/// 3. importing it into the live archive adds nothing: everything is recognised as already archived.
///
/// With `ROOST_CLIENT_FIXTURES_OUT=FOLDER` each client's history and a manifest are written there:
/// contrib/scripts/make-client-fixtures keeps them as the importer unit tests' fixtures.
///
/// Clients run as an unprivileged user when the suite is root (Gajim and poezio refuse root). This suite is not an
/// "EndToEnd" one: it runs once, against Prosody, in the first pass of contrib/scripts/test.
@Suite("Real clients: Profanity, Finch, poezio and Gajim", .requires(.server, .tool("/usr/bin/tmux"), .tool("/usr/bin/profanity"),
                                                                       .tool("/usr/bin/finch"), .tool("/usr/bin/poezio"),
                                                                       .tool("/usr/bin/gajim"), .tool("/usr/bin/Xvfb"),
                                                                       .tool("/usr/bin/xdotool"), .tool("/usr/bin/setpriv"),
                                                                       .tool("/usr/bin/gdbus"), .tool("/usr/bin/dbus-daemon")))
struct RealClientsTier {
    static let tools = ["/usr/bin/tmux", "/usr/bin/profanity", "/usr/bin/finch", "/usr/bin/poezio", "/usr/bin/gajim", "/usr/bin/Xvfb",
                        "/usr/bin/xdotool", "/usr/bin/setpriv", "/usr/bin/gdbus", "/usr/bin/dbus-daemon", "/usr/bin/sqlite3"]

    @Test("Profanity 0.13.1", .timeLimit(.minutes(4)))
    func profanity() async throws {
        try await Scenario.run(client: "profanity", timeZone: "Asia/Tokyo")
    }

    @Test("Finch 2.14.12 (libpurple)", .timeLimit(.minutes(4)))
    func finch() async throws {
        try await Scenario.run(client: "finch", timeZone: "America/New_York")
    }

    @Test("poezio 0.14", .timeLimit(.minutes(4)))
    func poezio() async throws {
        try await Scenario.run(client: "poezio", timeZone: "Europe/Berlin")
    }

    @Test("Gajim 1.7.3 under Xvfb", .timeLimit(.minutes(4)))
    func gajim() async throws {
        try await Scenario.run(client: "gajim", timeZone: "Asia/Tokyo")
    }
}

/// One message of the scenario, as it was said: what the archive and every import must show.
struct Said: Codable, Sendable, CustomStringConvertible {
    var marker: String
    /// The peer's bare JID, the room's, or `room@service/nick` for a private message in the room.
    var conversation: String
    /// chat | groupchat
    var kind: String
    /// in | out, from the account's side.
    var direction: String
    /// The sender's nick in the room (the user's own too).
    var nick: String?
    /// The text shown now.
    var body: String
    /// The first text of a corrected message.
    var first: String?
    /// An OMEMO message: Roost reads it, a client without the keys keeps a placeholder.
    var encrypted = false
    /// A shared file's link.
    var file = false
    /// Said in the room before the client joined (it gets it as the room's history, or not at all).
    var beforeJoin = false
    /// The server's time, as Roost archived it (milliseconds).
    var timestamp: Int64 = 0

    var description: String {
        "\(direction) \(conversation)\(nick.map { " <\($0)>" } ?? "") \(body.prefix(60).debugDescription)\(first.map { " (first \($0.prefix(30).debugDescription))" } ?? "")"
    }
}

/// A message row as the archive holds it (one row per message; a correction edits its row).
struct ArchivedRow: Sendable, Equatable, CustomStringConvertible {
    var conversation: String
    var kind: String
    var direction: String
    var nick: String?
    var body: String?
    var first: String?
    var edited: Bool
    var undecryptable: Bool
    var timestamp: Int64
    var source: String
    var files: Int

    var description: String {
        "\(direction) \(conversation)\(nick.map { " <\($0)>" } ?? "") \((body ?? "(no text)").prefix(60).debugDescription)"
            + (first.map { " (first \($0.prefix(30).debugDescription))" } ?? "") + (undecryptable ? " [undecryptable]" : "")
            + " @\(timestamp) \(source)"
    }

    /// Every message row of an archive (sqlite3's JSON output).
    static func read(_ archive: String) throws -> [ArchivedRow] {
        guard FileManager.default.fileExists(atPath: archive) else { return [] }
        return try sqliteJSON(archive, """
            SELECT conversation, type, direction, from_jid, body, edited, e2e_failure IS NOT NULL AS undecryptable, timestamp, source,
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
                               undecryptable: (row["undecryptable"] as? Int ?? 0) != 0,
                               timestamp: (row["timestamp"] as? NSNumber)?.int64Value ?? 0, source: row["source"] as? String ?? "",
                               files: row["files"] as? Int ?? 0)
        }
    }
}

/// Runs a query with the sqlite3 shell (read-only) and returns its rows as JSON objects.
func sqliteJSON(_ database: String, _ sql: String) throws -> [[String: Any]] {
    let result = try RoostBinary.runProgram("/usr/bin/sqlite3", ["-readonly", "-json", "-cmd", ".timeout 5000", database, sql])
    guard result.status == 0 else { throw ClientFailure("sqlite3 \(database): \(result.stderr)") }
    let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { return [] }
    return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]] ?? []
}
