import Foundation
import Testing
import RoostArchive
import RoostTestSupport

/// What the security review threw at the command line without a server: control characters for the terminal,
/// imports that are too large, point outside the archive or carry invalid addresses, a world-readable config
/// holding a token, a config that is a FIFO, and times at the ends of the calendar.
@Suite("Hostile input at the command line")
struct HostileInputCLITests {
    static let t0: Int64 = 1_768_478_400_000
    static let hostileBody = "evil\u{1B}[31mred\u{07}\rover\u{202E}txt\u{9B}2J\u{1B}]0;title\u{07}"

    private func message(_ body: String, at time: Int64 = t0, from: String = "bob@example.org") -> ArchiveEvent {
        .message(MessageRecord(account: "me@example.org", conversation: from, direction: .incoming, from: from + "/x",
                               to: "me@example.org/roost", senderName: "Bob \u{1B}[2J", body: body, timestamp: time, messageId: "m\(time)"))
    }

    /// The bytes a terminal would obey: C0 controls but line feed and tab, DEL, C1, bidirectional overrides.
    private func obeyed(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { s in
            (s.value < 0x20 && s != "\n" && s != "\t") || (0x7F..<0xA0).contains(s.value) || (0x202A...0x202E).contains(s.value)
        }
    }

    @Test func controlCharactersAreShownNotObeyed() throws {
        let sandbox = try ExportCLISandbox()
        _ = try ArchiveWriter(path: sandbox.archive, durability: .off).commitBlocking([message(Self.hostileBody)])
        for arguments in [["search", "evil"], ["log", "bob@example.org"], ["stats"]] {
            let result = try sandbox.roost(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(obeyed(result.stdout).isEmpty, "\(arguments) printed \(obeyed(result.stdout).map { String($0.value, radix: 16) })")
        }
        let search = try sandbox.roost(["search", "evil"]).stdout
        for visible in ["\\u{1b}[31m", "\\u{7}", "\\r", "\\u{202e}", "\\u{9b}2J"] {
            #expect(search.contains(visible), "\(visible) not in \(search)")
        }
        // --json stays exact.
        let json = try sandbox.roost(["search", "--json", "evil"])
        let row = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(row["body"] as? String == Self.hostileBody)
        // Errors that repeat what was typed are shown the same way.
        let missing = try sandbox.roost(["log", "nobody\u{1B}[31m@example.org"])
        #expect(obeyed(missing.stderr).isEmpty, "\(missing.stderr)")
    }

    @Test func timesAtTheEndsOfTheCalendarArePrinted() throws {
        let sandbox = try ExportCLISandbox()
        _ = try ArchiveWriter(path: sandbox.archive, durability: .off).commitBlocking([
            message("first", at: .min), message("year zero", at: -62_167_219_200_000), message("last", at: .max),
        ])
        let stats = try sandbox.roost(["stats"])
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("-292275055-05-16") && stats.stdout.contains("292278994-08-17"), "\(stats.stdout)")
        let search = try sandbox.roost(["search", "--oldest-first", "--limit", "0"])
        let lines = search.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        // Each line: short id, then the time.
        #expect(lines.first?.contains(" -292275055-05-16 16:47 ") == true, "\(search.stdout)")
        // Year 0 of the proleptic Gregorian calendar, as every export and import writes it.
        #expect(lines.dropFirst().first?.contains(" 0000-01-01 00:00 ") == true, "\(search.stdout)")
        let json = try sandbox.roost(["search", "--json", "--oldest-first", "--limit", "0"]).stdout
        #expect(json.contains(#""timestamp":"0000-01-01T00:00:00.000Z""#), "\(json)")
        // Outside the years 0–9999, the one message schema (the export's) writes the UTC milliseconds.
        #expect(json.contains(#""timestamp":9223372036854775807,"#) && json.contains(#""timestamp":-9223372036854775808,"#), "\(json)")
    }

    // MARK: Import

    private func importLine(_ extra: String = "", account: String = "me@example.org", conversation: String = "alice@example.com",
                            time: String = "2026-01-15T12:00:00.000Z", body: String = "hi") -> String {
        #"{"version":1,"event":"message","account":"\#(account)","conversation":"\#(conversation)","direction":"in","type":"chat","from":"alice@example.com/phone","to":"me@example.org/roost","timestamp":"\#(time)","received_at":"\#(time)","body":"\#(body)","source":"live","message_id":"\#(UUID().uuidString)"\#(extra)}"#
    }

    @Test func anOverlongLineIsRefusedWithItsNumber() throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/big.jsonl"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try handle.write(contentsOf: Data((importLine() + "\n").utf8))
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        try handle.write(contentsOf: Data(importLine().prefix(100).utf8))
        for _ in 0..<20 { try handle.write(contentsOf: chunk) }
        try handle.write(contentsOf: Data(("\"}\n" + importLine() + "\n").utf8))
        try handle.close()
        let result = try sandbox.roost(["import", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("line 2: longer than 16 MiB"), "\(result.stderr)")
        let storedBefore = sandbox.exists("archive.sqlite") ? try ArchiveReader(path: sandbox.archive).search(query: "").count : 0
        #expect(storedBefore == 0)
        // With --skip-invalid the other two lines are imported; a lower cap is honoured.
        let skipped = try sandbox.roost(["import", "--skip-invalid", file])
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect(try ArchiveReader(path: sandbox.archive).search(query: "").count == 2)
        let small = sandbox.folder + "/small.jsonl"
        try (importLine(body: String(repeating: "y", count: 2000)) + "\n").write(toFile: small, atomically: true, encoding: .utf8)
        let capped = try sandbox.roost(["import", "--max-line-size", "1K", small])
        #expect(capped.status == 1 && capped.stderr.contains("line 1: longer than 1024 bytes"), "\(capped.stderr)")
    }

    @Test func devicesAndPipesAreRefusedWithoutReadingForever() throws {
        let sandbox = try ExportCLISandbox()
        let zero = try sandbox.roost(["import", "/dev/zero"], timeout: 30)
        #expect(zero.status == 1 && zero.stderr.contains("not a regular file"), "\(zero.stderr)")
        let fifo = sandbox.folder + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let piped = try sandbox.roost(["import", "--format", "jsonl", fifo], timeout: 30)
        #expect(piped.status == 1 && piped.stderr.contains("not a regular file"), "\(piped.stderr)")
        // A config that is a FIFO blocks nobody either.
        let process = try RoostBinary.run(["stats", "--config", fifo], timeout: 30)
        #expect(process.status != 0 && process.stderr.contains("not a regular file"), "\(process.stderr)")
    }

    @Test func aByteOrderMarkIsAccepted() throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/bom.jsonl"
        try ("\u{FEFF}" + importLine() + "\r\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try sandbox.roost(["import", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try ArchiveReader(path: sandbox.archive).search(query: "").count == 1)
    }

    @Test func invalidAddressesAreRefusedAsTheEngineRefusesThem() throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/jids.jsonl"
        let lines = [importLine(account: "not a jid@@"), importLine(conversation: "evil\\u001b[31m@x"), importLine(conversation: "bob@./x"),
                     importLine(account: "me@example.org/roost"), importLine(conversation: "Alice@Example.COM")]
        try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try sandbox.roost(["import", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("has 4 invalid lines"), "\(result.stderr)")
        #expect(result.stderr.contains("line 1: \"account\" is not an XMPP address"), "\(result.stderr)")
        #expect(result.stderr.contains("line 2: \"conversation\" is not an XMPP address"), "\(result.stderr)")
        #expect(result.stderr.contains("line 4: \"account\" must be a bare address"), "\(result.stderr)")
        // The valid one is stored in the engine's spelling.
        #expect(try sandbox.roost(["import", "--skip-invalid", file]).status == 0)
        #expect(try ArchiveReader(path: sandbox.archive).search(query: "").map(\.conversation) == ["alice@example.com"])
    }

    @Test func pathsOutsideTheArchiveAreDroppedAndNeverExported() throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/paths.jsonl"
        let attachment = #","attachments":[{"url":"https://x.example/passwd","local_path":"/etc/passwd","state":"stored"},{"url":"https://x.example/b","file":"../../../../../../etc/hostname","state":"stored"}]"#
        let contact = #"{"version":1,"event":"contact","account":"me@example.org","jid":"alice@example.com","vcard_fetched_at":"2026-01-15T12:00:00.000Z","photo_hash":"abc","photo_path":"/etc/shadow"}"#
        try (importLine(attachment) + "\n" + contact + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try sandbox.roost(["import", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("3 file path(s) outside the archive's file store"), "\(result.stderr)")
        let files = try sandbox.roost(["files", "--json"]).stdout
        #expect(!files.contains("/etc/"), "\(files)")
        // An export copies or links nothing from outside the archive.
        let export = try sandbox.roost(["export", "--format", "html", "-o", sandbox.folder + "/html"])
        #expect(export.status == 0, "\(export.stderr)")
        let copied = FileManager.default.enumerator(atPath: sandbox.folder + "/html")?.allObjects as? [String] ?? []
        #expect(!copied.contains { $0.hasPrefix("attachments/") || $0.hasPrefix("avatars/") }, "\(copied)")
    }

    // MARK: Config

    @Test func aSharedConfigHoldingAnySecretIsRefused() throws {
        let sandbox = try ExportCLISandbox()
        let secrets = [
            ("[sink phone]\ntype = webhook\nurl = https://ntfy.example/t\ntoken = tk_live_1234\n", "token"),
            ("[sink mail]\ntype = email\nurl = smtp://mail.example.org\nfrom = a@example.org\nto = b@example.org\nuser = a\npassword = hunter2\n", "password"),
            ("[sink hook]\ntype = webhook\nurl = https://hooks.example/x\nheader.Authorization = Bearer abc\n", "header.Authorization"),
            ("[sink hook]\ntype = webhook\nurl = https://user:s3cret@hooks.example/x\n", "url"),
        ]
        for (group, key) in secrets {
            let path = sandbox.folder + "/shared.ini"
            try ("[archive]\npath = \(sandbox.archive)\n" + group).write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            let result = try RoostBinary.run(["stats", "--config", path])
            #expect(result.status != 0, "\(key)")
            #expect(result.stderr.contains("contains a secret (\(key) at line"), "\(result.stderr)")
            #expect(result.stderr.contains("chmod 600"))
            for secret in ["tk_live_1234", "hunter2", "Bearer abc", "s3cret"] { #expect(!result.stderr.contains(secret)) }
        }
        // Nothing secret: a shared file is fine.
        let plain = sandbox.folder + "/plain.ini"
        try "[archive]\npath = \(sandbox.archive)\n[sink hook]\ntype = webhook\nurl = https://hooks.example/x\nheader.X-Priority = 5\ntoken_command = pass hook\n"
            .write(toFile: plain, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: plain)
        _ = try ArchiveWriter(path: sandbox.archive, durability: .off)
        let fine = try RoostBinary.run(["stats", "--config", plain])
        #expect(fine.status == 0, "\(fine.stderr)")
    }
}
