import Foundation
import Testing
@testable import RoostArchive

@Suite("File store and attachment rows")
struct FileStoreTests {
    private func mode(_ path: String) -> Int {
        var info = stat()
        stat(path, &info)
        return Int(info.st_mode & 0o777)
    }

    @Test func storesByContentPrivatelyAndOnce() throws {
        let archive = TemporaryArchive()
        let store = FileStore(archivePath: archive.path)
        let first = try store.put(Data("hello files\n".utf8))
        // sha256("hello files\n")
        #expect(first.sha256 == "cf2a1999088291aea704804dac731691b768e1fc6afcfcfcaeb6a9ffc7ab7f52")
        #expect(first.path == store.path(forSHA256: first.sha256))
        #expect(first.path == archive.folder + "/data/files/sha256/\(first.sha256.prefix(2))/\(first.sha256.dropFirst(2))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: first.path)) == Data("hello files\n".utf8))
        #expect(mode(first.path) == 0o600)
        #expect(mode(archive.folder + "/data/files") == 0o700 && mode(archive.folder + "/data/files/sha256") == 0o700)
        #expect(mode((first.path as NSString).deletingLastPathComponent) == 0o700)
        let again = try store.put(Data("hello files\n".utf8))
        #expect(again == first, "the same bytes are one file")
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder + "/data/files/tmp").isEmpty)
        #expect(store.check(sha256: first.sha256) == .intact)
    }

    @Test func advertisedHashesMustMatchOrNothingIsKept() throws {
        let archive = TemporaryArchive()
        let store = FileStore(archivePath: archive.path)
        let bytes = Data("the right bytes".utf8)
        let right = try store.put(bytes)
        let sha256 = Data(Hex.bytes(right.sha256)!).base64EncodedString()
        // Checked when advertised (unpadded base64 too), ignored when unknown.
        let other = try FileStore(root: archive.folder + "/other")
            .put(bytes, checking: [FileHash(algorithm: "sha-256", base64: String(sha256.dropLast())), FileHash(algorithm: "x-unknown", base64: "AA==")])
        #expect(other.sha256 == right.sha256)
        let elsewhere = FileStore(root: archive.folder + "/elsewhere")
        #expect(throws: FileStoreError.hashMismatch(algorithm: "sha-256")) {
            try elsewhere.put(Data("tampered bytes".utf8), checking: [FileHash(algorithm: "sha-256", base64: sha256)])
        }
        #expect(throws: FileStoreError.hashMismatch(algorithm: "sha3-256")) {
            try elsewhere.put(bytes, checking: [FileHash(algorithm: "sha3-256", base64: sha256)])
        }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: archive.folder + "/elsewhere/sha256")) == nil, "nothing was kept")
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.folder + "/elsewhere/tmp").isEmpty)
    }

    @Test func checkFindsDamageAndLoss() throws {
        let archive = TemporaryArchive()
        let store = FileStore(archivePath: archive.path)
        let file = try store.put(Data(repeating: 42, count: 3_000_000))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file.path))
        try handle.seek(toOffset: 1_500_000)
        handle.write(Data([0]))
        try handle.close()
        guard case .corrupt = store.check(sha256: file.sha256) else {
            Issue.record("a changed byte must be found")
            return
        }
        try FileManager.default.removeItem(atPath: file.path)
        #expect(store.check(sha256: file.sha256) == .missing)
    }

    @Test func attachmentRowsStatesAndQueries() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let store = FileStore(archivePath: archive.path)
        let kept = try store.put(Data("png bytes".utf8))
        let committed = try writer.commitReportingDownloads([
            .message(Fixture.message("https://up.example/a/cat.png", at: 1, stanzaId: "f1", attachments: [
                AttachmentRecord(url: "https://up.example/a/cat.png", mime: "image/png", size: 9, name: "cat.png", sha256: kept.sha256, state: .stored),
            ])),
            .message(Fixture.message("the report", at: 2, stanzaId: "f2", attachments: [
                AttachmentRecord(url: "https://up.example/b/Q3%20report.pdf", mime: "application/pdf", name: "Q3 report.pdf",
                                 hashes: [FileHash(algorithm: "sha-256", base64: "AAAA")]),
            ])),
            .message(Fixture.message("https://up.example/c/clip.mp4", at: 3, stanzaId: "f3", attachments: [
                AttachmentRecord(url: "https://up.example/c/clip.mp4"),
            ])),
        ])
        let reader = try archive.reader()
        let all = try reader.files(matching: "")
        #expect(all.count == 3)
        #expect(committed.newDownloads.count == 2, "only the rows waiting for a download are handed to the worker")
        #expect(committed.newDownloads.map(\.event) == [1, 2], "each with the event that added it")
        #expect(Set(committed.newDownloads.map(\.attachment)) == Set(all.filter { $0.attachment.state == .pending }.map(\.id)))
        let cat = try #require(all.first { $0.attachment.name == "cat.png" })
        #expect(cat.attachment.state == .stored && cat.attachment.localPath == kept.path)
        let report = try #require(all.first { $0.attachment.name == "Q3 report.pdf" })
        #expect(report.attachment.state == .pending && report.attachment.hashes == [FileHash(algorithm: "sha-256", base64: "AAAA")])
        #expect(report.attachment.localPath == nil)
        #expect(Set(try reader.dueFiles(now: Fixture.baseTime, limit: 10)) == Set(all.filter { $0.attachment.state == .pending }.map(\.id)))

        // The worker's outcome, and its retry schedule.
        try writer.update(AttachmentUpdate(id: report.id, state: .failed("http-503"), attempts: 1, nextAttemptAt: Fixture.baseTime + 60_000))
        #expect(try reader.dueFiles(now: Fixture.baseTime, limit: 10).count == 1)
        #expect(try reader.nextScheduledFileAttempt() == Fixture.baseTime + 60_000)
        #expect(try reader.dueFiles(now: Fixture.baseTime + 60_000, limit: 10).contains(report.id))
        let clip = try #require(all.first { $0.attachment.name == nil })
        #expect(clip.attachment.displayName == "clip.mp4")
        try writer.update(AttachmentUpdate(id: clip.id, state: .stored, sha256: kept.sha256, size: 9, mime: "video/mp4", attempts: 1))
        #expect(try reader.file(id: clip.id)?.attachment.mime == "video/mp4")

        // Search filters over files.
        func count(_ query: String) throws -> Int { try reader.search(query: query, limit: 100).count }
        #expect(try count("has:file") == 3)
        #expect(try count("has:image") == 1)
        #expect(try count("has:video") == 1)
        #expect(try count("filename:report") == 1)
        #expect(try count("filename:*.PDF") == 1, "case does not matter")
        #expect(try count("filename:clip.mp4") == 1, "a name from the URL when none was given")
        #expect(try count("filename:*.png OR filename:*.mp4") == 2)
        #expect(try count("type:application/pdf") == 1)
        #expect(try count("type:image") == 1 && count("type:image/*") == 1)
        #expect(try count("has:image the") == 0)
        #expect(try reader.files(matching: "has:image").map(\.attachment.name) == ["cat.png"])
        #expect(throws: ArchiveError.self) { try reader.search(query: "has:pictures-of-cats") }
        #expect(throws: ArchiveError.self) { try reader.search(query: "type:*/png") }

        // Search rows carry their files (for `[file NAME SIZE]`).
        let row = try #require(try reader.search(query: "has:image").first)
        #expect(row.attachments.map(\.displayName) == ["cat.png"] && row.attachments.first?.localPath == kept.path)

        // verify: a lost file goes back to download, keeping its hash to check the new copy.
        try FileManager.default.removeItem(atPath: kept.path)
        let checked = try FileStoreVerification(archivePath: archive.path).run(repair: true)
        #expect(checked.checked == 1 && checked.missing == [kept.sha256] && checked.requeued == 2)
        let requeued = try #require(try reader.file(id: cat.id))
        #expect(requeued.attachment.state == .pending && requeued.attachment.sha256 == nil)
        #expect(requeued.attachment.hashes.first?.algorithm == "sha-256")
    }

    @Test func versionOneArchivesMigrate() throws {
        let archive = TemporaryArchive()
        try FileManager.default.createDirectory(atPath: archive.folder + "/data", withIntermediateDirectories: true)
        do {
            let database = try Database(path: archive.path, mode: .readWrite)
            try database.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)")
            try database.execute(SchemaV1.sql)
            try database.execute("INSERT INTO schema_migrations VALUES (1, 'initial schema', 0)")
            try database.execute("INSERT INTO accounts (id, jid, created_at) VALUES (1, 'me@example.org', 0)")
            try database.execute("""
                INSERT INTO messages (id, account_id, conversation, direction, type, from_jid, from_bare, to_jid, to_bare, timestamp,
                                      received_at, source, dedup_key) VALUES (1, 1, 'p@example.com', 'in', 'chat', 'p@example.com/x',
                                      'p@example.com', 'me@example.org', 'me@example.org', 0, 0, 'live', 'k')
                """)
            try database.execute("INSERT INTO attachments (message_row, url, local_path) VALUES (1, 'https://x/a.png', '/old/a.png')")
            try database.execute("INSERT INTO attachments (message_row, url) VALUES (1, 'https://x/b.png')")
        }
        _ = try archive.writer()
        let files = try archive.reader().files(matching: "")
        #expect(files.map(\.attachment.state).sorted { $0.rawValue < $1.rawValue } == [.pending, .stored])
        #expect(files.first { $0.attachment.url == "https://x/a.png" }?.attachment.localPath == "/old/a.png")
    }
}
