import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import RoostArchive

/// Snapshots of the text formats, and the file layout rules: splits, safe names, no overwriting, atomicity.
@Suite struct ExportLayoutTests {
    private let utc = TimeZone(identifier: "UTC")!

    private func exportText(_ format: ExportFormat, _ scratch: ExportScratch, query: String, zone: TimeZone) throws -> String {
        let path = scratch.folder + "/chat." + format.rawValue
        _ = try ArchiveExporter(reader: try scratch.fixture()).export(
            ExportOptions(format: format, query: query, include: [.states, .presence], timeZone: zone), to: .path(path))
        return try scratch.read(path)
    }

    @Test func textTranscriptSnapshot() throws {
        let text = try exportText(.txt, ExportScratch(), query: "with:alice@example.com OR with:lounge@conference.example.org", zone: utc)
        #expect(text == """
            Conversation with Alice Liddell <alice@example.com>
            Account: me@example.org · times in UTC
            ========================================================================
            2026-01-15 12:00:00  Alice Liddell: Hello Bob!
                                                How are you?
            2026-01-15 12:00:00  * Alice Liddell is active
            2026-01-15 12:01:00  me: Fine, thanks — and you? 😀
            2026-01-15 12:02:00  Alice Liddell: look: <script>alert(1)</script> & "quotes"
            2026-01-15 12:03:00  Alice Liddell: The typo, fixed twice (edited)
            2026-01-15 12:03:20  Alice Liddell: [file] https://upload.example.com/x/holiday%20photo.png (saved as chat.txt_files/attachments/2026-01-15_120320_holiday_photo.png)
                                                [file] https://upload.example.com/y/report.pdf
            2026-01-15 12:04:00  me: From here on
                                     >From the quote
                                     .
                                     last line with trailing space 
            2026-01-15 12:05:00  * Alice Liddell (phone) went offline
            2026-01-16 12:00:00  Alice Liddell: Good morning
            2026-02-04 12:00:00  me: See you in February


            Conversation with lounge@conference.example.org
            Account: me@example.org · times in UTC
            ========================================================================
            2026-01-15 12:08:20  carol: Room topic
            2026-01-15 12:08:40  me: hi all

            """)
    }

    @Test func markdownSnapshotInALocalTimeZone() throws {
        let shanghai = TimeZone(identifier: "Asia/Shanghai")!
        let text = try exportText(.md, ExportScratch(), query: "with:wang@example.cn OR (with:alice@example.com date:2026-01-16..)",
                                  zone: shanghai)
        #expect(text == """
            # Alice Liddell (alice@example.com)

            Account: me@example.org · times in Asia/Shanghai

            ## 2026-01-16 Friday

            - **20:00:00 Alice Liddell:** Good morning

            ## 2026-02-04 Wednesday

            - **20:00:00 me:** See you in February

            # 王伟 (wang@example.cn)

            Account: me@example.org · times in Asia/Shanghai

            ## 2026-01-15 Thursday

            - **20:06:40 王伟:** 你好，我们明天见面吧。
            - **20:07:40 me:** 好的！Привет, как дела? مرحبا

            """)
    }

    @Test func markdownEscapesMarkup() {
        #expect(MarkdownText.escape("# not a heading\n- not a list\n1. not a list either\n*bold* [link](x) <b>")
                == "\\# not a heading\n\\- not a list\n1\\. not a list either\n\\*bold\\* \\[link\\](x) \\<b\\>")
    }

    /// The escapers work on UTF-8 bytes, by scalar: markup followed by a combining mark is still markup to a
    /// CommonMark reader, a CRLF ends a line, and text around the ASCII that matters passes through unchanged.
    @Test func escapersWorkByScalarAndLine() {
        #expect(MarkdownText.escape("-\u{301} a *\u{301}") == "\\-\u{301} a \\*\u{301}")
        #expect(MarkdownText.escape("a\r\n- b\n\u{3000}+ c\n12) d 3. e") == "a\r\n\\- b\n\u{3000}\\+ c\n12\\) d 3. e")
        #expect(MarkdownText.escape("王伟 1. 🎉 x") == "王伟 1. 🎉 x")
        #expect(MailWriter.mboxrdQuoted("a\nFrom b\n>>From c\nnot From d\n") == "a\n>From b\n>>>From c\nnot From d\n")
        #expect(MailWriter.mboxrdQuoted("From 王\nx") == ">From 王\nx")
        #expect(MailWriter.mboxrdQuoted("no quote\n") == "no quote\n")
        // The Message-ID: two FNV-1a hashes of the fields joined by NUL bytes (account and conversation lower-cased, the
        // time in decimal), in lower-case hex, whatever the time's sign or size.
        for timestamp: Int64 in [0, 7, -1, 1_768_478_400_000, -62_167_219_200_001, .min, .max] {
            let message = MessageRow(id: 1, account: "Me@Example.org", conversation: "BOB@example.org", direction: .incoming,
                                          kind: .chat, from: "bob@example.org/x", to: "me@example.org", senderName: nil, body: "hé",
                                          subject: nil, thread: nil, timestamp: timestamp, receivedAt: 0, stanzaId: "s1",
                                          stanzaIdBy: nil, stanzaIdTrusted: true, originId: nil, messageId: "m1", replaces: nil,
                                          retracted: false, isCarbon: false, source: .live, rawStanza: nil)
            let fields = ["me@example.org", "bob@example.org", "bob@example.org/x", "s1", "", "m1", String(timestamp), "hé"]
            var first: UInt64 = 0xcbf2_9ce4_8422_2325, second: UInt64 = 0x6c62_272e_07bb_0142
            for byte in Array(fields.joined(separator: "\u{0}").utf8) {
                first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
                second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            func hex(_ value: UInt64) -> String { String(repeating: "0", count: 16 - String(value, radix: 16).count) + String(value, radix: 16) }
            #expect(MailMessageBuilder.messageID(message) == "<roost.\(hex(first))\(hex(second))@export.roost.invalid>", "\(timestamp)")
        }
        #expect(MIMEText.quotedPrintable("a\r\nb\rc\n") == "a\nb=0Dc\n")
        #expect(MIMEText.headerText("two\r\nlines") == "two  lines")
        #expect(MIMEText.headerText("=?x?=") == "=?UTF-8?B?PT94Pz0=?=")
        #expect(HTMLText.escape("<a href='x'>&\"</a>\u{0}é") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;\u{FFFD}é")
        #expect(MailMessageBuilder.address("a b<c>@x.org/res") == "abc@x.org")
        // By byte now: the same answers as the Character rules, including a `/` a combining mark joins.
        #expect(MailMessageBuilder.address("bob@x.org") == "bob@x.org")
        #expect(MailMessageBuilder.address("bob@x.org/王") == "bob@x.org")
        #expect(MailMessageBuilder.address("bob@x.org/\u{301}r") == "bob@x.org/\u{301}r")
        #expect(MailMessageBuilder.address("王@x.org/r") == "王@x.org")
        #expect(JIDText.bare("a@b/c/d") == "a@b" && JIDText.bare("/x") == "" && JIDText.bare("a@b") == "a@b")
    }

    /// A body without a styling directive or `>` takes the shortcut (escaped as it is); it must be what the
    /// parser makes of it.
    @Test func stylingShortcutMatchesTheParser() {
        for text in ["", "plain", "two\nlines", "a\r\nb\n\nc", "&<\"'\u{0}", "王伟 🎉\n", "\n", "x\ny\n"] {
            #expect(MessageStyling.html(text, escape: HTMLText.escape)
                    == MessageStyling.html(MessageStyling.blocks(text), escape: HTMLText.escape), "\(text.debugDescription)")
        }
    }

    @Test func splitByConversationUsesSafeUniqueNames() throws {
        let scratch = ExportScratch()
        let writer = try ArchiveWriter(path: scratch.archive, durability: .off)
        let hostile = ["../../etc/passwd", "CON", ".hidden", "a/b\\c:d*e?f\"g<h>i|j", "Alice@example.com", "alice@example.com", "ｃｏｎ"]
        _ = try writer.commitBlocking(hostile.enumerated().map { index, peer in
            .message(MessageRecord(account: "me@example.org", conversation: peer, direction: .incoming, from: peer + "/x",
                                   to: "me@example.org", body: "hi \(index)", timestamp: ExportFixture.t0 + Int64(index) * 1000))
        })
        let out = scratch.folder + "/split"
        let summary = try ArchiveExporter(reader: try ArchiveReader(path: scratch.archive)).export(
            ExportOptions(format: .txt, split: .conversation, timeZone: utc), to: .path(out))
        let names = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        // Alice@ and alice@ are one conversation (JIDs compare case-insensitively).
        #expect(summary.files == 6 && names.count == 6)
        #expect(names == ["_._.._etc_passwd.txt", "_CON.txt", "_hidden.txt", "a_b_c_d_e_f_g_h_i_j.txt", "alice@example.com.txt", "ｃｏｎ.txt"])
        for name in names {
            #expect(!name.hasPrefix(".") && !name.contains("/") && !name.contains("\\") && !name.contains(":"))
            #expect(!["con.txt", "prn.txt"].contains(name.lowercased()), "reserved device name \(name)")
        }
        // Everything stayed inside the output folder.
        let all = FileManager.default.subpaths(atPath: scratch.folder) ?? []
        #expect(all.filter { $0.hasSuffix(".txt") }.allSatisfy { $0.hasPrefix("split/") })
    }

    @Test func safeNamesNeverEscape() {
        for hostile in ["..", ".", "", "/", "../x", "a\u{0}b", "nul.txt", "lpt1", "name. ", String(repeating: "é", count: 300)] {
            let name = SafeFileName.component(hostile)
            #expect(!name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\u{0}"))
            #expect(!name.hasPrefix(".") && !name.hasSuffix(".") && !name.hasSuffix(" ") && name.utf8.count <= 101)
            #expect(!["nul", "lpt1", "nul.txt"].contains(name.lowercased()))
        }
        var names = FileNameAllocator()
        #expect(names.unique("a", extension: "txt") == "a.txt")
        #expect(names.unique("A", extension: "txt") == "A-2.txt")
    }

    @Test func splitByMonthInTheExportTimeZone() throws {
        let scratch = ExportScratch()
        let out = scratch.folder + "/months"
        _ = try ArchiveExporter(reader: try scratch.fixture()).export(
            ExportOptions(format: .jsonl, split: .month, timeZone: utc), to: .path(out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["2026-01.jsonl", "2026-02.jsonl", "attachments"])
        #expect(try scratch.read(out + "/2026-01.jsonl").contains("\"file\":\"attachments/2026-01-15_120320_holiday_photo.png\""))
        #expect(try scratch.read(out + "/2026-02.jsonl").split(separator: "\n").count == 1)
        #expect(try scratch.read(out + "/2026-01.jsonl").split(separator: "\n").count == 12)
    }

    @Test func existingOutputIsReplacedOnlyWithForce() throws {
        let scratch = ExportScratch()
        let reader = try scratch.fixture()
        let exporter = ArchiveExporter(reader: reader)
        let file = scratch.folder + "/out.txt"
        try "precious".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(throws: ExportError.self) { try exporter.export(ExportOptions(format: .txt, copyAttachments: false), to: .path(file)) }
        #expect(try scratch.read(file) == "precious")
        _ = try exporter.export(ExportOptions(format: .txt, force: true, copyAttachments: false), to: .path(file))
        #expect(try scratch.read(file).hasPrefix("Conversation with"))

        let folder = scratch.folder + "/site"
        _ = try exporter.export(ExportOptions(format: .html), to: .path(folder))
        #expect(throws: ExportError.self) { try exporter.export(ExportOptions(format: .html), to: .path(folder)) }
        _ = try exporter.export(ExportOptions(format: .html, query: "with:wang@example.cn", force: true), to: .path(folder))
        #expect(!FileManager.default.fileExists(atPath: folder + "/me@example.org/alice@example.com.html"), "old pages are gone")
        #expect(FileManager.default.fileExists(atPath: folder + "/wang@example.cn.html"))
        // No staging leftovers beside the outputs.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.folder).filter { $0.hasPrefix(".") }.isEmpty)
    }

    @Test func failuresLeaveNothingUnderTheFinalName() throws {
        let scratch = ExportScratch()
        let reader = try scratch.fixture()
        let exporter = ArchiveExporter(reader: reader)
        // A missing parent folder is made (`-o Mail/xmpp`); one that cannot be (a file is in the way) is an error.
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.folder + "/plain"))
        #expect {
            try exporter.export(ExportOptions(format: .txt), to: .path(scratch.folder + "/plain/sub/out.txt"))
        } throws: { error in
            "\(error)".contains("plain/sub") && "\(error)".contains("nothing was left under the final name")
        }
        try FileManager.default.removeItem(atPath: scratch.folder + "/plain")
        let full = open("/dev/full", O_WRONLY)
        defer { close(full) }
        #expect {
            try exporter.export(ExportOptions(format: .jsonl), to: .stream(fileDescriptor: full))
        } throws: { error in
            "\(error)".contains("No space left on device") && "\(error)".contains("disk is full")
        }
        #expect(throws: ExportError.self) { try exporter.export(ExportOptions(format: .html), to: .stream(fileDescriptor: 1)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.folder).sorted() == ["archive.sqlite", "archive.sqlite-shm", "archive.sqlite-wal", "files"].filter {
            FileManager.default.fileExists(atPath: scratch.folder + "/" + $0)
        })
    }

    @Test func quotedPrintableKeepsSeparatorsOutOfMailboxes() {
        let long = String(repeating: "x", count: 74) + "From the middle"
        let encoded = MIMEText.quotedPrintable("From a\n>From b\n.\n\(long)\nend =  ")
        for line in encoded.split(separator: "\n") {
            #expect(!line.drop { $0 == ">" }.hasPrefix("From "), "\(line)")
            #expect(line.utf8.count <= 76)
        }
        #expect(encoded.hasPrefix("=46rom a\n=3EFrom b\n=2E\n"))
        #expect(encoded.hasSuffix("end =3D =20"))
        #expect(MIMEText.headerText("Chat with 王伟") == "=?UTF-8?B?Q2hhdCB3aXRoIOeOi+S8nw==?=")
        #expect(MIMEText.mailbox(name: "Dr. \"Who\"", address: "who@example.com") == "\"Dr. \\\"Who\\\"\" <who@example.com>")
    }
}

/// The byte encoders as Strings, for the assertions above.
extension MailWriter {
    fileprivate static func mboxrdQuoted(_ text: String) -> String {
        var output: [UInt8] = []
        var text = text
        text.withUTF8 { bytes in mboxrdQuote(bytes) { output.append(contentsOf: $0) } }
        return String(decoding: output, as: UTF8.self)
    }
}

extension MIMEText {
    fileprivate static func quotedPrintable(_ text: String) -> String {
        var output: [UInt8] = []
        appendQuotedPrintable(text, to: &output)
        return String(decoding: output, as: UTF8.self)
    }
}
