import Foundation
import Testing
import RoostArchive
import RoostTestSupport
@testable import roost

/// Issue 17 from the command line, against an archive a person uses daily (`EverydayFixture`): every
/// numbered item that needs no server. Items that do are in `EverydayEndToEndTests`.
@Suite("Everyday use: the command line")
struct EverydayCLITests {
    // 1. A query word starting with `-` is a query term.
    @Test func dashWordsAreQueryTerms() throws {
        let fixture = try EverydayFixture()
        let search = try fixture.roost(["search", "trav*", "-spam", "is:in", "after:7d", "--rank"])
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.stdout.contains("travel offer") && !search.stdout.contains("spam"), "\(search.stdout)")
        #expect(try fixture.roost(["count", "trav*", "-spam"]).stdout == "2\n")
        // A defined short option is still an option; an undefined long one is still an error.
        #expect(try fixture.roost(["search", "-n1", "travel"]).lines.count == 1)
        #expect(try fixture.roost(["search", "--spam"]).status == 2)
        #expect(try fixture.roost(["log", "bob", "-x"]).status == 2, "commands without a query keep their strict options")
    }

    // 4, 5, 6. Names now, the same everywhere; names and JID prefixes in filters and commands; ambiguity
    // is an error listing the candidates; several accounts are shown and kept apart.
    @Test func namesAccountsAndAmbiguity() throws {
        let fixture = try EverydayFixture()
        let search = try fixture.roost(["search", "with:bob@example.org", "--account", "me@example.org", "--limit", "0"])
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.lines.count == 5)
        #expect(search.lines.allSatisfy { $0.contains(" Bob → me: ") || $0.contains(" me → Bob: ") }, "one name for bob, whatever was stored: \(search.stdout)")
        #expect(!search.stdout.contains("Bobby B") && !search.stdout.contains("[me@example.org]"))
        let both = try fixture.roost(["search", "travel"])
        #expect(both.stdout.contains("[work@example.net] bob@example.org → me: ") && both.stdout.contains("[me@example.org] Bob → me: "), "\(both.stdout)")
        #expect(try fixture.roost(["search", "with:Bobby", "--account", "me@example.org"]).lines.count == 5, "the vCard nickname")
        #expect(try fixture.roost(["search", "with:wa", "--json"]).jsonLines.first?["conversation_name"] as? String == "wang")
        let json = try #require(try fixture.roost(["search", "travelling", "--json"]).jsonLines.first)
        #expect(json["sender_name"] as? String == "Bobby B", "the stored name stays as history")
        #expect(json["sender_display_name"] as? String == "Bob")

        let ambiguous = try fixture.roost(["search", "with:b"])
        #expect(ambiguous.status == 2)
        #expect(ambiguous.stderr.contains("Bert (bert@example.org)") && ambiguous.stderr.contains("Bob (bob@example.org)"), "\(ambiguous.stderr)")
        let nobody = try fixture.roost(["log", "nobody"])
        #expect(nobody.status == 1 && nobody.stderr.contains("no contact, room or conversation matches 'nobody'"))
        // bob is a conversation of both accounts: `log` does not merge them.
        let merged = try fixture.roost(["log", "bob"])
        #expect(merged.status == 2)
        #expect(merged.stderr.contains("in me@example.org") && merged.stderr.contains("in work@example.net"), "\(merged.stderr)")
        let log = try fixture.roost(["log", "Bobby", "--account", "me@example.org"])
        #expect(log.status == 0, "\(log.stderr)")
        #expect(log.lines.count == 5 && !log.stdout.contains("work travel"))
        // An unknown --account is an error for every reading command and for status.
        for command in [["search", "x"], ["count"], ["stats"], ["log", "bob"], ["export", "--format", "txt"], ["files"], ["status"],
                        ["presence", "bob"]] {
            let result = try fixture.roost(command + ["--account", "nobody@example.org"])
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("no account nobody@example.org"), "\(command): \(result.stderr)")
        }
        // stats and status honour --account.
        let stats = try fixture.roost(["stats", "--json", "--account", "work@example.net"])
        #expect(stats.jsonLines.first?["messages"] as? Int == 1, "\(stats.stdout)")
        #expect(!stats.stdout.contains("me@example.org"))
        let status = try fixture.roost(["status", "--json", "--account", "work@example.net"])
        #expect(status.jsonLines.first { $0["kind"] as? String == "archive" }?["messages"] as? Int == 1, "\(status.stdout)")
    }

    // Issue 34, 5: status says whether the archive's filesystem is encrypted. The test machines keep /tmp on a
    // plain ext4 disk (/dev/vda, no device mapper, no fscrypt policy): false, with no encryption named.
    @Test func statusSaysWhetherTheArchiveFilesystemIsEncrypted() throws {
        let fixture = try EverydayFixture()
        let status = try fixture.roost(["status", "--json"])
        let archive = try #require(status.jsonLines.first { $0["kind"] as? String == "archive" }, "\(status.stdout)")
        let human = try fixture.roost(["status"])
        // Whatever the volume the test folder is on (plain ext4 here; overlay or LUKS elsewhere), status says what the
        // kernel says (the detector's cases are the fixture tests of VolumeEncryptionTests).
        switch VolumeEncryption.of(path: fixture.archive) {
        case .encrypted(let how):
            #expect(archive["filesystem_encrypted"] as? Bool == true && archive["encryption"] as? String == how, "\(status.stdout)")
            #expect(human.stdout.contains("\n  archive on an encrypted filesystem (\(how))\n"), "\(human.stdout)")
        case .notEncrypted:
            #expect(archive["filesystem_encrypted"] as? Bool == false && archive["encryption"] is NSNull, "\(status.stdout)")
            #expect(human.stdout.contains("\n  archive on an unencrypted filesystem: see README \"Encryption at rest\"\n"), "\(human.stdout)")
        case .unknown:
            #expect(archive["filesystem_encrypted"] is NSNull && archive["encryption"] is NSNull, "\(status.stdout)")
            #expect(human.stdout.contains("cannot tell whether it is encrypted"), "\(human.stdout)")
        }
    }

    // 6. default_account keeps reading commands to one account.
    @Test func defaultAccount() throws {
        let fixture = try EverydayFixture(defaultAccount: "work@example.net")
        let search = try fixture.roost(["search", "travel"])
        #expect(search.lines.count == 1 && search.stdout.contains("work travel plans") && !search.stdout.contains("[work"), "\(search.stdout)")
        #expect(try fixture.roost(["log", "bob"]).lines.count == 1)
        #expect(try fixture.roost(["search", "travel", "--account", "me@example.org"]).stdout.contains("travel offer"), "--account wins")
        let wrong = try EverydayFixture(defaultAccount: "ghost@example.org")
        let refused = try wrong.roost(["search", "travel"])
        #expect(refused.status == 2 && refused.stderr.contains("default_account ghost@example.org"), "\(refused.stderr)")
    }

    // 7. Short ids, `roost show`, `roost log -n/--since/--until/--around`.
    @Test func fromAHitToItsContext() throws {
        let fixture = try EverydayFixture()
        let id = try fixture.shortID(of: "see you at 5")
        let hit = try fixture.roost(["search", "see you"])
        #expect(hit.stdout.hasPrefix(id + " "), "\(hit.stdout)")
        let show = try fixture.roost(["show", id])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("see you at 5") && show.stdout.contains("conversation: Bob (bob@example.org)")
                && show.stdout.contains("stanza-id:"), "\(show.stdout)")
        let context = try fixture.roost(["show", String(id.prefix(5)), "--context", "1"])
        #expect(context.lines.first?.contains("travelling to Paris") == true, "\(context.stdout)")
        #expect(context.stdout.contains("[file holiday.png 1.2 MB"))
        #expect(try fixture.roost(["show", "zzzzzzzz"]).status == 1)
        #expect(try fixture.roost(["show", "not-an-id!"]).status == 2)
        #expect(try fixture.roost(["show", id, "--json"]).jsonLines.first?["short_id"] as? String == id)

        let last = try fixture.roost(["log", "bob", "--account", "me@example.org", "-n", "2"])
        #expect(last.lines.count == 2 && last.lines.last?.contains("travel offer") == true, "\(last.stdout)")
        let window = try fixture.roost(["log", "bob", "--account", "me@example.org", "--since", "2026-01-15", "--until", "2026-01-15"])
        #expect(window.lines.count == 4 && !window.stdout.contains("travel offer"), "\(window.stdout)")
        let around = try fixture.roost(["log", "bob", "--account", "me@example.org", "--around", id, "-n", "1"])
        #expect(around.lines.count == 3 && around.lines[1].contains("see you at 5"), "\(around.stdout)")
        #expect(try fixture.roost(["log", "bob", "--since", "yesterdayish"]).status == 2)
        let states = try fixture.roost(["log", "bob", "--account", "me@example.org", "--states", "--presence", "--until", "2026-01-15"])
        #expect(states.stdout.contains("* Bob is composing") && states.stdout.contains("* Bob/phone is away (lunch)"), "\(states.stdout)")
    }

    // 7. --follow prints what is archived while it runs, woken by the archive changing.
    @Test func logFollowsNewMessages() async throws {
        let fixture = try EverydayFixture()
        let follow = try RoostBinary.start(["--config", fixture.config, "log", "alice", "--follow", "-vv"], environment: fixture.environment)
        defer { follow.stop(signal: SIGKILL) }
        try follow.waitForLog("hello from Alice")
        let writer = try ArchiveWriter(path: fixture.archive, durability: .normal)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // A live message, and one the server archive delivers late with an old timestamp: both are shown.
        _ = try writer.commitBlocking([.message(MessageRecord(account: "me@example.org", conversation: "alice@example.org", direction: .incoming,
                                                      from: "alice@example.org/phone", to: "me@example.org", body: "followed live",
                                                      timestamp: now, receivedAt: now, messageId: "live1"))])
        try follow.waitForLog("followed live")
        _ = try writer.commitBlocking([.message(MessageRecord(account: "me@example.org", conversation: "alice@example.org", direction: .incoming,
                                                      from: "alice@example.org/phone", to: "me@example.org", body: "caught up late",
                                                      timestamp: EverydayFixture.january + 1, receivedAt: now + 10, messageId: "late1"))])
        try follow.waitForLog("caught up late")
        _ = try writer.commitBlocking([.message(MessageRecord(account: "me@example.org", conversation: "bob@example.org", direction: .incoming,
                                                      from: "bob@example.org/phone", to: "me@example.org", body: "another conversation",
                                                      timestamp: now + 20, messageId: "other1"))])
        _ = try writer.commitBlocking([.message(MessageRecord(account: "me@example.org", conversation: "alice@example.org", direction: .incoming,
                                                      from: "alice@example.org/phone", to: "me@example.org", body: "the last one",
                                                      timestamp: now + 30, messageId: "last1"))])
        try follow.waitForLog("the last one")
        let seen = follow.stderrSoFar
        #expect(!seen.contains("another conversation"))
        #expect(seen.components(separatedBy: "followed live").count == 2, "each message once")
    }

    // 7, 8, 9. On a terminal: pager, "50 of N shown", colours; NO_COLOR and --color.
    @Test func terminalOutput() async throws {
        let fixture = try EverydayFixture()
        let paged = fixture.folder + "/paged.txt"
        let pager = ["PAGER": "cat > \(paged)"]
        let run = await fixture.inProcess(["search", "trav*", "--limit", "1"], terminal: true, environment: pager)
        #expect(run.status == .ok)
        #expect(run.stdout.isEmpty, "stdout went to the pager")
        let shown = try String(contentsOfFile: paged, encoding: .utf8)
        #expect(shown.contains("\u{1B}[33m"), "colours reach the pager: \(shown.debugDescription)")
        #expect(run.stderr.contains("1 of 3 shown — --limit 0 for all"), "\(run.stderr)")
        try FileManager.default.removeItem(atPath: paged)

        let noPager = await fixture.inProcess(["search", "trav*", "--no-pager"], terminal: true, environment: pager)
        #expect(noPager.stdout.contains("el offer") && !FileManager.default.fileExists(atPath: paged), "\(noPager.stdout)")
        #expect(!noPager.stderr.contains("shown"), "everything was shown")
        let noColor = await fixture.inProcess(["search", "trav*", "--no-pager"], terminal: true, environment: ["NO_COLOR": "1"])
        #expect(!noColor.stdout.contains("\u{1B}["), "\(noColor.stdout)")
        let forced = await fixture.inProcess(["search", "trav*", "--no-pager", "--color=always"], terminal: true, environment: ["NO_COLOR": "1"])
        #expect(forced.stdout.contains("\u{1B}[1;31mtrav\u{1B}[0mel offer"), "matches highlighted: \(forced.stdout.debugDescription)")
        let pipe = await fixture.inProcess(["search", "trav*", "--limit", "1"], terminal: false)
        #expect(!pipe.stdout.contains("\u{1B}[") && !pipe.stderr.contains("shown"), "no colour, no note into a pipe")
        let never = await fixture.inProcess(["search", "trav*", "--color", "never", "--no-pager"], terminal: true)
        #expect(!never.stdout.contains("\u{1B}["))
        #expect(await fixture.inProcess(["search", "x", "--color", "sometimes"], terminal: true).status == .usage)
        // `roost count`.
        let count = try fixture.roost(["count", "--json", "with:bob"])
        #expect(count.jsonLines.first?["count"] as? Int == 6, "\(count.stdout)")
    }

    // 10. -q and -v mean the same for every command.
    @Test func verbosity() throws {
        let fixture = try EverydayFixture()
        let export = try fixture.roost(["export", "--format", "txt", "-o", "out.txt"])
        #expect(export.stderr.contains("exported"))
        let quiet = try fixture.roost(["export", "--format", "txt", "-o", "quiet.txt", "-q"])
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet.stderr)")
        let verbose = try fixture.roost(["count", "-v"])
        #expect(verbose.stderr.contains("roost: archive: \(fixture.archive)") && verbose.stderr.contains("roost: config: "), "\(verbose.stderr)")
        #expect(try fixture.roost(["count"]).stderr.isEmpty)
        #expect(try fixture.roost(["count", "-q", "-v"]).status == 2)
    }

    // 13. Export only conversations with messages, make missing folders, documented exit statuses.
    @Test func exports() throws {
        let fixture = try EverydayFixture()
        let maildir = try fixture.roost(["export", "--format", "maildir", "--split", "conversation", "-o", "Mail/xmpp", "--account", "me@example.org"])
        #expect(maildir.status == 0, "\(maildir.stderr)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.folder + "/home/Mail/xmpp").sorted()
        #expect(folders == ["alice@example.org", "bob@example.org", "friend@example.org", "wang@example.cn"], "no folder for shy@ or carol@")
        let txt = try fixture.roost(["export", "--format", "txt", "--include", "all"])
        #expect(txt.status == 0 && !txt.stdout.contains("shy@example.org"))
        #expect(try fixture.roost(["export", "--format", "txt", "with:nobody@example.org"]).status == 1)
        #expect(try fixture.roost(["export", "--format", "txt", "-o", "Mail/xmpp"]).status == 2, "exists: usage error")
        #expect(try fixture.roost(["export", "--format", "html"]).status == 2, "needs a folder")
        // CSV for spreadsheets.
        let csv = try fixture.roost(["export", "--format", "csv", "--bom", "-o", "chats.csv"])
        #expect(csv.status == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: fixture.folder + "/home/chats.csv")).prefix(3)) == [0xEF, 0xBB, 0xBF])
        #expect(try fixture.roost(["export", "--format", "md", "--bom"]).status == 2)
    }

    // 14. Last seen needs a sighting; a repeated request keeps its first date; `requests accept` needs a request.
    @Test func presenceAndRequests() throws {
        let fixture = try EverydayFixture()
        let shy = try fixture.roost(["presence", "shy@example.org", "--json", "--account", "me@example.org"])
        #expect(shy.jsonLines.first?["last_seen"] is NSNull, "\(shy.stdout)")
        #expect(try fixture.roost(["presence", "shy@example.org", "--account", "me@example.org"]).stdout.contains("never seen online"))
        let bob = try fixture.roost(["presence", "Bob", "--json", "--account", "me@example.org"])
        #expect(bob.jsonLines.first?["last_seen"] as? String == "2026-01-15T12:01:30.000Z", "\(bob.stdout)")
        let requests = try fixture.roost(["requests", "--json", "--account", "me@example.org"])
        #expect(requests.jsonLines.count == 1)
        #expect(requests.jsonLines.first?["received"] as? String == "2026-01-15T12:00:10.000Z", "when it first came: \(requests.stdout)")
        #expect(requests.jsonLines.first?["message"] as? String == "hi, Carol here")
        let ghost = try fixture.roost(["requests", "accept", "ghost@example.org", "--account", "me@example.org"])
        #expect(ghost.status == 1)
        #expect(ghost.stderr.contains("ghost@example.org has no pending friend request") && ghost.stderr.contains("roost roster add ghost@example.org"),
                "\(ghost.stderr)")
    }

    // 16. Paper cuts.
    @Test func paperCuts() throws {
        let fixture = try EverydayFixture()
        let stats = try fixture.roost(["stats", "--account", "work@example.net"])
        #expect(stats.stdout.contains("1 message in 1 conversation"), "\(stats.stdout)")
        #expect(stats.stdout.contains("archive: 1 message, 0 chat states"), "\(stats.stdout)")
        let bad = try fixture.roost(["search", "\"unterminated"])
        #expect(bad.status == 2)
        #expect(bad.stderr.components(separatedBy: "unterminated quote").count == 2, "the message once: \(bad.stderr)")
        let typo = try fixture.roost(["search", "frm:bob"])
        #expect(typo.status == 2 && typo.stderr.contains("did you mean from:?"), "\(typo.stderr)")
        let stat = try fixture.roost(["stat"])
        #expect(stat.status == 2 && stat.stderr.contains("`stats` or `status`"), "\(stat.stderr)")
        let help = try fixture.roost(["help", "help"])
        #expect(help.status == 0 && help.stdout.contains("Usage: roost help [COMMAND]"))
        let mbox = fixture.folder + "/home/all.mbox"
        try "From someone\nSubject: x\n\nhi\n".write(toFile: mbox, atomically: true, encoding: .utf8)
        let imported = try fixture.roost(["import", mbox])
        #expect(imported.status == 1 && imported.stderr.contains("roost import reads Roost's own jsonl exports"), "\(imported.stderr)")
        let version = try fixture.roost(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let man = try String(contentsOfFile: Self.repository + "/contrib/man/roost.1", encoding: .utf8)
        #expect(man.split(separator: "\n").first?.contains("\"\(version)\"") == true, "the man page footer names \(version)")
        let statusHelp = try fixture.roost(["status", "--help"]).stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(statusHelp.contains("sent stanzas the server has not acknowledged (stream management, XEP-0198) only when they have waited"), "\(statusHelp)")
        let vcards = try fixture.roost(["vcard", "--account", "me@example.org"])
        #expect(vcards.status == 0 && vcards.stdout.contains("bob@example.org  Bobby B, Robert Example"), "\(vcards.stdout)")
        let notify = try fixture.roost(["notify"])
        #expect(notify.status == 0 && notify.stdout.contains("when:         away") && notify.stdout.contains("sink:         desktop"), "\(notify.stdout)")
    }

    // 17. Stats per conversation and month.
    @Test func statsOverTime() throws {
        let fixture = try EverydayFixture()
        let stats = try fixture.roost(["stats", "with:Bob", "--by", "month", "--account", "me@example.org", "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let conversation = try #require(stats.jsonLines.first)
        #expect(conversation["kind"] as? String == "conversation" && conversation["messages"] as? Int == 5 && conversation["name"] as? String == "Bob")
        let buckets = stats.jsonLines.filter { $0["kind"] as? String == "bucket" }
        // Four messages are from January 2026, one from yesterday.
        let format = DateFormatter()
        format.dateFormat = "yyyy-MM"
        format.timeZone = TimeZone(identifier: "UTC")
        let recent = format.string(from: Date(timeIntervalSince1970: Double(fixture.yesterday) / 1000))
        let expected: [String: Int] = recent == "2026-01" ? ["2026-01": 5] : ["2026-01": 4, recent: 1]
        #expect(Dictionary(uniqueKeysWithValues: buckets.map { ($0["bucket"] as? String ?? "", $0["messages"] as? Int ?? 0) }) == expected,
                "\(stats.stdout)")
        let text = try fixture.roost(["stats", "with:Bob", "--by", "year", "--account", "me@example.org"])
        #expect(text.stdout.hasPrefix("Bob (bob@example.org): 5 messages (4 in, 1 out)"), "\(text.stdout)")
        #expect(try fixture.roost(["stats", "--by", "fortnight"]).status == 2)
    }

    // 2, 17. `roost config` checks what `roost run` checks; `roost config init` without a terminal takes options.
    @Test func configChecksAndInit() throws {
        let fixture = try EverydayFixture()
        try "[notify]\nwhen = sometimes\n[sink x]\ntype = webhok\n".write(toFile: fixture.folder + "/bad.ini", atomically: true, encoding: .utf8)
        let check = try RoostBinary.run(["config", "--config", fixture.folder + "/bad.ini"], environment: fixture.environment)
        #expect(check.status == 78)
        #expect(check.stderr.contains("bad.ini:2") && check.stderr.contains("bad.ini:4"), "\(check.stderr)")
        let run = try RoostBinary.run(["run", "--config", fixture.folder + "/bad.ini"], environment: fixture.environment)
        #expect(run.status == 78 && run.stderr.contains("bad.ini:2"), "run refuses the same: \(run.stderr)")

        let path = fixture.folder + "/new/config.ini"
        let needs = try RoostBinary.run(["config", "init", "--config", path], environment: fixture.environment)
        #expect(needs.status == 2 && needs.stderr.contains("--jid"), "\(needs.stderr)")
        let made = try RoostBinary.run(["config", "init", "--config", path, "--jid", "me@example.org", "--password-stdin", "--host", "127.0.0.1",
                                        "--port", "9", "--no-test"], environment: fixture.environment, stdin: "s3cret #1\n")
        #expect(made.status == 0, "\(made.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let checked = try RoostBinary.run(["config", "--config", path, "--json"], environment: fixture.environment)
        #expect(checked.status == 0, "\(checked.stderr)")
        let account = try #require((checked.jsonLines.first?["accounts"] as? [[String: Any]])?.first)
        #expect(account["host"] as? String == "127.0.0.1" && account["port"] as? Int == 9 && account["password_source"] as? String == "password")
        #expect(!checked.stdout.contains("s3cret"))
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("password = s3cret \\#1"), "a # in the password survives")
        let again = try RoostBinary.run(["config", "init", "--config", path, "--jid", "me@example.org", "--password-command", "echo x"],
                                        environment: fixture.environment)
        #expect(again.status == 2 && again.stderr.contains("--force"), "\(again.stderr)")
        // The test login against a port where nothing listens fails with the connection status.
        let tested = try RoostBinary.run(["config", "init", "--config", path, "--force", "--jid", "me@example.org", "--password-command",
                                          "echo x", "--host", "127.0.0.1", "--port", "9"], environment: fixture.environment)
        #expect(tested.status == 3 && tested.stderr.contains("the test login failed"), "\(tested.stderr)")
    }

    /// Issue 30, 7 and 6: an archive path that cannot be an archive, and a CA file that cannot be loaded, are config
    /// errors (78) naming the file, line and key and saying what is there — for every command, `roost config` too.
    @Test func badArchivePathsAndCAFilesAreConfigErrors() throws {
        let fixture = try EverydayFixture()
        try "shopping list\n".write(toFile: fixture.folder + "/notes.txt", atomically: true, encoding: .utf8)
        let cases: [(text: String, expected: String)] = [
            ("[general]\n[archive]\npath = /proc/archive.sqlite\n", ":3: path: the archive /proc/archive.sqlite cannot be created: /proc is not a directory Roost can write"),
            ("[archive]\npath = \(fixture.folder)/notes.txt\n", ":2: path: \(fixture.folder)/notes.txt is not an SQLite database (it is a text file of 14 bytes)"),
            ("[archive]\npath = \(fixture.folder)\n", ":2: path: \(fixture.folder) is a directory, not an archive file"),
            ("[account a@example.org]\npassword_command = true\nca_file = /nonexistent.pem\n", ":3: ca_file: /nonexistent.pem: No such file or directory"),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let config = fixture.folder + "/bad\(index).ini"
            try text.write(toFile: config, atomically: true, encoding: .utf8)
            for command in [["config"], ["search", "x"], ["log", "bob"], ["run"]] {
                let result = try RoostBinary.run(command + ["--config", config], environment: fixture.environment)
                #expect(result.status == 78, "\(command) \(text): \(result.stderr)")
                #expect(result.stderr.contains(config + expected), "\(command): \(result.stderr)")
                #expect(!result.stderr.contains("SQLite error") && !result.stderr.contains("internal error")
                        && !result.stderr.contains("backup"), "\(result.stderr)")
            }
        }
    }

    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }
}
