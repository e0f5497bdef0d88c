import Foundation
import RoostCore
import Testing
import RoostTestSupport
import RoostXMPP

/// `roost forget` against the real agent and Prosody (issue 34, 3): bob's messages, sent by slixmpp and archived live,
/// are forgotten; their words leave the archive's files; the next catch-up re-reads the server's archive (which
/// still holds them: the catch-up mark never moves for live messages) and does not bring them back; and forgetting
/// while the agent floods in loses none of what it commits meanwhile.
@Suite("End to end: roost forget", .serialized, .enabled(if: PrivateServer.isAvailable))
struct ForgetEndToEndTests {
    static func forget(_ rig: ZeroLossRig, _ arguments: [String]) async throws -> RoostBinary.Result {
        try await offPool { try RoostBinary.run(["forget", "--config", rig.config] + arguments, timeout: 120) }
    }

    @Test func forgottenMessagesStayForgottenAfterACatchUpFromTheServerArchive() async throws {
        // No polling of the server's archive while bob writes: its catch-up mark stays before his messages, so the
        // next start re-reads them all (as after any run whose messages came live).
        let rig = try await ZeroLossRig.make(pollSeconds: 0)
        var roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let prefix = "forget-\(UUID().uuidString.prefix(6))"
        let secret = "qxvjsecretword"
        try await PeerFlood(rig, to: rig.roostJID, count: 30, prefix: prefix, bodyPadding: " " + secret).finish()
        let carol = try await XMPPPeer.registered(on: rig.server, "carol")
        try await carol.send(to: rig.roostJID, body: "carol keeps her keepsake")
        func bobs() throws -> Int { try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") }
        func carols() throws -> Int { try ZeroLossSQL.count(rig.archive, "messages WHERE body LIKE '%keepsake%'") }
        try await waitUntil("bob's and carol's messages archived", timeout: .seconds(60)) { try bobs() == 30 && carols() == 1 }
        await carol.stop()
        _ = await roost.stop()
        #expect(ArchiveFiles.contain(secret, archive: rig.archive), "the fixture stores the word")

        // No terminal and no --yes: refused, nothing changed.
        let unconfirmed = try await Self.forget(rig, ["with:\(rig.bob)"])
        #expect(unconfirmed.status == 2 && unconfirmed.stderr.contains("--yes"), "\(unconfirmed.stderr)")
        #expect(try bobs() == 30)
        let dryRun = try await Self.forget(rig, ["--dry-run", "with:\(rig.bob)"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("would forget 30 messages in 1 conversation"), "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("\(rig.bob): 30 messages") && dryRun.stdout.contains("msg-30 \(secret)"), "\(dryRun.stdout)")
        #expect(try bobs() == 30)

        let forgot = try await Self.forget(rig, ["--yes", "--json", "with:\(rig.bob)"])
        #expect(forgot.status == 0, "\(forgot.stderr)")
        #expect(forgot.jsonLines.first?["messages"] as? Int == 30 && forgot.jsonLines.first?["log_truncated"] as? Bool == true,
                "\(forgot.stdout)")
        #expect(try bobs() == 0)
        #expect(!ArchiveFiles.contain(secret, archive: rig.archive), "the forgotten word is still in the archive's files")

        // The agent again: its catch-up starts from the mark, before bob's messages, and the server's archive still
        // holds them; the tombstones refuse them.
        let restarted = Date()
        roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let parse = ISO8601DateFormatter()
        parse.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        try await waitUntil("the catch-up after the restart", timeout: .seconds(60)) {
            let last = try RoostBinary.accountStatus(config: rig.config).first?["last_catch_up"] as? String
            return last.flatMap(parse.date(from:)).map { $0 > restarted } ?? false
        }
        let log = await roost.stop()
        #expect(try bobs() == 0, "forgotten messages came back from the server archive; log:\n\(log.suffix(3000))")
        #expect(try carols() == 1)
        let search = try RoostBinary.run(["search", "--config", rig.config, secret])
        #expect(search.status == 1, "\(search.stdout)")
        let kept = try RoostBinary.run(["search", "--config", rig.config, "keepsake"])
        #expect(kept.status == 0 && kept.stdout.contains("carol keeps her keepsake"), "\(kept.stdout)")
    }

    @Test func forgettingWhileTheAgentArchivesLosesNothingItCommits() async throws {
        let rig = try await ZeroLossRig.make()
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(untilReady: true)
        let old = "old-\(UUID().uuidString.prefix(6))", new = "new-\(UUID().uuidString.prefix(6))"
        try await PeerFlood(rig, to: rig.roostJID, count: 50, prefix: old, bodyPadding: " qxvjstale").finish()
        func stored(_ prefix: String) throws -> Int { try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") }
        try await waitUntil("the first messages archived", timeout: .seconds(60)) { try stored(old) == 50 }

        // A flood arrives while forget runs: forget waits for the write lock as the agent's commits do for its.
        // 600 at 50 a second: the forget starts a few seconds into a flood of twelve.
        let flood = try PeerFlood(rig, to: rig.roostJID, count: 600, prefix: new, perSecond: 50)
        try await waitUntil("the flood under way", timeout: .seconds(60)) { try stored(new) > 50 }
        let beforeForget = try stored(new)
        let forgot = try await Self.forget(rig, ["--yes", "qxvjstale"])
        #expect(forgot.status == 0 && forgot.stdout.contains("forgot 50 messages"), "\(forgot.stdout)\(forgot.stderr)")
        #expect(beforeForget < 600, "the forget started while the flood came in")
        try await flood.finish()
        try await waitUntil("the whole flood archived", timeout: .seconds(120)) { try stored(new) >= 600 }
        try await rig.settleAfterAnArchiveRead()
        let log = await roost.stop()
        try ZeroLossRig.expectFloodExactlyOnce(rig.archive, prefix: new, messages: 600, chatStates: 0, log: log)
        #expect(try stored(old) == 0, "forgotten messages came back; log:\n\(log.suffix(3000))")
        #expect(!log.contains("archive: a record was refused"), "\(log.suffix(3000))")
    }

    /// `[retention] keep = 30d`: at its start the agent forgets what is older (imported messages of 2023), logs how
    /// many, and keeps what it archives live.
    @Test func retentionAppliesAtStart() async throws {
        let rig = try await ZeroLossRig.make(general: "[retention]\nkeep = 30d\n")
        let file = rig.dir.path + "/old.jsonl"
        try ImportFile.write(file, account: rig.alice.description, count: 20, prefix: "old")
        let imported = try RoostBinary.run(["import", "--config", rig.config, file])
        #expect(imported.status == 0, "\(imported.stderr)")
        let stats = try RoostBinary.run(["stats", "--config", rig.config])
        #expect(stats.stdout.contains("retention (keep = 30d): next run removes 20 messages in 20 conversations"), "\(stats.stdout)")
        let roost = Restarter(arguments: ["run", "--config", rig.config, "-v"])
        try await roost.start(waitingFor: "retention (keep = 30d): forgot 20 messages in 20 conversations")
        try await PeerFlood(rig, to: rig.roostJID, count: 5, prefix: "fresh").finish()
        func stored(_ prefix: String) throws -> Int { try ZeroLossSQL.count(rig.archive, "messages WHERE message_id LIKE '\(prefix)-%'") }
        try await waitUntil("today's messages archived", timeout: .seconds(60)) { try stored("fresh") == 5 }
        _ = await roost.stop()
        #expect(try stored("old") == 0)
        #expect(try stored("fresh") == 5)
    }
}
