import Foundation
import RoostArchive
import RoostTestSupport
@testable import roost

/// An archive a person uses every day, for the CLI tests and the documentation examples: two accounts,
/// contacts known by roster name, nickname and full name, Chinese text, files, chat states, presence, a
/// pending friend request asked three times, and messages both from January 2026 and from yesterday.
final class EverydayFixture {
    let folder: String
    var archive: String { folder + "/data/archive.sqlite" }
    var config: String { folder + "/config.ini" }
    /// 2026-01-15T12:00:00Z
    static let january: Int64 = 1_768_478_400_000
    let yesterday = Int64(Date().timeIntervalSince1970 * 1000) - 86_400_000

    init(defaultAccount: String? = nil, accounts: [String] = ["me@example.org", "work@example.net"]) throws {
        folder = NSTemporaryDirectory() + "roost-everyday-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/home", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var text = "[archive]\npath = \(archive)\n"
        if let defaultAccount { text += "[general]\ndefault_account = \(defaultAccount)\n" }
        for account in accounts {
            // Port 9 of loopback: nothing listens, so a command that would reach a server fails at once.
            text += "[account \(account)]\npassword = not-a-real-password\nhost = 127.0.0.1\nport = 9\n"
        }
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: config)
        try fill()
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    private func fill() throws {
        let writer = try ArchiveWriter(path: archive, durability: .off)
        let me = "me@example.org", t = Self.january
        func message(_ body: String, _ at: Int64, peer: String, account: String = me, out: Bool = false, id: String,
                     senderName: String? = nil, attachments: [AttachmentRecord] = []) -> ArchiveEvent {
            .message(MessageRecord(account: account, conversation: peer, direction: out ? .outgoing : .incoming,
                                   from: out ? account + "/roost" : peer + "/phone", to: out ? peer : account, senderName: senderName,
                                   body: body, timestamp: at, stanzaId: "s-\(id)", stanzaIdBy: account, stanzaIdTrusted: true,
                                   messageId: id, attachments: attachments))
        }
        let picture = AttachmentRecord(url: "https://upload.example.org/holiday.png", mime: "image/png", size: 1_200_000, name: "holiday.png")
        _ = try writer.commitBlocking([
            .rosterItem(RosterItemRecord(account: me, jid: "bob@example.org", name: "Bob", groups: ["Friends"], subscription: "both", timestamp: t)),
            .vCard(VCardRecord(account: me, jid: "bob@example.org", nickname: "Bobby B", fullName: "Robert Example", fetchedAt: t)),
            .rosterItem(RosterItemRecord(account: me, jid: "bert@example.org", name: "Bert", subscription: "both", timestamp: t)),
            .rosterItem(RosterItemRecord(account: me, jid: "alice@example.org", name: "Alice", subscription: "both", timestamp: t)),
            .rosterItem(RosterItemRecord(account: me, jid: "friend@example.org", name: "Friend", subscription: "both", timestamp: t)),
            .vCard(VCardRecord(account: me, jid: "wang@example.cn", nickname: "wang", fullName: "王伟", fetchedAt: t)),
            message("good morning Bob", t, peer: "bob@example.org", id: "m1", senderName: "bob@example.org"),
            message("travelling to Paris, no spam", t + 60_000, peer: "bob@example.org", id: "m2", senderName: "Bobby B"),
            message("see you at 5", t + 120_000, peer: "bob@example.org", out: true, id: "m3"),
            message("", t + 180_000, peer: "bob@example.org", id: "m4", attachments: [picture]),
            message("travel offer", yesterday, peer: "bob@example.org", id: "m5", senderName: "Bob"),
            message("hello from Alice", t + 3_600_000, peer: "alice@example.org", id: "a1"),
            message("你好，明天见", t + 7_200_000, peer: "wang@example.cn", id: "w1"),
            message("好友 消息", yesterday + 1000, peer: "wang@example.cn", id: "w2"),
            message("from friend", yesterday + 2000, peer: "friend@example.org", id: "f1"),
            message("work travel plans", yesterday + 3000, peer: "bob@example.org", account: "work@example.net", id: "x1"),
            .chatState(ChatStateRecord(account: me, conversation: "bob@example.org", from: "bob@example.org/phone", state: .composing,
                                       timestamp: t - 1000)),
            .presence(PresenceRecord(account: me, contact: "bob@example.org", resource: "phone", availability: .available, show: "away",
                                     status: "lunch", timestamp: t + 30_000)),
            .presence(PresenceRecord(account: me, contact: "bob@example.org", resource: "phone", availability: .unavailable, timestamp: t + 90_000)),
            .presence(PresenceRecord(account: me, contact: "shy@example.org", resource: nil, availability: .unavailable, timestamp: yesterday)),
            .subscription(SubscriptionRecord(account: me, jid: "carol@example.org", direction: .incoming, kind: .subscribe, message: "hi, Carol here",
                                             timestamp: t + 10_000)),
            .subscription(SubscriptionRecord(account: me, jid: "carol@example.org", direction: .incoming, kind: .subscribe, timestamp: yesterday)),
            .subscription(SubscriptionRecord(account: me, jid: "carol@example.org", direction: .incoming, kind: .subscribe, timestamp: yesterday + 5000)),
        ])
    }

    var environment: [String: String] {
        ["HOME": folder + "/home", "XDG_RUNTIME_DIR": folder + "/run", "PATH": "/usr/bin:/bin", "TZ": "UTC", "LANG": "C.UTF-8"]
    }

    /// The built binary with this fixture's config, in its home folder.
    func roost(_ arguments: [String], environment extra: [String: String] = [:], stdin: String? = nil) throws -> RoostBinary.Result {
        try RoostBinary.run(["--config", config] + arguments, environment: environment.merging(extra) { $1 }, stdin: stdin,
                            directory: folder + "/home")
    }

    /// In process, with stdout as a terminal or not (colour, pager and notes depend on it).
    func inProcess(_ arguments: [String], terminal: Bool, environment extra: [String: String] = [:]) async -> CLIRun {
        let out = CapturedText(), err = CapturedText()
        let output = Output(standardOutput: out, standardError: err, standardOutputIsTTY: terminal, standardErrorIsTTY: terminal)
        let status = await RoostCLI(commands: RoostCLI.allCommands).run(arguments: ["roost", "--config", config] + arguments, output: output,
                                                                        environment: environment.merging(extra) { $1 })
        return CLIRun(status: status, stdout: out.text, stderr: err.text)
    }

    /// The short id of the message with this body.
    func shortID(of body: String) throws -> String {
        let row = try ArchiveReader(path: archive).search(query: "\"\(body)\"", limit: 1).first
        guard let row else { throw WaitTimedOut(what: "a message '\(body)' in the fixture") }
        return ShortID.text(for: row.id)
    }
}
