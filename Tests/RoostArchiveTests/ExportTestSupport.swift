import Foundation
import Testing
@testable import RoostArchive

/// A small archive with everything export must handle: several languages (Chinese, Russian, Arabic, emoji),
/// corrections, a message that looks like markup, a body line starting with "From ", multi-line text,
/// a groupchat, a second account, chat states, presence, contacts with a stored avatar, attachments (one
/// stored locally, one not), a raw stanza and a stanza-id adopted after a correction.
enum ExportFixture {
    static let account = "me@example.org"
    static let otherAccount = "work@example.net"
    static let alice = "alice@example.com"
    static let wang = "wang@example.cn"
    static let room = "lounge@conference.example.org"
    /// 2026-01-15T12:00:00Z, a Thursday.
    static let t0: Int64 = 1_768_478_400_000
    static let scriptText = "look: <script>alert(1)</script> & \"quotes\""

    /// Builds the archive; `files` is a folder for the attachment and avatar files.
    static func build(at path: String, files: String) throws {
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let photo = files + "/alice.png"
        try Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
            .write(to: URL(fileURLWithPath: photo))
        let picture = files + "/holiday photo.png"
        try FileManager.default.copyItem(atPath: photo, toPath: picture)
        let writer = try ArchiveWriter(path: path, durability: .off)
        func message(_ body: String?, at seconds: Int64, _ direction: MessageDirection = .incoming, with peer: String = alice,
                     account: String = account, kind: MessageKind = .chat, from: String? = nil, id: String? = nil,
                     stanzaId: String? = nil, trusted: Bool = true, replaces: String? = nil, sender: String? = nil,
                     subject: String? = nil, raw: String? = nil, attachments: [AttachmentRecord] = [],
                     source: MessageSource = .live) -> ArchiveEvent {
            let sender_ = from ?? (direction == .incoming ? peer + "/phone" : account + "/roost")
            return .message(MessageRecord(
                account: account, conversation: peer, direction: direction, kind: kind, from: sender_,
                to: direction == .incoming ? account + "/roost" : peer, senderName: sender, body: body, subject: subject,
                timestamp: t0 + seconds * 1000, receivedAt: t0 + seconds * 1000 + 250, stanzaId: stanzaId,
                stanzaIdBy: stanzaId == nil ? nil : account, stanzaIdTrusted: trusted && stanzaId != nil, messageId: id,
                replaces: replaces, source: source, rawStanza: raw, attachments: attachments))
        }
        _ = try writer.commitBlocking([
            .rosterItem(RosterItemRecord(account: account, jid: alice, name: "Alice Liddell", groups: ["Friends", "a/b"],
                                         subscription: "both", timestamp: t0 - 86_400_000)),
            .vCard(VCardRecord(account: account, jid: alice, nickname: "ally", fullName: "Alice L.", photoHash: "abc123",
                               photoPath: photo, raw: "<vCard xmlns='vcard-temp'><NICKNAME>ally</NICKNAME></vCard>",
                               fetchedAt: t0 - 3_600_000)),
            .rosterItem(RosterItemRecord(account: account, jid: wang, name: "王伟", subscription: "both", timestamp: t0 - 86_400_000)),
            .rosterItem(RosterItemRecord(account: account, jid: "gone@example.com", name: "Gone", subscription: "to",
                                         timestamp: t0 - 86_400_000)),
            .rosterRemoval(account: account, jid: "gone@example.com", timestamp: t0 - 40_000_000),
            .presence(PresenceRecord(account: account, contact: alice, resource: "phone", availability: .available, show: "away",
                                     status: "on the train", priority: 5, timestamp: t0 - 5000)),
            .chatState(ChatStateRecord(account: account, conversation: alice, from: alice + "/phone", state: .composing, timestamp: t0 - 1000)),
            message("Hello Bob!\nHow are you?", at: 0, id: "a1", stanzaId: "s-a1",
                    raw: "<message from='alice@example.com/phone' id='a1' type='chat'><body>Hello Bob!</body></message>"),
            .chatState(ChatStateRecord(account: account, conversation: alice, from: alice + "/phone", state: .active, timestamp: t0)),
            message("Fine, thanks — and you? 😀", at: 60, .outgoing, id: "b1", stanzaId: "s-b1"),
            message(scriptText, at: 120, id: "a2", stanzaId: "s-a2"),
            message("Teh typo", at: 180, id: "a3"),
            message("The typo", at: 185, id: "a3c", replaces: "a3"),
            message("The typo, fixed twice", at: 190, id: "a3d", replaces: "a3"),
            message(nil, at: 200, id: "a4", stanzaId: "s-a4", attachments: [
                AttachmentRecord(url: "https://upload.example.com/x/holiday%20photo.png", localPath: picture, mime: "image/png", size: 70),
                AttachmentRecord(url: "https://upload.example.com/y/report.pdf", localPath: files + "/missing.pdf", mime: "application/pdf"),
            ]),
            message("From here on\n>From the quote\n.\nlast line with trailing space ", at: 240, .outgoing, id: "b2"),
            .presence(PresenceRecord(account: account, contact: alice, resource: "phone", availability: .unavailable, timestamp: t0 + 300_000)),
            message("你好，我们明天见面吧。", at: 400, with: wang, id: "w1", stanzaId: "s-w1"),
            message("好的！Привет, как дела? مرحبا", at: 460, .outgoing, with: wang, id: "w2"),
            message("Room topic", at: 500, with: room, kind: .groupchat, from: room + "/carol", id: "r1", stanzaId: "s-r1",
                    trusted: false, sender: "carol", subject: "Welcome to the lounge"),
            message("hi all", at: 520, with: room, kind: .groupchat, from: room + "/me", id: "r2", sender: "me"),
            // Next day, and one month later, for day headings and month splits.
            message("Good morning", at: 86_400, id: "a5", stanzaId: "s-a5", source: .mam),
            message("See you in February", at: 86_400 * 20, .outgoing, id: "b3"),
            message("Work message", at: 600, with: "boss@example.net", account: otherAccount, id: "x1"),
        ])
        // The stanza-id of "Teh typo" arrives later (MAM), after its corrections: the row adopts it.
        _ = try writer.commitBlocking([
            message("Teh typo", at: 180, id: "a3", stanzaId: "s-a3", source: .mam),
        ])
    }
}

/// A fresh folder for one test, removed afterwards.
final class ExportScratch {
    let folder: String
    var archive: String { folder + "/archive.sqlite" }
    var files: String { folder + "/files" }

    init() {
        folder = NSTemporaryDirectory() + "roost-export-tests-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    func fixture() throws -> ArchiveReader {
        try ExportFixture.build(at: archive, files: files)
        return try ArchiveReader(path: archive)
    }

    func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }
}

/// Runs an external tool; a missing tool is a clear failure, not a skip (CI installs them, see the report).
struct ExternalTool {
    let status: Int32
    let stdout: String
    let stderr: String

    static func locate(_ name: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") + ["/usr/bin", "/bin"] {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static func require(_ name: String, package: String) throws -> String {
        guard let path = locate(name) else {
            Issue.record("\(name) is not installed: `apt-get install \(package)` (contrib/scripts/install-deps installs it)")
            throw MissingTool(name: name)
        }
        return path
    }

    struct MissingTool: Error { let name: String }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil) throws -> ExternalTool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
        try inp.fileHandleForWriting.close()
        // Read both pipes concurrently so a chatty tool cannot fill one and block.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ExternalTool(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                            stderr: String(decoding: errData, as: UTF8.self))
    }

    static func python(_ script: String, _ arguments: [String] = []) throws -> ExternalTool {
        let python = try require("python3", package: "python3")
        return try run(python, ["-c", script] + arguments)
    }
}
