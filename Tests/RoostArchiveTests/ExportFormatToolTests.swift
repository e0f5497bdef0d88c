import Foundation
import Testing
@testable import RoostArchive

/// Every format read back by the tools people use: Python's `csv` and `mailbox`, notmuch, headless Chromium.
@Suite struct ExportFormatToolTests {
    private let utc = TimeZone(identifier: "UTC")!

    private func export(_ format: ExportFormat, _ scratch: ExportScratch, name: String, query: String = "",
                        include: Set<ExportInclusion> = [.states, .presence]) throws -> (String, ExportSummary) {
        let reader = try scratch.fixture()
        let path = scratch.folder + "/" + name
        let summary = try ArchiveExporter(reader: reader).export(
            ExportOptions(format: format, query: query, include: include, timeZone: utc), to: .path(path))
        return (path, summary)
    }

    @Test func csvIsReadByPythonsCSVModule() throws {
        let scratch = ExportScratch()
        let (path, _) = try export(.csv, scratch, name: "chat.csv")
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(String(decoding: raw, as: UTF8.self).hasPrefix("time,account,conversation,direction,type,from,sender,to,body,"))
        let result = try ExternalTool.python("""
            import csv, json, sys
            with open(sys.argv[1], newline='', encoding='utf-8') as f:
                rows = list(csv.DictReader(f, strict=True))
            print(json.dumps(rows, ensure_ascii=False))
            """, [path])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: String]])
        #expect(rows.count == 13)
        #expect(rows.contains { $0["body"] == ExportFixture.scriptText })
        #expect(rows.contains { $0["body"] == "Hello Bob!\nHow are you?" })
        #expect(rows.contains { $0["body"] == "你好，我们明天见面吧。" && $0["sender"] == "王伟" })
        #expect(rows.first { $0["message_id"] == "a3" }?["edited"] == "2")
        #expect(rows.first { $0["message_id"] == "a4" }?["attachments"]?.contains("chat.csv_files/attachments/2026-01-15_120320_holiday_photo.png") == true)
        // RFC 4180: CRLF after every record, including the last.
        #expect(raw.suffix(2) == Data([13, 10]))
    }

    @Test func mboxIsReadByPythonsMailboxModule() throws {
        let scratch = ExportScratch()
        let (path, summary) = try export(.mbox, scratch, name: "chat.mbox")
        #expect(summary.messages == 13 && summary.attachmentsCopied == 1)
        let result = try ExternalTool.python(Self.readMessages, ["mbox", path])
        #expect(result.status == 0, "\(result.stderr)")
        try checkMail(result.stdout)
    }

    @Test func maildirIsReadByPythonAndIndexedByNotmuch() throws {
        let scratch = ExportScratch()
        let (path, _) = try export(.maildir, scratch, name: "Mail")
        let entries = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
        #expect(entries == ["cur", "new", "tmp"], "a Maildir holds nothing but mail")
        let result = try ExternalTool.python(Self.readMessages, ["maildir", path])
        #expect(result.status == 0, "\(result.stderr)")
        try checkMail(result.stdout)
        // Each file's time is its message's (Dovecot serves it as the INTERNALDATE, the arrival time mail apps sort by).
        let dates = try ExternalTool.python("""
            import email.utils, mailbox, os, sys
            box = mailbox.Maildir(sys.argv[1], factory=None, create=False)
            for key in box.keys():
                stamp = email.utils.parsedate_to_datetime(box[key]['Date']).timestamp()
                print(int(stamp), int(os.path.getmtime(os.path.join(sys.argv[1], box._lookup(key)))))
            """, [path])
        #expect(dates.status == 0, "\(dates.stderr)")
        let pairs = dates.stdout.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(pairs.count == 13 && pairs.allSatisfy { $0.count == 2 && $0[0] == $0[1] }, "Date header, file time: \(dates.stdout)")

        let notmuch = try ExternalTool.require("notmuch", package: "notmuch")
        let home = scratch.folder + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let config = scratch.folder + "/notmuch-config"
        try "[database]\npath=\(path)\n[user]\nname=Me\nprimary_email=me@example.org\n[new]\ntags=inbox;\n[search]\nexclude_tags=\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        // Xapian splits Chinese, Japanese and Korean text into n-grams only when asked to.
        let environment = ["HOME": home, "NOTMUCH_CONFIG": config, "XAPIAN_CJK_NGRAM": "1", "PATH": "/usr/bin:/bin"]
        let indexed = try ExternalTool.run(notmuch, ["new"], environment: environment)
        #expect(indexed.status == 0, "\(indexed.stderr)")
        #expect(indexed.stdout.contains("Added 13 new messages"), "\(indexed.stdout)")
        func count(_ query: String, threads: Bool = false) throws -> String {
            let counted = try ExternalTool.run(notmuch, ["count"] + (threads ? ["--output=threads"] : []) + [query], environment: environment)
            #expect(counted.status == 0, "\(counted.stderr)")
            return counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try count("明天") == "1")
        #expect(try count("from:alice@example.com") == "5")
        #expect(try count("from:\"Alice Liddell\" and typo") == "1")
        #expect(try count("Привет") == "1")
        #expect(try count("to:alice@example.com") == "3")
        #expect(try count("*", threads: true) == "4", "one thread per conversation")
        #expect(try count("attachment:\"holiday photo.png\"") == "1")
    }

    /// Python prints one JSON object per message: headers decoded the way mail clients decode them.
    private static let readMessages = """
        import json, mailbox, sys
        from email.header import decode_header, make_header
        box = mailbox.mbox(sys.argv[2]) if sys.argv[1] == 'mbox' else mailbox.Maildir(sys.argv[2], create=False)
        out = []
        for message in box:
            text = None
            files = []
            for part in message.walk():
                if part.get_content_maintype() == 'multipart':
                    continue
                if part.get_filename():
                    files.append([part.get_filename(), len(part.get_payload(decode=True))])
                elif part.get_content_type() == 'text/plain':
                    text = part.get_payload(decode=True).decode(part.get_content_charset())
            out.append({
                'from': str(make_header(decode_header(message['From']))),
                'to': str(make_header(decode_header(message['To']))),
                'subject': str(make_header(decode_header(message['Subject']))),
                'date': message['Date'], 'id': message['Message-ID'], 'reply': message['In-Reply-To'],
                'references': message['References'], 'body': text, 'files': files,
                'defects': [str(d) for d in message.defects],
            })
        print(json.dumps(out, ensure_ascii=False))
        """

    private func checkMail(_ output: String) throws {
        let messages = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
        #expect(messages.count == 13)
        for message in messages { #expect((message["defects"] as? [String])?.isEmpty == true, "\(message)") }
        func find(_ text: String) -> [String: Any]? { messages.first { ($0["body"] as? String)?.hasPrefix(text) == true } }
        let chinese = try #require(find("你好"))
        #expect(chinese["from"] as? String == "王伟 <wang@example.cn>")
        #expect(chinese["subject"] as? String == "Chat with 王伟 (wang@example.cn)")
        #expect(chinese["date"] as? String == "Thu, 15 Jan 2026 12:06:40 +0000")
        let reply = try #require(find("好的！Привет"))
        #expect(reply["reply"] as? String == chinese["id"] as? String)
        #expect((reply["body"] as? String)?.contains("مرحبا") == true)
        let fromLines = try #require(find("From here on"))
        // Exactly the text (plus the mail's final newline): no reader sees a quoted or unquoted "From ".
        #expect(fromLines["body"] as? String == "From here on\n>From the quote\n.\nlast line with trailing space \n")
        #expect(find(ExportFixture.scriptText) != nil)
        let edited = try #require(find("The typo, fixed twice"))
        #expect((edited["body"] as? String)?.contains("Teh typo") == true)
        let withFile = try #require(messages.first { !(($0["files"] as? [[Any]]) ?? []).isEmpty })
        #expect((withFile["files"] as? [[Any]])?.first?.first as? String == "holiday photo.png")
        let ids = messages.compactMap { $0["id"] as? String }
        #expect(Set(ids).count == 13, "Message-IDs are unique")
    }

    @Test func htmlOpensInChromiumWithoutErrorsAndShowsMarkupLiterally() throws {
        let chromium = try ExternalTool.require("chromium", package: "chromium")
        let scratch = ExportScratch()
        let (path, summary) = try export(.html, scratch, name: "site")
        #expect(summary.files == 5)
        let page = path + "/me@example.org/alice@example.com.html"
        let source = try scratch.read(page)
        #expect(source.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
        #expect(!source.contains("http://") && !source.contains("src=\"https"), "nothing is loaded from the network")
        #expect(source.contains("src=\"../avatars/alice@example.com.png\""))
        #expect(FileManager.default.fileExists(atPath: path + "/avatars/alice@example.com.png"))
        #expect(FileManager.default.fileExists(atPath: path + "/attachments/2026-01-15_120320_holiday_photo.png"))

        let profile = scratch.folder + "/chromium"
        func browse(_ file: String, _ action: [String]) throws -> ExternalTool {
            try ExternalTool.run(chromium, [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=\(profile)", "--enable-logging=stderr", "--v=0", "--window-size=412,915",
                "--virtual-time-budget=3000",
            ] + action + ["file://" + file], environment: ["HOME": scratch.folder, "PATH": "/usr/bin:/bin"])
        }
        let shot = scratch.folder + "/phone.png"
        let screenshot = try browse(page, ["--screenshot=\(shot)"])
        #expect(screenshot.status == 0, "\(screenshot.stderr)")
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000)
        let consoleLines = screenshot.stderr.split(separator: "\n").filter { $0.contains(":CONSOLE") || $0.contains("Refused to") }
        #expect(consoleLines.isEmpty, "console messages: \(consoleLines)")

        let dom = try browse(page, ["--dump-dom"])
        #expect(dom.status == 0, "\(dom.stderr)")
        #expect(dom.stdout.contains("look: &lt;script&gt;alert(1)&lt;/script&gt; &amp; \"quotes\""))
        #expect(!dom.stdout.contains("<script"), "no script element reached the page")
        #expect(dom.stdout.contains("Thursday 15 January 2026"))
        #expect(dom.stdout.contains("<summary>edited</summary><ol><li>Teh typo</li><li>The typo</li></ol>"))
        #expect(!dom.stderr.contains(":CONSOLE"), "\(dom.stderr)")

        let index = try browse(path + "/index.html", ["--dump-dom"])
        #expect(index.stdout.contains("href=\"me@example.org/wang@example.cn.html\""))
        #expect(index.stdout.contains("王伟"))
        #expect(!index.stderr.contains(":CONSOLE"), "\(index.stderr)")
    }
}
