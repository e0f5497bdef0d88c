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
@Suite("Real clients: Profanity, Finch, poezio and Gajim", .serialized, .requires(.server, .tool("/usr/bin/tmux"), .tool("/usr/bin/profanity"),
                                                                       .tool("/usr/bin/finch"), .tool("/usr/bin/poezio"),
                                                                       .tool("/usr/bin/gajim"), .tool("/usr/bin/Xvfb"),
                                                                       .tool("/usr/bin/xdotool"), .tool("/usr/bin/setpriv"),
                                                                       .tool("/usr/bin/gdbus"), .tool("/usr/bin/dbus-daemon")))
struct RealClientsTier {
    static let tools = ["/usr/bin/tmux", "/usr/bin/profanity", "/usr/bin/finch", "/usr/bin/poezio", "/usr/bin/gajim", "/usr/bin/Xvfb",
                        "/usr/bin/xdotool", "/usr/bin/setpriv", "/usr/bin/gdbus", "/usr/bin/dbus-daemon", "/usr/bin/sqlite3"]

    @Test("Profanity 0.13.1", .timeLimit(.minutes(10)))
    func profanity() async throws {
        try await Scenario.run(client: "profanity", timeZone: "Asia/Tokyo")
    }

    @Test("Finch 2.14.12 (libpurple)", .timeLimit(.minutes(10)))
    func finch() async throws {
        try await Scenario.run(client: "finch", timeZone: "America/New_York")
    }

    @Test("poezio 0.14", .timeLimit(.minutes(10)))
    func poezio() async throws {
        try await Scenario.run(client: "poezio", timeZone: "Europe/Berlin")
    }

    @Test("Gajim 1.7.3 under Xvfb", .timeLimit(.minutes(10)))
    func gajim() async throws {
        try await Scenario.run(client: "gajim", timeZone: "Asia/Tokyo")
    }
}
