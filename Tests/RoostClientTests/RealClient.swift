import Foundation
import RoostTestSupport

/// The account a real client logs into: the one Roost archives, as one more resource of it.
struct ClientAccount: Sendable {
    let jid: String
    let password: String
    let domain: String
    let host: String
    let port: UInt16
    /// The test CA and the server's certificate (finch and Gajim trust a certificate, not a CA).
    let caFile: String
    var serverCertificate: String { (caFile as NSString).deletingLastPathComponent + "/server.crt" }
    var localPart: String { String(jid.prefix { $0 != "@" }) }
}

/// What a client can do, beyond sending and receiving text in chats and rooms.
struct ClientAbilities: OptionSet, Sendable {
    let rawValue: Int
    /// XEP-0308 corrections of its own last message, in chats and rooms.
    static let correct = ClientAbilities(rawValue: 1)
    /// Messages with line breaks from its input.
    static let multiLine = ClientAbilities(rawValue: 2)
    /// Sending a file (XEP-0363 upload).
    static let sendFile = ClientAbilities(rawValue: 4)
    /// Keeps the corrections it receives and sends as corrections (not as second messages) in its history.
    static let keepsCorrections = ClientAbilities(rawValue: 8)
}

/// One real client (Profanity, Finch, poezio, Gajim) as the user would drive it.
protocol RealClient: AnyObject, Sendable {
    var name: String { get }
    /// The version the tier was written against (the Debian 12 package).
    var version: String { get }
    var machine: ClientMachine { get }
    var abilities: ClientAbilities { get }
    /// What `roost import` is given: the client's data folder as a user would name it.
    var historyPath: String { get }
    /// The resource the client logs in with (poezio adds a random suffix to it).
    var resource: String { get }
    /// What the import needs told that the client's history does not say (`--me NICK` for room nicks).
    var importArguments: [String] { get }

    func start() async throws
    func joinRoom(_ room: String, nick: String) async throws
    func sendChat(to peer: String, _ text: String) async throws
    /// Corrects the last message sent there (`old`) to `text`.
    func correctChat(to peer: String, from old: String, _ text: String) async throws
    func sendRoom(_ room: String, _ text: String) async throws
    func correctRoom(_ room: String, from old: String, _ text: String) async throws
    func sendPrivate(room: String, nick: String, _ text: String) async throws
    func sendFile(to peer: String, path: String) async throws
    /// Waits until the client's history on disk (or its screen, where the history is written late) holds `marker`.
    func waitForHistory(_ marker: String) async throws
    /// Quits the way a user does, so everything is written.
    func quit() async throws
    /// Diagnostics for a failure: the screen, the client's log.
    func describe() -> String
}

extension RealClient {
    func correctChat(to peer: String, from old: String, _ text: String) async throws { throw ClientFailure("\(name) cannot correct") }
    func correctRoom(_ room: String, from old: String, _ text: String) async throws { throw ClientFailure("\(name) cannot correct") }
    func sendFile(to peer: String, path: String) async throws { throw ClientFailure("\(name) cannot send files") }
    var importArguments: [String] { [] }
}

/// Polls a file's text (a client's log) for `marker`.
func fileTree(_ root: String, contains marker: String) -> Bool {
    guard let walker = FileManager.default.enumerator(atPath: root) else { return false }
    for case let relative as String in walker {
        let path = root + "/" + relative
        var folder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &folder), !folder.boolValue else { continue }
        if let text = try? String(contentsOfFile: path, encoding: .utf8), text.contains(marker) { return true }
    }
    return false
}

// MARK: - Clients in a terminal

/// What Profanity, poezio and Finch share: a home, the account, and the tmux terminal they run in.
class TerminalClient: @unchecked Sendable {
    let machine: ClientMachine
    let account: ClientAccount
    let socket: String
    var terminal: Terminal?
    /// The nick the client joined the room with.
    var roomNick = ""

    init(machine: ClientMachine, account: ClientAccount, socket: String) {
        self.machine = machine
        self.account = account
        self.socket = socket
    }

    var tty: Terminal {
        get throws {
            guard let terminal else { throw ClientFailure("\(type(of: self)) is not running") }
            return terminal
        }
    }

    /// Waits until the client has left its terminal (its exit status written there), then ends the terminal.
    func waitForExit(_ name: String) async throws {
        try await waitUntil("\(name) to quit", timeout: .seconds(30), detail: { self.terminal?.describe() ?? "" }) {
            self.terminal?.exitNote != nil
        }
        terminal?.stop()
    }

    func describeTerminal(_ name: String) -> String { name + " " + (terminal?.describe() ?? "(not started)") }
}

// MARK: - Profanity

/// Profanity 0.13.1 in tmux: commands typed (`/msg`, `/correct`, `/join`, `/sendfile`, `/editor`), the account
/// preset in its `accounts` file with `tls.policy=trust` (the test CA is not the system's), chat and room text logs
/// on (`/logging chat on`, `/logging group on`) beside its `chatlog.db`, as the issue's user had them.
final class ProfanityClient: TerminalClient, RealClient, @unchecked Sendable {
    let name = "profanity"
    let version = "0.13.1"
    let resource = "profanity"
    let abilities: ClientAbilities = [.correct, .multiLine, .sendFile, .keepsCorrections]

    var historyPath: String { machine.home + "/.local/share/profanity" }

    private var database: String {
        historyPath + "/database/" + account.jid.replacingOccurrences(of: "@", with: "_at_") + "/chatlog.db"
    }

    func start() async throws {
        try machine.write(".local/share/profanity/accounts", """
            [\(account.jid)]
            enabled=true
            jid=\(account.jid)
            resource=profanity
            password=\(account.password)
            server=\(account.host)
            port=\(account.port)
            tls.policy=trust

            """)
        try machine.write(".config/profanity/profrc", """
            [logging]
            chlog=true
            grlog=true

            """)
        // `/editor` runs this with the file to edit: it puts the prepared text there (a multi-line message).
        try machine.write("editor.sh", "#!/bin/sh\ncat \"$HOME/next-message.txt\" > \"$1\"\n", mode: 0o755)
        try machine.handOver()
        let terminal = try Terminal(socket: socket, command: machine.command("/usr/bin/profanity", ["-a", account.jid]))
        self.terminal = terminal
        try await terminal.waitForScreen("logged in successfully")
        try terminal.enter("/executable editor set \(machine.home)/editor.sh")
        try await terminal.waitForScreen("editor")
    }

    func joinRoom(_ room: String, nick: String) async throws {
        try tty.enter("/join \(room) nick \(nick)")
    }

    /// `/msg JID` in a room's window is a private message to a nick: chats are opened from the console (window 1).
    private func openChat(_ peer: String) throws {
        try tty.enter("/win 1")
        try tty.enter("/msg \(peer)")
    }

    func sendChat(to peer: String, _ text: String) async throws {
        if text.contains("\n") {
            // The input line is one line: a message with line breaks is written in the editor (`/editor`).
            try openChat(peer)
            try machine.write("next-message.txt", text, mode: 0o644)
            try tty.enter("/editor")
            let start = String(text.prefix { $0 != "\n" }.prefix(12))
            try await waitUntil("profanity's input to hold the edited text", timeout: .seconds(20), detail: { self.describe() }) {
                try self.tty.screen().split(separator: "\n").last.map { $0.contains(start) } ?? false
            }
            try tty.press("Enter")
        } else {
            try openChat(peer)
            try tty.enter(text)
        }
    }

    func correctChat(to peer: String, from old: String, _ text: String) async throws {
        try openChat(peer)
        try tty.enter("/correct \(text)")
    }

    func sendRoom(_ room: String, _ text: String) async throws {
        try tty.enter("/win \(room)")
        try tty.enter(text)
    }

    func correctRoom(_ room: String, from old: String, _ text: String) async throws {
        try tty.enter("/win \(room)")
        try tty.enter("/correct \(text)")
    }

    func sendPrivate(room: String, nick: String, _ text: String) async throws {
        try tty.enter("/win \(room)")
        try tty.enter("/msg \(nick) \(text)")
    }

    func sendFile(to peer: String, path: String) async throws {
        try openChat(peer)
        try tty.enter("/sendfile \(path)")
    }

    func waitForHistory(_ marker: String) async throws {
        let database = self.database
        try await waitUntil("profanity to log \(marker)", timeout: .seconds(120), detail: { self.describe() }) {
            let count = try? ArchiveCount.sqlite(database, "SELECT count(*) FROM ChatLogs WHERE message LIKE '%\(marker)%'")
            return Int(count?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0 > 0
        }
    }

    func quit() async throws {
        try tty.enter("/quit")
        try await waitForExit(name)
    }

    func describe() -> String { describeTerminal("profanity") }
}

// MARK: - poezio

/// poezio 0.14 in tmux: `/message`, `/correct`, `/join`, `/query` typed; Ctrl-J puts a line break in the input.
/// Its logs (`~/.local/share/poezio/logs/JID`) are its whole history.
final class PoezioClient: TerminalClient, RealClient, @unchecked Sendable {
    let name = "poezio"
    let version = "0.14"
    let resource = "poezio"
    let abilities: ClientAbilities = [.correct, .multiLine]

    var historyPath: String { machine.home + "/.local/share/poezio" }

    func start() async throws {
        let ca = try machine.write("ca.crt", try Data(contentsOf: URL(fileURLWithPath: account.caFile)), mode: 0o644)
        try machine.write(".config/poezio/poezio.cfg", """
            [Poezio]
            jid = \(account.jid)
            password = \(account.password)
            custom_host = \(account.host)
            custom_port = \(account.port)
            ca_cert_path = \(ca)
            resource = poezio

            """)
        try machine.handOver()
        let terminal = try Terminal(socket: socket, command: machine.command("/usr/bin/poezio", []))
        self.terminal = terminal
        try await terminal.waitForScreen("Your JID is")
    }

    /// Types `text`, waits until the input line shows its end, then presses Enter alone. poezio reads what the terminal
    /// has in one go and takes a batch ending in Enter as pasted text, dropping that Enter (keyboard.py), so the Enter
    /// must arrive after the text was read.
    private func typeThenEnter(_ text: String) async throws {
        let lines = text.components(separatedBy: "\n")
        for (index, line) in lines.enumerated() {
            if index > 0 { try tty.press("C-j") }
            if !line.isEmpty { try tty.type(line) }
        }
        let tail = String(lines.last?.suffix(6) ?? "")
        try await waitUntil("poezio's input to show \(tail.debugDescription)", timeout: .seconds(20), detail: { self.describe() }) {
            try self.tty.screen().split(separator: "\n").last.map { $0.contains(tail) } ?? false
        }
        try tty.press("Enter")
        try await waitUntil("poezio to take the line", timeout: .seconds(20), detail: { self.describe() }) {
            try !(self.tty.screen().split(separator: "\n").last.map { $0.contains(tail) } ?? false)
        }
    }

    /// A command: the roster tab takes `/` as a key of its own (it opens the command line), so it goes first.
    private func command(_ line: String) async throws {
        try tty.type("/")
        try await waitUntil("poezio's command line", timeout: .seconds(20), detail: { self.describe() }) {
            try self.tty.screen().split(separator: "\n").last.map { $0.contains("/") && !$0.contains("Enter commands with") } ?? false
        }
        try await typeThenEnter(String(line.dropFirst()))
    }

    func joinRoom(_ room: String, nick: String) async throws {
        roomNick = nick
        try await command("/join \(room)/\(nick)")
    }

    /// `/join` of a room poezio is in brings its tab to the front (`/win NAME` may pick a private tab of the room).
    private func focusRoom(_ room: String) async throws {
        try await command("/join \(room)/\(roomNick)")
    }

    func sendChat(to peer: String, _ text: String) async throws {
        try await command("/message \(peer)")
        try await typeThenEnter(text)
    }

    func correctChat(to peer: String, from old: String, _ text: String) async throws {
        try await command("/message \(peer)")
        try await command("/correct \(text)")
    }

    func sendRoom(_ room: String, _ text: String) async throws {
        try await focusRoom(room)
        try await typeThenEnter(text)
    }

    func correctRoom(_ room: String, from old: String, _ text: String) async throws {
        try await focusRoom(room)
        try await command("/correct \(text)")
    }

    func sendPrivate(room: String, nick: String, _ text: String) async throws {
        try await focusRoom(room)
        try await command("/query \(nick) \(text)")
    }

    func waitForHistory(_ marker: String) async throws {
        let logs = historyPath + "/logs"
        try await waitUntil("poezio to log \(marker)", timeout: .seconds(120), detail: { self.describe() }) { fileTree(logs, contains: marker) }
    }

    func quit() async throws {
        try await command("/quit")
        try await waitForExit(name)
    }

    func describe() -> String { describeTerminal("poezio") }
}

// MARK: - A private session bus and X server for one client

/// A D-Bus session bus of the client's own (run as the client user), so a client's remote control and its
/// well-known name never meet another test's.
final class ClientBus: @unchecked Sendable {
    let address: String
    private let daemon: RunningRoost

    init(machine: ClientMachine) async throws {
        let path = machine.home + "/.run/bus"
        address = "unix:path=" + path
        let line = machine.command("/usr/bin/dbus-daemon", ["--session", "--nofork", "--address=\(address)"])
        daemon = try RoostBinary.startProgram(line[0], Array(line.dropFirst()))
        try await waitUntil("the client's D-Bus session bus", timeout: .seconds(20), detail: { self.daemon.stderrSoFar }) {
            FileManager.default.fileExists(atPath: path)
        }
    }

    func stop() { daemon.stop(signal: SIGTERM, timeout: 5) }
}

/// Xvfb for a GTK client, run as the client user, on the display number it picks itself (`-displayfd`).
final class VirtualDisplay: @unchecked Sendable {
    private(set) var display = ""
    private let server: RunningRoost

    init(machine: ClientMachine) async throws {
        let note = machine.home + "/.run/display"
        // -displayfd writes the number it chose on a descriptor: the shell sends it to a file the test reads.
        let script = "exec /usr/bin/Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp 3>\"$HOME/.run/display\""
        let line = machine.command("/bin/sh", ["-c", script])
        server = try RoostBinary.startProgram(line[0], Array(line.dropFirst()))
        var number = ""
        try await waitUntil("Xvfb to pick a display", timeout: .seconds(20), detail: { self.server.stderrSoFar }) {
            number = ((try? String(contentsOfFile: note, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            return !number.isEmpty
        }
        display = ":" + number
    }

    func stop() { server.stop(signal: SIGTERM, timeout: 5) }
}

// MARK: - Finch

/// Finch 2.14.12 (libpurple) in tmux. Text is typed into its conversation windows; what gnt offers no key for is
/// done through libpurple's own D-Bus interface (`im.pidgin.purple.PurpleService`, on a bus of its own): bringing
/// a conversation's window to the front, the log format, quitting. The account is preset in `accounts.xml`, the
/// server's certificate in libpurple's TLS peer cache (it names the host it connects to, 127.0.0.1). Finch writes
/// HTML logs (the default); the room is logged as plain text (the format is switched before joining it and back
/// after), so both of libpurple's formats are in one history.
final class FinchClient: TerminalClient, RealClient, @unchecked Sendable {
    let name = "finch"
    let version = "2.14.12"
    let resource = "finch"
    let abilities: ClientAbilities = []
    private var bus: ClientBus?

    /// The folder a user sees (issue 28: `~/.purple/logs` was not recognised).
    var historyPath: String { machine.home + "/.purple/logs" }

    func start() async throws {
        try machine.write(".purple/accounts.xml", """
            <?xml version='1.0' encoding='UTF-8' ?>
            <account version='1.0'>
             <account>
              <protocol>prpl-jabber</protocol>
              <name>\(account.jid)/finch</name>
              <password>\(account.password)</password>
              <settings>
               <setting name='connect_server' type='string'>\(account.host)</setting>
               <setting name='port' type='int'>\(account.port)</setting>
               <setting name='connection_security' type='string'>require_tls</setting>
              </settings>
              <settings ui='gnt-purple'>
               <setting name='auto-login' type='bool'>1</setting>
              </settings>
             </account>
            </account>

            """)
        try machine.write(".purple/certificates/x509/tls_peers/\(account.host)",
                          try Data(contentsOf: URL(fileURLWithPath: account.serverCertificate)), mode: 0o644)
        try machine.handOver()
        let bus = try await ClientBus(machine: machine)
        self.bus = bus
        let terminal = try Terminal(socket: socket, command: machine.command("/usr/bin/finch", [],
                                                                            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]))
        self.terminal = terminal
        // Online: a connection in state PURPLE_CONNECTED (1; 2 is still connecting — a room joined then is dropped).
        try await waitUntil("finch online", timeout: .seconds(120), detail: { self.describe() }) {
            guard (try? self.purple("PurpleAccountsGetAllActive").contains("[")) == true,
                  let connections = try? self.purple("PurpleConnectionsGetAll") else { return false }
            return Self.numbers(connections).contains { id in
                (try? self.purple("PurpleConnectionGetState", id)).map { Self.numbers($0) == ["1"] } == true
            }
        }
    }

    /// Calls a function of libpurple's D-Bus interface (gdbus's text answer).
    @discardableResult
    private func purple(_ method: String, _ arguments: String...) throws -> String {
        guard let bus else { throw ClientFailure("finch has no bus") }
        let result = try machine.run("/usr/bin/gdbus", ["call", "--session", "--dest", "im.pidgin.purple.PurpleService",
                                                        "--object-path", "/im/pidgin/purple/PurpleObject",
                                                        "--method", "im.pidgin.purple.PurpleInterface.\(method)"] + arguments,
                                     environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        guard result.status == 0 else { throw ClientFailure("finch D-Bus \(method): \(result.stderr)") }
        return result.stdout
    }

    private static func numbers(_ text: String) -> [String] {
        text.split(whereSeparator: { !$0.isNumber }).map(String.init)
    }

    /// Brings the window whose title starts with `name` (a conversation: the peer's JID, the room's) to the front: Alt+N
    /// steps through finch's windows, and the one in front has its title on the screen's first line. (libpurple's
    /// PurpleConversationPresent over D-Bus does not move finch's focus.)
    private func present(_ name: String) async throws {
        for _ in 0..<12 {
            let top = try tty.screen().split(separator: "\n", omittingEmptySubsequences: false).first ?? ""
            if top.contains(name) { return }
            try tty.press("M-n")
            try await waitUntil("finch to switch windows", timeout: .seconds(10), detail: { self.describe() }) {
                try (self.tty.screen().split(separator: "\n", omittingEmptySubsequences: false).first ?? "") != top
            }
        }
        throw ClientFailure("finch has no window for \(name): \(describe())")
    }

    func joinRoom(_ room: String, nick: String) async throws {
        roomNick = nick
        // Logged as plain text; the format is read when the room's log is opened, at the join.
        try purple("PurplePrefsSetString", "/purple/logging/format", "txt")
        let logs = historyPath
        // Twice at most: finch was seen back at its buddy list with no room window and no log 30 s after the dialog
        // was filled in (when "online" meant a connection that was still connecting). The second try says so in the
        // test's output; a second failure fails the test.
        for attempt in 1...2 {
            try tty.press("F10")
            try await tty.waitForScreen("Join Chat")
            try tty.press("j")
            try await tty.waitForScreen("Please enter the name of the chat")
            try tty.type("\(room)/\(nick)")
            try tty.press("Tab")
            try tty.press("Enter")
            do {
                try await waitUntil("finch's room log", timeout: .seconds(30), detail: {
                    "logs: \((FileManager.default.enumerator(atPath: logs)?.allObjects as? [String]) ?? [])\n" + self.describe()
                }) {
                    ((FileManager.default.enumerator(atPath: logs)?.allObjects as? [String]) ?? []).contains { $0.contains(".chat/") && $0.hasSuffix(".txt") }
                }
                break
            } catch where attempt == 1 {
                print("finch: no room log 30 s after the join dialog; joining again. \(describe())")
            }
        }
        try purple("PurplePrefsSetString", "/purple/logging/format", "html")
    }

    /// A chat's window is named after the full JID that wrote first: the peer's session (resource `peer`), not the
    /// other resources of the same account (an upload, an OMEMO device) that have windows of their own.
    func sendChat(to peer: String, _ text: String) async throws {
        try await present(peer + "/peer")
        try tty.enter(text)
    }

    /// The room's window is named `room/nick`; a private conversation's `room/their nick`.
    func sendRoom(_ room: String, _ text: String) async throws {
        try await present("\(room)/\(roomNick)")
        try tty.enter(text)
    }

    func sendPrivate(room: String, nick: String, _ text: String) async throws {
        try await present("\(room)/\(roomNick)")
        // The XMPP plugin's command in a room window: a private message to an occupant.
        try tty.enter("/msg \(nick) \(text)")
    }

    func waitForHistory(_ marker: String) async throws {
        let logs = historyPath
        try await waitUntil("finch to log \(marker)", timeout: .seconds(120), detail: { self.describe() }) { fileTree(logs, contains: marker) }
    }

    func quit() async throws {
        // libpurple's PurpleCoreQuit leaves finch hanging after it closed the screen; SIGTERM is finch's clean way out
        // (it closes every log, `</p></body></html>` included). Its process id comes from the bus it is on.
        guard let bus else { throw ClientFailure("finch has no bus") }
        let owner = try machine.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                                                       "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID",
                                                       "im.pidgin.purple.PurpleService"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        guard let pid = Self.numbers(owner.stdout).last.flatMap({ pid_t($0) }) else { throw ClientFailure("finch's process id: \(owner.stderr)") }
        kill(pid, SIGTERM)
        try await waitForExit(name)
        bus.stop()
    }

    func describe() -> String { describeTerminal("finch") }
}

// MARK: - Gajim

/// Gajim 1.7.3 under Xvfb. Its own D-Bus remote control (setting `remote_control`, `org.gajim.dbus.RemoteInterface`:
/// `send_chat_message`, `send_groupchat_message`, signals for what arrives) sends and hears messages; its GApplication
/// actions (`org.gtk.Actions`: `open-chat`, `quit`, and the main window's `correct-message`, what Ctrl+Up does) open a
/// chat, quit and put the last message in the input for a correction, which is then typed as a user types it (xdotool:
/// End, the added text, Return). The room is joined from the
/// account's bookmark (autojoin) at login. The account is preset in `settings.sqlite` (`use_keyring` off, the
/// password in it), the server's certificate in Gajim's `cert_store`.
final class GajimClient: RealClient, @unchecked Sendable {
    let name = "gajim"
    let version = "1.7.3"
    let resource = "gajim"
    let machine: ClientMachine
    let abilities: ClientAbilities = [.correct, .multiLine, .keepsCorrections]
    private let account: ClientAccount
    private var bus: ClientBus?
    private var display: VirtualDisplay?
    private var gajim: RunningRoost?
    private var monitor: RunningRoost?
    private let label = "alice"

    init(machine: ClientMachine, account: ClientAccount) {
        self.machine = machine
        self.account = account
    }

    var historyPath: String { machine.home + "/.local/share/gajim" }
    /// Gajim 1.7's history does not say which nick in a room is the user's.
    var importArguments: [String] { ["--me", "Alice"] }

    func start() async throws {
        let accountSettings: [String: Any] = [
            "name": account.localPart, "hostname": account.domain, "password": account.password, "resource": "gajim",
            "active": true, "use_custom_host": true, "custom_host": account.host, "custom_port": Int(account.port),
            "custom_type": "START TLS",
        ]
        let app: [String: Any] = ["remote_control": true, "use_keyring": false, "check_for_update": false,
                                  "show_help_start_chat": false]
        func json(_ object: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
                .replacingOccurrences(of: "'", with: "''")
        }
        // Gajim's settings database as Gajim 1.7 creates it (gajim/common/settings.py, user_version 5).
        let sql = """
            CREATE TABLE settings (name TEXT UNIQUE, settings TEXT);
            CREATE TABLE account_settings (account TEXT UNIQUE, settings TEXT);
            INSERT INTO settings VALUES ('app', '\(try json(app))'), ('soundevents', '{}'), ('status_presets', '{}'),
                ('proxies', '{}'), ('plugins', '{}'), ('workspaces', '\(try json([UUID().uuidString.lowercased(): [String: Any]()]))');
            INSERT INTO account_settings VALUES ('\(label)', '\(try json(["account": accountSettings, "contact": [String: Any](), "group_chat": [String: Any]()]))');
            PRAGMA user_version = 5;
            """
        try FileManager.default.createDirectory(atPath: machine.home + "/.config/gajim", withIntermediateDirectories: true)
        let created = try RoostBinary.runProgram("/usr/bin/sqlite3", [machine.home + "/.config/gajim/settings.sqlite", sql])
        guard created.status == 0 else { throw ClientFailure("Gajim's settings: \(created.stderr)") }
        try machine.write(".local/share/gajim/cert_store/test-server.pem",
                          try Data(contentsOf: URL(fileURLWithPath: account.serverCertificate)), mode: 0o644)
        try machine.handOver()
        let bus = try await ClientBus(machine: machine)
        self.bus = bus
        let display = try await VirtualDisplay(machine: machine)
        self.display = display
        let env = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "DISPLAY": display.display, "NO_AT_BRIDGE": "1"]
        // Line-buffered (its output is a file): each signal is in the log when it happens.
        let monitorLine = machine.command("/usr/bin/stdbuf", ["-oL", "/usr/bin/gdbus", "monitor", "--session", "--dest", "org.gajim.Gajim"],
                                          environment: env)
        let line = machine.command("/usr/bin/gajim", [], environment: env)
        gajim = try RoostBinary.startProgram(line[0], Array(line.dropFirst()))
        try await waitUntil("Gajim online", timeout: .seconds(180), detail: { self.describe() }) {
            (try? self.remote("get_status", self.label))?.contains("'online'") == true
        }
        let monitor = try RoostBinary.startProgram(monitorLine[0], Array(monitorLine.dropFirst()))
        self.monitor = monitor
        // Listening once it says whose signals it follows (what arrives before that is only in Gajim's database).
        try await waitUntil("gdbus monitor on Gajim's bus", timeout: .seconds(30), detail: { monitor.stderrSoFar }) {
            monitor.stderrSoFar.contains("is owned by")
        }
    }

    private var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": bus?.address ?? "", "DISPLAY": display?.display ?? ""]
    }

    /// A method of Gajim's remote control; gdbus's text answer.
    @discardableResult
    private func remote(_ method: String, _ arguments: String...) throws -> String {
        let result = try machine.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.gajim.Gajim", "--object-path",
                                                        "/org/gajim/dbus/RemoteObject", "--method",
                                                        "org.gajim.dbus.RemoteInterface.\(method)"] + arguments,
                                     environment: environment)
        guard result.status == 0 else { throw ClientFailure("Gajim remote \(method): \(result.stderr)") }
        return result.stdout
    }

    /// One of Gajim's GApplication actions, as a desktop launcher or `gapplication action` would activate it.
    private func action(_ name: String, _ parameter: String) throws {
        let result = try machine.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.gajim.Gajim", "--object-path",
                                                        "/org/gajim/Gajim", "--method", "org.gtk.Actions.Activate", name,
                                                        parameter, "{}"], environment: environment)
        guard result.status == 0 else { throw ClientFailure("Gajim action \(name): \(result.stderr)") }
    }

    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    private func xdotool(_ arguments: [String]) throws {
        let result = try machine.run("/usr/bin/xdotool", arguments, environment: environment)
        guard result.status == 0 else { throw ClientFailure("xdotool \(arguments.first ?? ""): \(result.stderr)") }
    }

    /// Opens the conversation in Gajim's main window (so its input has the keys and follows what is sent there).
    private func open(_ jid: String) async throws {
        // The action runs before the call is answered: the chat is the current one when this returns.
        try action("open-chat", "[<[\(Self.quoted(label)), \(Self.quoted(jid))]>]")
    }

    private func send(_ method: String, _ jid: String, _ text: String) async throws {
        // A room can still be joining when Gajim is online: the remote control says false until it has joined.
        try await waitUntil("Gajim to send to \(jid)", timeout: .seconds(120), detail: { self.describe() }) {
            try self.remote(method, jid, text, self.label).contains("true")
        }
    }

    func joinRoom(_ room: String, nick: String) async throws {
        // Joined from the bookmark at login; sending waits until the join is done.
    }

    func sendChat(to peer: String, _ text: String) async throws {
        try await open(peer)
        try await send("send_chat_message", peer, text)
    }

    /// The main window's "Correct…" (its `win.correct-message` action, what Ctrl+Up does; exported on the bus with the
    /// window) puts the last message sent in the input, in correction mode, and focuses it; the user adds to its end and
    /// sends it again. Only the added text is typed (xdotool types what a keyboard could: ASCII is sure, long Chinese
    /// text under load is not).
    private func correctLast(from old: String, _ text: String) async throws {
        guard text.hasPrefix(old) else { throw ClientFailure("Gajim's correction adds to the text: \(text.debugDescription)") }
        let found = try machine.run("/usr/bin/xdotool", ["search", "--onlyvisible", "--name", "^Gajim$"], environment: environment)
        guard let window = found.stdout.split(separator: "\n").last.map(String.init) else {
            throw ClientFailure("no Gajim window: \(found.stderr)")
        }
        try xdotool(["windowfocus", "--sync", window])
        let corrected = try machine.run("/usr/bin/gdbus", ["call", "--session", "--dest", "org.gajim.Gajim", "--object-path",
                                                           "/org/gajim/Gajim/window/1", "--method", "org.gtk.Actions.Activate",
                                                           "correct-message", "[]", "{}"], environment: environment)
        guard corrected.status == 0 else { throw ClientFailure("Gajim's correct-message: \(corrected.stderr)") }
        // X delivers the keys in order, after the action ran (the call returns once it has).
        try xdotool(["key", "--clearmodifiers", "ctrl+End"])
        try xdotool(["type", "--delay", "20", String(text.dropFirst(old.count))])
        try xdotool(["key", "--clearmodifiers", "Return"])
    }

    func correctChat(to peer: String, from old: String, _ text: String) async throws {
        try await open(peer)
        try await correctLast(from: old, text)
    }

    func sendRoom(_ room: String, _ text: String) async throws {
        // The room's chat is open when the message goes, so a correction (Ctrl+Up) finds it as the last one sent.
        try await open(room)
        try await send("send_groupchat_message", room, text)
    }

    func correctRoom(_ room: String, from old: String, _ text: String) async throws {
        try await open(room)
        try await correctLast(from: old, text)
    }

    func sendPrivate(room: String, nick: String, _ text: String) async throws {
        try await send("send_chat_message", "\(room)/\(nick)", text)
    }

    func waitForHistory(_ marker: String) async throws {
        // What Gajim received is heard on its bus (its remote control's signals) or found in its history once committed
        // (Gajim commits with a delay, some changes only with the next write or at quit).
        let database = historyPath + "/logs.db"
        try await waitUntil("Gajim to receive \(marker)", timeout: .seconds(120), detail: { self.describe() }) {
            if self.monitor?.stderrSoFar.contains(marker) == true { return true }
            let rows = try? sqliteJSON(database, "SELECT count(*) AS n FROM logs WHERE message LIKE '%\(marker.replacingOccurrences(of: "'", with: "''"))%'")
            return (rows?.first?["n"] as? Int ?? 0) > 0
        }
    }

    func quit() async throws {
        try action("quit", "[]")
        // With unread messages Gajim asks first ("You still have unread messages"): its "_Quit" button, as a user would.
        if gajim?.waitForExit(timeout: 5) != true {
            let found = try machine.run("/usr/bin/xdotool", ["search", "--name", "Unread Messages"], environment: environment)
            if let dialog = found.stdout.split(separator: "\n").last.map(String.init) {
                try xdotool(["windowfocus", "--sync", dialog])
                try xdotool(["key", "--clearmodifiers", "alt+q"])
            }
        }
        guard gajim?.waitForExit(timeout: 60) == true else { throw ClientFailure("Gajim did not quit: \(describe())") }
        monitor?.stop(signal: SIGTERM, timeout: 5)
        display?.stop()
        bus?.stop()
    }

    func describe() -> String { "Gajim log:\n\(gajim?.stderrSoFar.suffix(3000) ?? "(not started)")" }
}
