import Foundation
import RoostCore
import Testing
import RoostTestSupport
import Synchronization

/// `[mirror]` (issue 33): the Maildir `roost run` keeps while it archives, against a private Prosody, slixmpp
/// peers and the real readers (Python's `mailbox`, notmuch).
@Suite(.serialized) struct MirrorEndToEndTests {
    /// The mails of a Maildir tree: Message-ID → (path below `folder`, text).
    static func mails(in folder: String) throws -> [String: (path: String, text: String)] {
        var found: [String: (path: String, text: String)] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [:] }
        while let relative = enumerator.nextObject() as? String {
            let parts = relative.split(separator: "/")
            guard parts.count >= 2, ["new", "cur"].contains(parts[parts.count - 2]) else { continue }
            let text = try String(contentsOfFile: folder + "/" + relative, encoding: .utf8)
            let id = String(try #require(text.split(separator: "\n").first { $0.hasPrefix("Message-ID: ") }).dropFirst("Message-ID: ".count))
            #expect(found[id] == nil, "Message-ID \(id) twice: \(relative) and \(found[id]?.path ?? "")")
            found[id] = (relative, text)
        }
        return found
    }

    /// How many mails the Maildir tree holds (names only, no reading).
    static func count(in folder: String) -> Int {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return 0 }
        var count = 0
        while let relative = enumerator.nextObject() as? String {
            let parts = relative.split(separator: "/")
            if parts.count >= 2, ["new", "cur"].contains(parts[parts.count - 2]) { count += 1 }
        }
        return count
    }

    /// bob sends one message (ids `ID-1`) to alice with slixmpp; `extra`: more xmpp-peer.py options (`--extra-xml`).
    static func send(_ rig: ZeroLossRig, _ body: String, id: String, extra: [String] = []) async throws {
        let peer = try RoostBinary.startProgram("/usr/bin/python3", [
            TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py", "--jid", "\(rig.bob)/send", "--password", rig.bobPassword,
            "--host", rig.server.host, "--port", String(rig.server.port), "--ca", rig.server.caFile,
            "send", rig.alice.description, body, "--id-prefix", id] + extra)
        try await waitUntil("the peer to send", timeout: .seconds(60)) { !peer.isRunning }
        #expect(peer.stop().status == 0)
    }

    private func rig(maildir: String) async throws -> ZeroLossRig {
        try await ZeroLossRig.make(general: "\n[mirror]\nmaildir = \(maildir)\n")
    }

    @Test func killNineMidFloodLeavesEachMessageInTheMirrorOnce() async throws {
        let maildir = NSTemporaryDirectory() + "roost-mirror-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: maildir) }
        let rig = try await rig(maildir: maildir)
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let prefix = "mirror-\(UUID().uuidString.prefix(6))"
        let messages = 400
        // Paced (16 s); the kill comes from a thread of its own that watches the Maildir every 5 ms (`killWhen`), so a
        // cooperative pool busy with other tests cannot make it late.
        let flood = try PeerFlood(rig, to: rig.alice, count: messages, prefix: prefix, perSecond: 25)
        let pid = try #require(await roost.pid)
        let killed = try await killWhen(pid, within: 120, every: 5_000) { { Self.count(in: maildir) >= 40 } }
        #expect(killed, "40 mails in the mirror within 120 s")
        // Killed: nothing more arrives in the Maildir until the restart.
        let atKill = Self.count(in: maildir)
        #expect(atKill < messages, "the kill must land mid-flood: \(atKill) of \(messages) mirrored")
        try await roost.killAndRestart(untilReady: true)
        try await flood.finish()
        try await waitUntil("the whole flood archived", timeout: .seconds(240)) {
            try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") >= messages
        }
        let status = try await rig.waitForStatus("the mirror to catch up", timeout: .seconds(60)) { status in
            (status["backlog"] as? Int) == 0 && status["position"] as? Int != nil && status["position"] as? Int == status["latest"] as? Int
        }
        #expect(status["maildir"] as? String == maildir)
        let log = await roost.stop()
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: prefix, messages: messages, chatStates: 0, log: log)

        // Each archived message once, as the mail `roost export --format maildir` writes for it.
        let mirrored = try Self.mails(in: maildir)
        #expect(mirrored.count == messages, "\(mirrored.count) mails for \(messages) messages")
        let export = rig.dir.path + "/Export"
        let exported = try RoostBinary.run(["export", "--config", rig.config, "--format", "maildir", "--output", export])
        #expect(exported.status == 0, "\(exported.stderr)")
        let expected = try Self.mails(in: export)
        #expect(Set(mirrored.keys) == Set(expected.keys))
        #expect(mirrored.keys.allSatisfy { mirrored[$0]?.text == expected[$0]?.text })
        #expect(mirrored.values.allSatisfy { $0.path.hasPrefix("\(rig.bob)/new/") })

        // Python's mailbox reads the conversation's Maildir.
        let python = try RoostBinary.runProgram("/usr/bin/python3", ["-c", """
            import mailbox, sys
            box = mailbox.Maildir(sys.argv[1], factory=None, create=False)
            print(sum(1 for m in box if m.get_payload(decode=True).decode().startswith("msg-") and m["Message-ID"] in sys.argv[2:]))
            """, maildir + "/" + rig.bob.description] + Array(mirrored.keys))
        #expect(python.status == 0, "\(python.stderr)")
        #expect(python.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(messages)")

        // A rebuild writes the same mails under the same names.
        let rebuilt = try RoostBinary.run(["mirror", "rebuild", "--config", rig.config])
        #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
        let again = try Self.mails(in: maildir)
        #expect(again.mapValues(\.path) == mirrored.mapValues(\.path))
        #expect(again.keys.allSatisfy { again[$0]?.text == mirrored[$0]?.text })
    }

    /// The mirror's line of `roost status --json`.
    static func mirrorStatus(_ rig: ZeroLossRig) throws -> [String: Any] {
        let result = try RoostBinary.run(["status", "--config", rig.config, "--json"], timeout: 30)
        return result.jsonLines.first { $0["kind"] as? String == "mirror" } ?? [:]
    }

    /// A full disk under the mirror (a tmpfs the test fills; CI runs as root) stalls the mirror, not archiving: a
    /// flood is stored while no mail can be written, `roost status` says `stalled`, why, and the backlog, the log
    /// says it once; once there is room, the next commit writes every mail, each once, and `tmp/` is left empty.
    @Test func aFullDiskStallsTheMirrorNotArchiving() async throws {
        let mount = try TmpfsMount(sizeMegabytes: 4)
        defer { mount.unmount() }
        let maildir = mount.path + "/data/Mail"
        let rig = try await rig(maildir: maildir)
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let prefix = "full-\(UUID().uuidString.prefix(6))"
        try await Self.send(rig, "before the disk fills", id: prefix + "-first")
        try await waitUntil("the first mail in the mirror", timeout: .seconds(60)) { Self.count(in: maildir) == 1 }

        let filler = mount.path + "/filler"
        try mount.fill(filler, leavingKilobytes: 0)
        let messages = 60
        let flood = try PeerFlood(rig, to: rig.alice, count: messages, prefix: prefix)
        try await flood.finish()
        try await waitUntil("the flood archived while the mirror's disk is full", timeout: .seconds(120)) {
            try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") >= messages + 1
        }
        var last: [String: Any] = [:]
        try await waitUntil("the mirror to say it is stalled", timeout: .seconds(60), detail: { "\(last)" }) {
            last = try Self.mirrorStatus(rig)
            return last["state"] as? String == "stalled" && (last["backlog"] as? Int ?? 0) > 0
        }
        #expect((last["stalled"] as? String ?? "").contains("No space left on device"), "\(last)")
        #expect(Self.count(in: maildir) < messages + 1, "the disk was full: not every mail can have been written")
        let stalls = roost.stderrSoFar.components(separatedBy: "mirror: stalled").count - 1
        #expect(stalls == 1, "the stall is logged once, not at every commit:\n\(roost.stderrSoFar.suffix(3000))")

        try FileManager.default.removeItem(atPath: filler)
        // Tried again at the next commit.
        try await Self.send(rig, "after room is made", id: prefix + "-last")
        try await waitUntil("the mirror to catch up", timeout: .seconds(60), detail: { "\(last)" }) {
            last = try Self.mirrorStatus(rig)
            return last["state"] as? String == "ok" && last["backlog"] as? Int == 0 && last["position"] as? Int == last["latest"] as? Int
        }
        #expect(roost.stderrSoFar.contains("mirror: writing again to \(maildir)"))
        #expect(roost.isRunning)
        let stored = try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'")
        let mirrored = try Self.mails(in: maildir)
        #expect(stored == messages + 2 && mirrored.count == stored, "\(mirrored.count) mails for \(stored) messages")
        let temporary = try FileManager.default.contentsOfDirectory(atPath: "\(maildir)/\(rig.bob)/tmp")
        #expect(temporary.isEmpty, "left in tmp/: \(temporary)")
    }

    /// The slowest disk: the mirror's filesystem frozen (`fsfreeze`, a small ext4 on a loop device the test makes; CI
    /// runs as root) — every write to it waits until it is thawed. A flood is stored and acknowledged meanwhile, and
    /// `roost status` answers with the backlog; once thawed, the mirror writes every mail, each once.
    @Test func aFrozenDiskHoldsUpTheMirrorNotArchiving() async throws {
        let disk = try FrozenDisk()
        defer { disk.remove() }
        let maildir = disk.path + "/Mail"
        let rig = try await rig(maildir: maildir)
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        // Thawed before the kill: a thread waiting on a frozen filesystem dies only once it is thawed.
        defer { disk.thaw(); roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let prefix = "frozen-\(UUID().uuidString.prefix(6))"
        try await Self.send(rig, "before the freeze", id: prefix + "-first")
        try await waitUntil("the first mail in the mirror, its position moved", timeout: .seconds(60)) {
            let status = try Self.mirrorStatus(rig)
            return Self.count(in: maildir) == 1 && status["backlog"] as? Int == 0 && status["position"] as? Int == status["latest"] as? Int
        }

        try disk.freeze()
        let messages = 200
        let flood = try PeerFlood(rig, to: rig.alice, count: messages, prefix: prefix)
        try await flood.finish()
        try await waitUntil("the flood archived while the mirror's disk is frozen", timeout: .seconds(120)) {
            try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") >= messages + 1
        }
        let held = try Self.mirrorStatus(rig)
        #expect(held["backlog"] as? Int == messages, "the mirror is held up with the whole flood to write: \(held)")
        #expect(held["writing_since"] as? String != nil, "a pass is under way, waiting on the disk: \(held)")
        // Said in words once the pass has waited ten seconds.
        var said = ""
        try await waitUntil("`roost status` to say the mirror waits on its disk", timeout: .seconds(60), detail: { said }) {
            said = try RoostBinary.run(["status", "--config", rig.config], timeout: 30).stdout
            return said.contains("waiting on its disk")
        }
        #expect(roost.isRunning)

        disk.thaw()
        var last: [String: Any] = [:]
        try await waitUntil("the mirror to catch up after the thaw", timeout: .seconds(60), detail: { "\(last)" }) {
            last = try Self.mirrorStatus(rig)
            return last["backlog"] as? Int == 0 && last["position"] as? Int == last["latest"] as? Int
        }
        let mirrored = try Self.mails(in: maildir)
        #expect(mirrored.count == messages + 1, "\(mirrored.count) mails for \(messages + 1) messages")
        #expect(last["state"] as? String == "ok" && last["writing_since"] is NSNull, "\(last)")
    }

    @Test func aCorrectionReplacesTheMailAndNotmuchFindsNewMail() async throws {
        let maildir = NSTemporaryDirectory() + "roost-mirror-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: maildir) }
        let rig = try await rig(maildir: maildir)
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        defer { _ = roost.stop() }
        try await roost.ready(timeout: 120)
        let marker = "mirror-fix-\(UUID().uuidString.prefix(6))"
        func send(_ body: String, id: String, extra: [String] = []) async throws { try await Self.send(rig, body, id: id, extra: extra) }
        try await send("\(marker) helo 你好世界", id: marker)
        try await waitUntil("the mail in the mirror", timeout: .seconds(60)) {
            try Self.mails(in: maildir).values.contains { $0.text.contains(marker) }
        }
        let before = try Self.mails(in: maildir)
        let (id, original) = try #require(before.first { $0.value.text.contains(marker) })

        // notmuch indexes the new mail (Chinese too, with XAPIAN_CJK_NGRAM).
        let home = rig.dir.path + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let config = rig.dir.path + "/notmuch-config"
        try "[database]\npath=\(maildir)\n[user]\nname=Me\nprimary_email=\(rig.alice)\n[new]\ntags=inbox;\n[search]\nexclude_tags=\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let environment = ["HOME": home, "NOTMUCH_CONFIG": config, "XAPIAN_CJK_NGRAM": "1", "PATH": "/usr/bin:/bin"]
        let indexed = try RoostBinary.runProgram("/usr/bin/notmuch", ["new"], environment: environment)
        #expect(indexed.status == 0, "\(indexed.stderr)")
        let found = try RoostBinary.runProgram("/usr/bin/notmuch", ["count", "世界"], environment: environment)
        #expect(found.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1", "\(found.stdout) \(found.stderr)")

        // The correction: a new file with the same Message-ID, the old one gone.
        try await send("\(marker) hello 你好世界", id: marker + "-fix",
                       extra: ["--extra-xml", "<replace xmlns='urn:xmpp:message-correct:0' id='\(marker)-1'/>"])
        try await waitUntil("the corrected mail in the mirror", timeout: .seconds(60)) {
            try Self.mails(in: maildir)[id]?.text.contains("Earlier versions:") == true
        }
        let after = try Self.mails(in: maildir)
        #expect(after.count == before.count)
        #expect(after[id]?.path != original.path)
        #expect(!FileManager.default.fileExists(atPath: maildir + "/" + original.path))
        #expect(after[id]?.text.contains("hello") == true)
    }

    @Test func aMailMarkedSeenMarksTheConversationReadUpToIt() async throws {
        let maildir = NSTemporaryDirectory() + "roost-mirror-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: maildir) }
        let rig = try await ZeroLossRig.make(general: "\n[mirror]\nmaildir = \(maildir)\nread_from_mirror = true\n")
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        defer { _ = roost.stop() }
        try await roost.ready(timeout: 120)
        let prefix = "seen-\(UUID().uuidString.prefix(6))"
        try await PeerFlood(rig, to: rig.alice, count: 3, prefix: prefix).finish()
        let new = maildir + "/" + rig.bob.description + "/new"
        try await waitUntil("three mails in new/", timeout: .seconds(60)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: new)) ?? []).count == 3
        }
        func unread() throws -> Int? {
            let status = try RoostBinary.run(["status", "--config", rig.config, "--json"], timeout: 30)
            guard let line = status.jsonLines.first(where: { $0["kind"] as? String == "unread" }) else { return 0 }
            return line["unread"] as? Int
        }
        #expect(try unread() == 3)
        // The mail client reads the second message: moved to cur/ with the S flag, as Maildir readers do.
        let names = try FileManager.default.contentsOfDirectory(atPath: new).sorted()
        let second = try #require(names.first { name in
            (try? String(contentsOfFile: new + "/" + name, encoding: .utf8))?.contains("msg-2") == true
        })
        #expect(rename(new + "/" + second, maildir + "/" + rig.bob.description + "/cur/" + second + ":2,S") == 0)
        try await waitUntil("the conversation read up to the second message", timeout: .seconds(30)) { try unread() == 1 }
    }
}

/// The live mirror served by Dovecot (the suite's, started by contrib/scripts/test): an IMAP client (Python's imaplib)
/// sees a message the agent archived appear, and the new version after a correction.
@Suite("End to end: the live mirror in Dovecot", .requires(.dovecot))
struct MirrorIMAPEndToEndTests {
    @Test func anIMAPClientSeesNewMessagesAndCorrections() async throws {
        try TestRequirement.check(.dovecot)
        let dovecot = try DovecotServer.require()
        let maildir = NSTemporaryDirectory() + "roost-mirror-imap-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: maildir) }
        let rig = try await ZeroLossRig.make(general: "\n[mirror]\nmaildir = \(maildir)\nsplit = none\n")
        let roost = try RoostBinary.start(["run", "--config", rig.config, "-v"])
        defer { _ = roost.stop() }
        try await roost.ready(timeout: 120)
        let imap = try dovecot.addUser(maildir: maildir)
        let marker = "imap\(UUID().uuidString.prefix(6).lowercased())"
        func send(_ body: String, id: String, extra: [String] = []) async throws {
            try await MirrorEndToEndTests.send(rig, body, id: id, extra: extra)
        }

        // A session open before the message arrives is told of it.
        let watch = try await offPool { try imap.watch(for: ["BODY", "\(marker) first"], timeout: 120) }
        try await send("\(marker) first 你好", id: marker)
        let appeared = try await offPool { try watch.messages() }
        #expect(appeared.count == 1)
        let first = try #require(appeared.first)
        #expect(first.from?.contains(rig.bob.description) == true, "\(first.from ?? "")")
        #expect(first.subject?.hasPrefix("Chat with") == true, "\(first.subject ?? "")")
        #expect(first.body?.contains("你好") == true)
        #expect(first.defects.isEmpty)

        // The correction: the client finds the new version under the same Message-ID, and the old one gone.
        let corrected = try await offPool { try imap.watch(for: ["BODY", "\(marker) fixed"], timeout: 120) }
        try await send("\(marker) fixed 你好", id: marker + "-fix",
                       extra: ["--extra-xml", "<replace xmlns='urn:xmpp:message-correct:0' id='\(marker)-1'/>"])
        let fixed = try await offPool { try corrected.messages() }
        #expect(fixed.count == 1)
        #expect(fixed.first?.messageId == first.messageId)
        let all = try await offPool { try imap.fetch(["BODY", marker]) }
        #expect(all.count == 1, "\(all.map { $0.body ?? "" })")
        #expect(all.first?.body?.contains("\(marker) fixed") == true)
    }
}

/// A small ext4 on a loop device, mounted for one test and frozen on demand (`fsfreeze`): the slowest disk there is.
final class FrozenDisk: @unchecked Sendable {
    let path: String
    private let image: String
    private let frozen = Mutex(false)

    struct Failed: Error, CustomStringConvertible {
        let step: String, output: String
        var description: String { "\(step) failed (the test makes and freezes an ext4 of its own: root, e2fsprogs and util-linux, as CI has): \(output)" }
    }

    init() throws {
        let base = NSTemporaryDirectory() + "roost-frozen-\(UUID().uuidString.prefix(8))"
        image = base + ".img"
        path = base
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: image, contents: nil)
        try Self.run("truncate", "/usr/bin/truncate", ["-s", "64M", image])
        try Self.run("mkfs.ext4", "/usr/sbin/mkfs.ext4", ["-q", "-F", image])
        try Self.run("mount", "/usr/bin/mount", ["-o", "loop", image, path])
    }

    func freeze() throws {
        try Self.run("fsfreeze -f", "/usr/sbin/fsfreeze", ["-f", path])
        frozen.withLock { $0 = true }
    }

    /// Idempotent.
    func thaw() {
        let was = frozen.withLock { state in defer { state = false }; return state }
        if was { _ = try? RoostBinary.runProgram("/usr/sbin/fsfreeze", ["-u", path], timeout: 60) }
    }

    func remove() {
        thaw()
        _ = try? RoostBinary.runProgram("/usr/bin/umount", [path], timeout: 60)
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: image)
    }

    private static func run(_ step: String, _ program: String, _ arguments: [String]) throws {
        let result = try RoostBinary.runProgram(program, arguments, timeout: 120)
        guard result.status == 0 else { throw Failed(step: step, output: result.stdout + result.stderr) }
    }
}
