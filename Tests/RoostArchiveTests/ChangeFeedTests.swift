import Foundation
import Testing
@testable import RoostArchive

/// The change feed (schema v18): `roost export --since-last` and the live mail mirror (issue 33).
@Suite struct ChangeFeedTests {
    private let utc = TimeZone(identifier: "UTC")!

    private func retraction(of target: String, at offset: Int64) -> ArchiveEvent {
        .annotation(MessageAnnotation(account: Fixture.account, conversation: Fixture.peer, kind: .retraction, target: target,
                                      from: Fixture.peer + "/phone", direction: .incoming, groupchat: false, occupantId: nil,
                                      senderName: nil, timestamp: Fixture.baseTime + offset, source: .live, messageId: "r-\(offset)"))
    }

    private func export(_ archive: String, format: ExportFormat, since name: String? = nil, to path: String) throws -> ExportSummary {
        var options = ExportOptions(format: format, include: Set(ExportInclusion.allCases), timeZone: utc, copyAttachments: false)
        options.sinceCursor = name
        let summary = try ArchiveExporter(reader: try ArchiveReader(path: archive)).export(options, to: .path(path))
        if let name, let position = summary.feedPosition { try ArchiveWriter(path: archive).setCursor(name, to: position) }
        return summary
    }

    @Test func sinceLastWritesOnlyWhatChangedAndImportsBackToTheSameArchive() throws {
        let archive = TemporaryArchive()
        let folder = archive.folder
        let writer = try archive.writer()
        _ = try writer.commitBlocking([
            .message(Fixture.message("first", at: 0, messageId: "m1")),
            .message(Fixture.message("secnod", at: 1_000, messageId: "m2")),
            .message(Fixture.message("third", at: 2_000, messageId: "m3")),
        ])
        let full = try export(archive.path, format: .jsonl, since: "backup", to: folder + "/1.jsonl")
        #expect(full.messages == 3)
        // Nothing changed: nothing written, the cursor stays.
        #expect(try export(archive.path, format: .jsonl, since: "backup", to: folder + "/empty.jsonl").messages == 0)

        _ = try writer.commitBlocking([
            .message(Fixture.message("second", at: 3_000, messageId: "m2b", replaces: "m2")),
            retraction(of: "m3", at: 4_000),
            .message(Fixture.message("fourth", at: 5_000, messageId: "m4")),
        ])
        let changes = try export(archive.path, format: .jsonl, since: "backup", to: folder + "/2.jsonl")
        #expect(changes.messages == 3, "the correction, the retraction and the new message")
        let lines = try String(contentsOfFile: folder + "/2.jsonl", encoding: .utf8)
        #expect(!lines.contains("\"first\""))
        // The two jsonl files, imported into a fresh archive in order, give the original back.
        let copy = folder + "/copy/archive.sqlite"
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: folder + "/1.jsonl")
        _ = try ArchiveImporter(archivePath: copy).importJSONLines(from: folder + "/2.jsonl")
        let whole = ExportOptions(format: .jsonl, include: Set(ExportInclusion.allCases), timeZone: utc, copyAttachments: false)
        #expect(try ArchiveExporter(reader: try archive.reader()).export(whole, to: .path(folder + "/original.jsonl")).messages == 4)
        _ = try ArchiveExporter(reader: try ArchiveReader(path: copy)).export(whole, to: .path(folder + "/copied.jsonl"))
        let expected = try String(contentsOfFile: folder + "/original.jsonl", encoding: .utf8)
        #expect(try String(contentsOfFile: folder + "/copied.jsonl", encoding: .utf8) == expected)

        // Every other format reads the same selection, with a cursor of its own.
        #expect(try export(archive.path, format: .txt, since: "text", to: folder + "/1.txt").messages == 4)
        _ = try writer.commitBlocking([.message(Fixture.message("fifth", at: 6_000, messageId: "m5"))])
        #expect(try export(archive.path, format: .txt, since: "text", to: folder + "/2.txt").messages == 1)
        #expect(try String(contentsOfFile: folder + "/2.txt", encoding: .utf8).contains("fifth"))
        #expect(expected.contains("\"retracted_by\""))
    }

    /// The mails of a Maildir tree by Message-ID (and where each is).
    private func mails(in folder: String) throws -> [String: (path: String, text: String)] {
        var found: [String: (path: String, text: String)] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
        while let relative = enumerator.nextObject() as? String {
            let parts = relative.split(separator: "/")
            guard parts.count >= 2, ["new", "cur"].contains(parts[parts.count - 2]) else { continue }
            let text = try String(contentsOfFile: folder + "/" + relative, encoding: .utf8)
            let id = try #require(text.split(separator: "\n").first { $0.hasPrefix("Message-ID: ") }).dropFirst("Message-ID: ".count)
            #expect(found[String(id)] == nil, "Message-ID \(id) twice: \(relative) and \(found[String(id)]?.path ?? "")")
            found[String(id)] = (relative, text)
        }
        return found
    }

    @Test func mirrorWritesWhatExportWritesOnceAndReplacesCorrectedMails() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([
            .message(Fixture.message("first", at: 0, messageId: "m1")),
            .message(Fixture.message("secnod", at: 1_000, messageId: "m2")),
            .message(Fixture.message("hi there", at: 1_500, conversation: "other@example.net", messageId: "o1")),
        ])
        let maildir = archive.folder + "/Mail"
        var settings = MirrorSettings(maildir: maildir)
        settings.timeZone = utc
        let mirror = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer)
        #expect(try mirror.catchUp() == 3)
        var mirrored = try mails(in: maildir)
        #expect(mirrored.count == 3)
        #expect(mirrored.values.allSatisfy { $0.path.contains("/new/") })
        #expect(Set(mirrored.values.map { String($0.path.split(separator: "/")[0]) }) == ["peer@example.com", "other@example.net"])

        _ = try writer.commitBlocking([
            .message(Fixture.message("second", at: 3_000, messageId: "m2b", replaces: "m2")),
            .message(Fixture.message("third", at: 4_000, messageId: "m3")),
        ])
        #expect(try mirror.catchUp() == 3, "the corrected mail written, its old file removed, the new one written")
        let before = mirrored
        mirrored = try mails(in: maildir)
        #expect(mirrored.count == 4)
        let corrected = try #require(mirrored.values.first { $0.text.contains("Earlier versions:") })
        #expect(before[try #require(mirrored.first { $0.value.path == corrected.path }?.key)] != nil, "same Message-ID as before")
        #expect(before.values.allSatisfy { old in old.text.contains("secnod") ? !FileManager.default.fileExists(atPath: maildir + "/" + old.path) : true })

        // The same bytes as `roost export --format maildir --split conversation`.
        var options = ExportOptions(format: .maildir, split: .conversation, timeZone: utc, copyAttachments: true)
        options.force = true
        _ = try ArchiveExporter(reader: try archive.reader()).export(options, to: .path(archive.folder + "/Export"))
        let exported = try mails(in: archive.folder + "/Export")
        #expect(exported.mapValues(\.text) == mirrored.mapValues(\.text))

        // A crash after the files were written, before the cursor moved: the next run writes nothing twice.
        try writer.setCursor(MailMirrorWriter.cursorName, to: 1)
        let again = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer)
        _ = try again.catchUp()
        #expect(try mails(in: maildir).mapValues(\.path) == mirrored.mapValues(\.path))

        // Forgotten: gone from the mirror too.
        let peerRows = try archive.reader().search(query: "third").map(\.id)
        _ = try writer.forget(ids: peerRows)
        _ = try again.catchUp()
        #expect(try mails(in: maildir).count == 3)

        // A rebuild writes the same mails under the same names.
        let live = try mails(in: maildir)
        let rebuilt = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer)
        #expect(try rebuilt.rebuild() > 0)
        #expect(try mails(in: maildir).mapValues(\.path) == live.mapValues(\.path))
        #expect(try mails(in: maildir).mapValues(\.text) == live.mapValues(\.text))

        // A power cut after a pass's renames, before its sync: a name in `new/` without its data. The next run writes
        // it again; a mail the user's reader moved to `cur/` and flagged meanwhile stays there, once.
        let names = live.keys.sorted()
        let (lostID, readID) = (names[0], names[1])
        let lost = maildir + "/" + live[lostID]!.path
        try Data().write(to: URL(fileURLWithPath: lost))
        let readPath = live[readID]!.path.replacingOccurrences(of: "/new/", with: "/cur/") + ":2,S"
        try FileManager.default.moveItem(atPath: maildir + "/" + live[readID]!.path, toPath: maildir + "/" + readPath)
        try writer.setCursor(MailMirrorWriter.cursorName, to: 0)
        let redone = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer)
        _ = try redone.catchUp()
        let after = try mails(in: maildir)
        #expect(after.mapValues(\.text) == live.mapValues(\.text))
        #expect(after[lostID]?.path == live[lostID]?.path)
        #expect(after[readID]?.path == readPath)
    }

    /// A pass renders its rows in ascending order and chains each mail to the one it rendered before in the same
    /// Maildir only when no row it does not render lies between them: a correction of an old message and a new
    /// message in one pass, with rows between them it does not rewrite, still thread as the export does.
    @Test func mirrorThreadsAcrossRowsAPassDoesNotRewrite() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let splits: [ExportSplit] = [.conversation, .month, .none]
        /// Each split's mirror (they share the cursor: each pass starts from `position`, nil: the first pass).
        func mirror(_ position: Int64?) throws {
            for split in splits {
                var settings = MirrorSettings(maildir: archive.folder + "/Mail-\(split)")
                (settings.timeZone, settings.split) = (utc, split)
                try writer.setCursor(MailMirrorWriter.cursorName, to: position ?? -1)
                _ = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer).catchUp()
            }
        }
        let peer = ["first", "second", "third"].enumerated().map { index, text in
            ArchiveEvent.message(Fixture.message(text, at: Int64(index) * 1_000, messageId: "m\(index + 1)"))
        }
        _ = try writer.commitBlocking(peer + [.message(Fixture.message("elsewhere", at: 1_500, conversation: "other@example.net", messageId: "o1"))])
        try mirror(nil)
        let mirrored = try #require(try archive.reader().feedPosition(cursor: MailMirrorWriter.cursorName).cursor)
        _ = try writer.commitBlocking([
            .message(Fixture.message("frist", at: 3_000, messageId: "m1b", replaces: "m1")),
            .message(Fixture.message("fourth", at: 4_000, messageId: "m4")),
            .message(Fixture.message("again", at: 4_500, conversation: "other@example.net", messageId: "o2")),
        ])
        try mirror(mirrored)
        for split in splits {
            var options = ExportOptions(format: .maildir, split: split, timeZone: utc, copyAttachments: true)
            options.force = true
            let export = archive.folder + "/Export-\(split)"
            _ = try ArchiveExporter(reader: try archive.reader()).export(options, to: .path(export))
            let mails = try mails(in: archive.folder + "/Mail-\(split)")
            #expect(mails.count == 6)
            #expect(try self.mails(in: export).mapValues(\.text) == mails.mapValues(\.text), "split \(split)")
            let fourth = try #require(mails.values.first { $0.text.contains("fourth") })
            let third = try #require(mails.first { $0.value.text.contains("third") }).key
            #expect(fourth.text.contains("In-Reply-To: \(third)"), "split \(split)")
        }
    }

    /// Where the filesystem has no unnamed files (O_TMPFILE), each mail is named in `tmp/` and renamed into `new/`;
    /// where the kernel does not link an unnamed file by its descriptor (before 6.10), it is linked by its
    /// `/proc/self/fd` name: the same mails, and a pass redone over them replaces each once.
    @Test(arguments: ["named", "proc"]) func mirrorNamesItsFilesWhereUnnamedOnesAreMissing(way: String) throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking((1...3).map { ArchiveEvent.message(Fixture.message("named \($0)", at: Int64($0) * 1_000, messageId: "n\($0)")) })
        var settings = MirrorSettings(maildir: archive.folder + "/Mail")
        settings.timeZone = utc
        for _ in 1...2 {
            try writer.setCursor(MailMirrorWriter.cursorName, to: 0)
            let mirror = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer)
            if way == "named" { mirror.unnamedFiles = false } else { mirror.descriptorLinks = false }
            #expect(try mirror.catchUp() == 3)
            #expect(way == "named" || mirror.unnamedFiles, "linked by their /proc/self/fd names, not fallen back to named files")
        }
        var options = ExportOptions(format: .maildir, split: .conversation, timeZone: utc, copyAttachments: true)
        options.force = true
        _ = try ArchiveExporter(reader: try archive.reader()).export(options, to: .path(archive.folder + "/Export"))
        let mirrored = try mails(in: archive.folder + "/Mail")
        #expect(mirrored.count == 3 && mirrored.values.allSatisfy { $0.path.contains("/new/") })
        #expect(try mails(in: archive.folder + "/Export").mapValues(\.text) == mirrored.mapValues(\.text))
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder + "/Mail/peer@example.com/tmp").isEmpty)
    }

    /// A first start over a large archive, and a flood, are many batches of `batchSize` rows; the live mirror is told
    /// as each begins (`roost status`'s `writing_since`, so a long first start is not taken for a slow disk).
    @Test func mirrorSaysWhenEachBatchBegins() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        func commit(_ range: ClosedRange<Int>) throws {
            _ = try writer.commitBlocking(range.map { ArchiveEvent.message(Fixture.message("batch \($0)", at: Int64($0) * 1_000, messageId: "b\($0)")) })
        }
        let size = MailMirrorWriter.batchSize
        try commit(1...(size * 2 + 200))
        var settings = MirrorSettings(maildir: archive.folder + "/Mail")
        settings.timeZone = utc
        let mirror = try MailMirrorWriter(settings: settings, reader: try archive.reader(), writer: writer)
        var begun = 0
        mirror.batchBegins = { begun += 1 }
        #expect(try mirror.catchUp() == size * 2 + 200)
        #expect(begun == 3, "the first pass: three batches")
        try commit((size * 2 + 201)...(size * 3 + 400))
        #expect(try mirror.catchUp() == size + 200)
        #expect(begun == 5, "then the changes: two more")
    }

    /// The mirror keeps where each mail is as numbers and makes its path again: every name it writes, in `new/` or
    /// moved to `cur/` with a reader's flags, comes back the same; names it does not write, and a row's second
    /// file, are kept as they are.
    @Test func mirrorKeepsItsMailsPathsAsNumbersAndMakesThemAgain() {
        var files = MailFiles()
        let folder = "/home/u/Mail/peer@example.com"
        let id = "<roost.0123456789abcdef0123@example>"
        for (row, timestamp) in [(Int64(7), Int64(1_700_000_000_123)), (8, -1), (9, 0)] {
            let numbered = files.set(row, folder: folder, timestamp: timestamp, id: id, version: 2)
            #expect(numbered)
            var stem: [UInt8] = []
            MailWriter.appendStem(timestamp, id: id, to: &stem)
            let name = String(decoding: stem, as: UTF8.self) + "R\(row)V2.roost"
            #expect(files.paths(of: row) == ["\(folder)/new/\(name)"])
            for suffix in ["", ":2,", ":2,FS"] {
                files.set(row, path: "\(folder)/cur/\(name)\(suffix)")
                #expect(files.paths(of: row) == ["\(folder)/cur/\(name)\(suffix)"])
            }
        }
        let upperCase = files.set(10, folder: folder, timestamp: 0, id: "<roost.ABCDEF0123456789@x>", version: 1)
        #expect(!upperCase, "a hash that is not 16 lower-case hex digits is kept as a path")
        let odd = ["\(folder)/new/1.M5P0123R11V1.roost", "\(folder)/cur/01.M5P0123456789abcdefR11V1.roost:2,S",
                   "/m/new/1.M5P0123456789abcdefR12V1.roost"]
        for path in odd.prefix(2) { files.add(11, path: path) }
        #expect(files.paths(of: 11) == Array(odd.prefix(2)), "names this mirror does not write are kept as they are")
        files.add(12, path: odd[2])
        files.add(12, path: "/m/cur/1.M5P0123456789abcdefR12V2.roost:2,S")
        #expect(files.paths(of: 12) == [odd[2], "/m/cur/1.M5P0123456789abcdefR12V2.roost:2,S"])
        files.remove(7)
        #expect(files.paths(of: 7).isEmpty && Set(files.rows) == [8, 9, 11, 12])
    }
}
