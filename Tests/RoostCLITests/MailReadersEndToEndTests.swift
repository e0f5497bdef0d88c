import Foundation
import Testing
import RoostCore
import RoostTestSupport
import RoostXMPP

/// Issue 33, part 2: the Maildir export read by the real readers people use — Dovecot serving it over IMAP (Python's
/// imaplib as the client), notmuch with CJK n-grams, Python's `mailbox` — on an archive a real agent filled (`roost run`
/// on the test server, slixmpp as the other party).
@Suite("End to end: the maildir export in Dovecot, notmuch and Python's mailbox", .requires(.server, .dovecot))
struct MailReadersEndToEndTests {
    let server: TestServer
    let dovecot: DovecotServer

    init() throws {
        try TestRequirement.check(.server, .dovecot)
        server = try TestServer.require()
        dovecot = try DovecotServer.require()
    }

    @Test func imapNotmuchAndMailboxReadWhatAnAgentArchived() async throws {
        let dir = try TestDirectory()
        let started = Date()
        let accounts = try await server.registeredAccounts(["alice"])
        let (alice, alicePassword) = (accounts[0].jid, accounts[0].password)
        let bob = try await XMPPPeer.registered(on: server, "bob", resource: "laptop")
        let m = UUID().uuidString.prefix(8).lowercased()
        let config = try dir.write("config.ini", """
            [archive]
            path = \(dir.path)/data/archive.sqlite
            [files]
            download = all
            allow_private_addresses = true
            [account \(alice)]
            password = \(alicePassword)
            host = \(server.host)
            port = \(server.port)
            ca_file = \(server.caFile)

            """)
        let archive = dir.path + "/data/archive.sqlite"
        func count(_ sql: String) -> Int {
            Int((try? ArchiveCount.sqlite(archive, sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? "") ?? -1
        }
        let agent = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { agent.stop(signal: SIGKILL) }
        try await agent.ready()

        // What mail readers stumble on: CJK (n-grams in notmuch), emoji (4-byte UTF-8), accents, a line starting with
        // "From " (mbox quotes it; a Maildir must not), a lone dot, and a file.
        let roostJID = try alice.with(resource: "roost")
        let chinese = "你好，我们明天在北京见面 \(m)"
        let emoji = "Party tonight 🎉🥳 at the café, bring Ümlauts \(m)"
        let lines = "lines \(m)\nFrom the start of a line\n.\nthe end"
        try await bob.send(to: roostJID, body: chinese, id: "c1-\(m)")
        try await bob.send(to: roostJID, body: emoji, id: "c2-\(m)")
        try await bob.send(to: roostJID, body: lines, id: "c3-\(m)")
        let picture = dir.path + "/picture.png"
        let pictureBytes = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
        try pictureBytes.write(to: URL(fileURLWithPath: picture))
        let upload = try RoostBinary.runProgram("/usr/bin/python3", [TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py",
            "--jid", bob.jid.description + "/upload", "--host", server.host, "--port", String(server.port), "--ca", server.caFile,
            "upload", roostJID.description, picture, "--body", "a picture \(m)"], environment: ProcessInfo.processInfo.environment
            .merging(["XMPP_PEER_PASSWORD": bob.password]) { $1 }, timeout: 90)
        #expect(upload.status == 0, "\(upload.stderr)")
        try await waitFor("the messages and the file archived", agent) {
            count("SELECT count(*) FROM messages WHERE body LIKE '%\(m)%'") >= 4
                && count("SELECT count(*) FROM attachments WHERE state = 'stored'") == 1
        }

        let mail = dir.path + "/Mail"
        let exported = try RoostBinary.run(["export", "--format", "maildir", "-o", mail, "--config", config])
        #expect(exported.status == 0, "\(exported.stderr)")

        // Python's mailbox parses every file, with no defect.
        let parsed = try RoostBinary.runProgram("/usr/bin/python3", ["-c", """
            import json, mailbox, sys
            box = mailbox.Maildir(sys.argv[1], factory=None, create=False)
            keys = box.keys()
            defects = {key: [str(d) for part in box[key].walk() for d in part.defects] for key in keys}
            print(json.dumps({'count': len(keys), 'defects': {k: v for k, v in defects.items() if v}}))
            """, mail])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        let parsedSummary = try #require(parsed.jsonLines.last)
        let fileCount = try #require(parsedSummary["count"] as? Int)
        #expect(fileCount >= 4)
        #expect((parsedSummary["defects"] as? [String: Any])?.isEmpty == true, "\(parsedSummary)")

        // Dovecot serves the export: every message, with From, Date, Subject, the text and the file as sent.
        let imap = try dovecot.addUser(maildir: mail)
        let folders = try await offPool { try imap.folders() }
        #expect(folders == ["INBOX"])
        let all = try await offPool { try imap.fetch() }
        #expect(all.count == fileCount)
        for message in all {
            #expect(message.defects.isEmpty, "\(message)")
            #expect(message.flags.contains("\\Seen"), "the export marks its mail read: \(message.flags)")
        }
        let dateFormat = DateFormatter()
        dateFormat.locale = Locale(identifier: "en_US_POSIX")
        dateFormat.dateFormat = "EEE, d MMM yyyy HH:mm:ss Z"
        let internalDateFormat = DateFormatter()
        internalDateFormat.locale = Locale(identifier: "en_US_POSIX")
        internalDateFormat.dateFormat = "d-MMM-yyyy HH:mm:ss Z"
        func check(_ message: IMAPMessage, body: String, _ what: String) {
            #expect(message.from?.contains(bob.jid.description) == true, "\(what): From \(message.from ?? "none")")
            #expect(message.subject?.contains(bob.jid.description) == true, "\(what): Subject \(message.subject ?? "none")")
            let date = message.date.flatMap { dateFormat.date(from: $0) }
            #expect(date.map { $0 > started.addingTimeInterval(-60) && $0 < Date().addingTimeInterval(60) } == true,
                    "\(what): Date \(message.date ?? "none") is not the time it was sent")
            // The arrival time a phone's mail app sorts by is the message's, not the export's.
            #expect(internalDateFormat.date(from: message.internalDate.trimmingCharacters(in: .whitespaces)) == date,
                    "\(what): INTERNALDATE \(message.internalDate), Date \(message.date ?? "none")")
            #expect(message.body?.replacingOccurrences(of: "\r\n", with: "\n") == body + "\n", "\(what): \(message.body ?? "no text part")")
        }
        // IMAP SEARCH with CHARSET UTF-8, as a client searching for a Chinese word sends it.
        let chineseFound = try await offPool { try imap.fetch(["BODY", "明天"]) }
        #expect(chineseFound.count == 1)
        if let message = chineseFound.first { check(message, body: chinese, "the Chinese message") }
        let emojiFound = try await offPool { try imap.fetch(["BODY", "Party tonight"]) }
        #expect(emojiFound.count == 1)
        if let message = emojiFound.first { check(message, body: emoji, "the emoji message") }
        let linesFound = try await offPool { try imap.fetch(["BODY", "lines \(m)"]) }
        #expect(linesFound.count == 1)
        if let message = linesFound.first { check(message, body: lines, "the message of several lines") }
        let withFile = try await offPool { try imap.fetch(["BODY", "a picture \(m)"]) }
        #expect(withFile.count == 1)
        let attachment = try #require(withFile.first?.attachments.first)
        #expect(attachment.name == "picture.png" && attachment.type == "image/png", "\(attachment)")
        let expectedHash = try RoostBinary.runProgram("/usr/bin/sha256sum", [picture]).stdout.prefix(64)
        #expect(attachment.size == pictureBytes.count && attachment.sha256 == String(expectedHash), "\(attachment)")

        // A flag set in the client is the Maildir's: the file in cur/ is renamed with it.
        let flagged = try await offPool { try imap.store(["BODY", "明天"], add: ["\\Flagged"]) }
        #expect(flagged.first?.flags.contains("\\Flagged") == true && flagged.first?.flags.contains("\\Seen") == true)
        let curNames = try FileManager.default.contentsOfDirectory(atPath: mail + "/cur")
        let chineseID = try #require(chineseFound.first?.messageId)
        let chineseFile = curNames.first { name in
            (try? String(contentsOfFile: mail + "/cur/" + name, encoding: .utf8))?.contains("Message-ID: \(chineseID)") == true
        }
        #expect(chineseFile?.hasSuffix(":2,FS") == true, "\(curNames)")

        // A message added to the Maildir later (as a live mirror adds it: written in tmp/, renamed into new/) reaches a
        // session that selected the mailbox before.
        let watch = try await offPool { try imap.watch(for: ["BODY", "later \(m)"]) }
        let later = "later \(m), 再见 👋"
        try await bob.send(to: roostJID, body: later, id: "c5-\(m)")
        try await waitFor("the later message archived", agent) { count("SELECT count(*) FROM messages WHERE body = '\(later)'") == 1 }
        let second = dir.path + "/Mail2"
        #expect(try RoostBinary.run(["export", "--format", "maildir", "-o", second, "--config", config]).status == 0)
        let newNames = Set(try FileManager.default.contentsOfDirectory(atPath: second + "/cur"))
            .subtracting(try FileManager.default.contentsOfDirectory(atPath: mail + "/cur")
                .map { String($0.prefix { $0 != ":" }) + ":2,S" })
        #expect(newNames.count == 1, "\(newNames)")
        let newName = try #require(newNames.first)
        let base = String(newName.prefix { $0 != ":" })
        try FileManager.default.copyItem(atPath: second + "/cur/" + newName, toPath: mail + "/tmp/" + base)
        // A copy is dated now; the export dated the file with its message's time, which the copy keeps.
        let exportedFile = try FileManager.default.attributesOfItem(atPath: second + "/cur/" + newName)
        try FileManager.default.setAttributes([FileAttributeKey.modificationDate: try #require(exportedFile[.modificationDate] as? Date)],
                                              ofItemAtPath: mail + "/tmp/" + base)
        #expect(rename(mail + "/tmp/" + base, mail + "/new/" + base) == 0)
        let appeared = try await offPool { try watch.messages() }
        #expect(appeared.count == 1)
        if let message = appeared.first { check(message, body: later, "the later message") }
        #expect(agent.stop(signal: SIGTERM).status == 0)
        await bob.stop()

        // One folder per conversation (`--split conversation`): each an IMAP folder of its own.
        let split = dir.path + "/Split"
        #expect(try RoostBinary.run(["export", "--format", "maildir", "--split", "conversation", "-o", split, "--config", config]).status == 0)
        let splitIMAP = try dovecot.addUser(maildir: split)
        let splitFolders = try await offPool { try splitIMAP.folders() }
        let bobFolder = try #require(splitFolders.first { $0.contains(bob.jid.bare.description) }, "\(splitFolders)")
        let inBobFolder = try await offPool { try splitIMAP.fetch(mailbox: bobFolder) }
        #expect(inBobFolder.count == fileCount + 1 && inBobFolder.allSatisfy { $0.from?.contains(bob.jid.description) == true || $0.to?.contains(bob.jid.description) == true })

        // notmuch indexes the Maildir and finds a Chinese word (Xapian splits CJK into n-grams only when asked to).
        let home = dir.path + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let notmuchConfig = try dir.write("notmuch-config", "[database]\npath=\(mail)\n[user]\nname=Alice\nprimary_email=\(alice)\n"
            + "[new]\ntags=inbox;\n[search]\nexclude_tags=\n")
        let environment = ["HOME": home, "NOTMUCH_CONFIG": notmuchConfig, "XAPIAN_CJK_NGRAM": "1", "PATH": "/usr/bin:/bin"]
        let indexed = try RoostBinary.runProgram("/usr/bin/notmuch", ["new"], environment: environment)
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let found = try RoostBinary.runProgram("/usr/bin/notmuch", ["search", "--output=files", "北京"], environment: environment)
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.lines.count == 1 && found.lines.first.map { $0.hasPrefix(mail + "/cur/") } == true, "\(found.stdout)")
        let counted = try RoostBinary.runProgram("/usr/bin/notmuch", ["count", "--output=messages", "*"], environment: environment)
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(fileCount + 1))
    }

    /// The suite's Dovecot reads its users file at most once a second: a user added in the second of another login
    /// was refused ("auth failed", a flake of the suites that share it). `addUser` returns once Dovecot itself
    /// authenticates the new user; shown failing (20 of 20 logins refused) without that wait.
    @Test func aUserAddedInTheSecondOfAnotherLoginLogsInAtOnce() async throws {
        let dir = try TestDirectory()
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: dir.path + "/Mail/" + sub, withIntermediateDirectories: true)
        }
        let first = try dovecot.addUser(maildir: dir.path + "/Mail")
        for _ in 0..<5 {
            #expect(try await offPool { try first.folders() } == ["INBOX"])
            let added = try dovecot.addUser(maildir: dir.path + "/Mail")
            #expect(try await offPool { try added.folders() } == ["INBOX"])
        }
    }
}
