import Foundation
import RoostCore
import Testing
import RoostTestSupport
import RoostXMPP

/// `roost verify` against the shared test server: it finds what the server archive holds and the local
/// archive lacks, `--repair` fills the gap, and a second run finds nothing.
@Suite("roost verify", .serialized, .requires(.server))
struct VerifyCommandTests {
    struct Setup {
        let dir: TestDirectory
        let config: String
        let alice: JID
        let bob: XMPPClient
        var archive: String { "\(dir.path)/data/archive.sqlite" }
    }

    func setUp() async throws -> Setup {
        try TestRequirement.check(.server)
        let server = try TestServer.require()
        let (aliceClient, alice, password) = try await server.registeredClient("verify")
        await aliceClient.disconnect()
        let (bob, _, _) = try await server.registeredClient("vbob")
        let dir = try TestDirectory()
        let config = try server.roostConfig(in: dir, account: alice.description, password: password)
        return Setup(dir: dir, config: config, alice: alice, bob: bob)
    }

    func verify(_ setup: Setup, _ extra: [String] = []) throws -> (status: Int32, report: [String: Any]) {
        let result = try RoostBinary.run(["verify", "--json", "--config", setup.config] + extra, timeout: 120)
        let report = try #require(result.jsonLines.first, "stdout: \(result.stdout)\nstderr: \(result.stderr)")
        return (result.status, report)
    }

    /// Deletes rows the way a lost write would leave the archive. The FTS delete trigger calls SQL functions
    /// only Roost registers, so the sqlite3 shell drops it first (the index is not what verify looks at).
    func delete(_ ids: [String], from archive: String) throws {
        let list = ids.map { "'\($0)'" }.joined(separator: ",")
        let result = try RoostBinary.runProgram("/usr/bin/sqlite3",
            [archive, "DROP TRIGGER messages_fts_delete; DELETE FROM messages WHERE message_id IN (\(list));"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func reportsAGapAndRepairsIt() async throws {
        let setup = try await setUp()
        let flood = Flood(count: 40, prefix: "verify-\(UUID().uuidString.prefix(6))")
        // No agent runs: everything goes to the server archive only.
        try await flood.send(from: setup.bob, to: setup.alice, perSecond: 500)
        await setup.bob.disconnect()

        // Nothing local yet: --repair archives the whole server history.
        let first = try verify(setup, ["--repair"])
        #expect(first.status == 0, "\(first.report)")
        #expect(first.report["repaired"] as? Int == 40)
        #expect(first.report["consistent"] as? Bool == true)
        #expect(try ArchiveCount.tally(archive: setup.archive, flood: flood).rows == 40)

        // Two holes: messages 5-7 and 30.
        try delete([5, 6, 7, 30].map(flood.id), from: setup.archive)
        let gap = try verify(setup)
        #expect(gap.status == 1)
        #expect(gap.report["missing"] as? Int == 4)
        #expect(gap.report["consistent"] as? Bool == false)
        let ranges = try #require(gap.report["missing_ranges"] as? [[String: Any]])
        #expect(ranges.map { $0["count"] as? Int } == [3, 1])
        #expect(try ArchiveCount.tally(archive: setup.archive, flood: flood).rows == 36)

        let repair = try verify(setup, ["--repair"])
        #expect(repair.status == 0, "\(repair.report)")
        #expect(repair.report["repaired"] as? Int == 4)
        #expect(repair.report["missing"] as? Int == 0)

        let again = try verify(setup)
        #expect(again.status == 0)
        #expect(again.report["missing"] as? Int == 0)
        #expect(again.report["orphans"] as? Int == 0)
        #expect((again.report["duplicate_fallback_keys"] as? [Any])?.isEmpty == true)
        let tally = try ArchiveCount.tally(archive: setup.archive, flood: flood)
        #expect(tally.rows == 40 && tally.distinctIDs == 40 && tally.matchingBodies == 40, "\(tally)")
    }

    /// A repair archives each page's missing messages before it asks for the next page: an interrupted repair
    /// keeps what it stored, and memory holds one page, not the history (it used to store everything after the
    /// last page). The order is read from the trace of one run: the first page's messages are archived while
    /// pages are still to come.
    @Test func repairsPageByPage() async throws {
        let setup = try await setUp()
        let flood = Flood(count: 600, prefix: "verify-p-\(UUID().uuidString.prefix(6))")
        try await flood.send(from: setup.bob, to: setup.alice, perSecond: 2000)
        await setup.bob.disconnect()
        let result = try RoostBinary.run(["verify", "--json", "--repair", "-vv", "--config", setup.config], timeout: 300)
        #expect(result.status == 0, "\(result.stderr.suffix(3000))")
        let report = try #require(result.jsonLines.first, "\(result.stdout)")
        #expect(report["repaired"] as? Int == 600)
        #expect(try ArchiveCount.tally(archive: setup.archive, flood: flood).rows == 600)
        let lines = result.stderr.split(separator: "\n")
        let pages = lines.indices.filter { lines[$0].contains("verify received page") }
        let firstArchived = try #require(lines.firstIndex { $0.contains("verify archived") }, "\(result.stderr.suffix(3000))")
        #expect(pages.count >= 3, "600 messages take three pages or more (Roost asks for 250; a server may send fewer): \(pages.count)")
        #expect(pages.filter { $0 > firstArchived }.count >= 2, "pages received after the first page was archived")
    }

    @Test func humanOutputNamesTheGap() async throws {
        let setup = try await setUp()
        let flood = Flood(count: 5, prefix: "verify-h-\(UUID().uuidString.prefix(6))")
        try await flood.send(from: setup.bob, to: setup.alice, perSecond: 500)
        await setup.bob.disconnect()
        let result = try RoostBinary.run(["verify", "--config", setup.config], timeout: 120)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stdout.contains("missing locally: 5 in 1 range\n"), "\(result.stdout)")
        #expect(result.stdout.contains("NOT consistent"))
    }

    /// Room invitations the server archives as messages (a direct one, XEP-0249, with the fallback body clients add;
    /// a mediated one, XEP-0045, with the body the room adds) are invitations. The agent's catch-up keeps them as
    /// such, and verify finds them there: a healthy archive is consistent (it used to call them missing messages,
    /// exit 1). One the archive lacks is reported apart, and `--repair` archives it as an invitation, listed by
    /// `roost rooms invites` (it used to store a chat message no invitation list showed).
    @Test func roomInvitationsAreComparedAsInvitations() async throws {
        let setup = try await setUp()
        await setup.bob.disconnect()
        let server = try TestServer.require()
        let peers = try await server.registeredAccounts(["vcarol", "vdave"])
        let carol = RoomPeer(server: server, jid: peers[0].jid, password: peers[0].password)
        let dave = RoomPeer(server: server, jid: peers[1].jid, password: peers[1].password)
        let suffix = UUID().uuidString.prefix(8).lowercased()
        let direct = "vparty-\(suffix)@conference.\(server.domain)", mediated = "vclub-\(suffix)@conference.\(server.domain)"
        let alice = setup.alice.description
        // No agent runs: both reach the server archive only.
        try await offPool { _ = try carol.run(["invite", alice, direct, "--reason", "cake at five"]) }
        try await offPool { _ = try dave.run(["muc", mediated, "dave", "--invite", alice]) }

        // The agent's catch-up finds them in the server archive and keeps them as invitations.
        let agent = try RoostBinary.start(["run", "--config", setup.config, "-v"])
        defer { _ = agent.stop() }
        func invitedRooms(_ extra: [String] = []) throws -> Set<String> {
            Set(try RoostBinary.run(["rooms", "invites", "--json", "--config", setup.config] + extra).jsonLines.compactMap { $0["room"] as? String })
        }
        try await waitUntil("the agent archived both invitations", timeout: .seconds(60), detail: { agent.stderrSoFar.suffix(2000).description }) {
            try invitedRooms() == [direct, mediated]
        }
        #expect(agent.stop().status == 0)

        let healthy = try verify(setup)
        #expect(healthy.status == 0, "a healthy archive is consistent: \(healthy.report)")
        #expect(healthy.report["missing"] as? Int == 0)
        #expect(healthy.report["room_invitations"] as? Int == 2)
        #expect(healthy.report["room_invitations_missing"] as? Int == 0)
        #expect(healthy.report["server_stored_kinds"] as? Int == 0, "no chat message to compare")
        let text = try RoostBinary.run(["verify", "--config", setup.config], timeout: 120)
        #expect(text.status == 0 && text.stdout.contains("room invitations: 2 ") && text.stdout.contains("\nconsistent\n"), "\(text.stdout)")

        // Lost from the archive: reported apart, as invitations, and repaired as live routing would store them.
        let cleared = try RoostBinary.runProgram("/usr/bin/sqlite3", [setup.archive, "DELETE FROM room_invitations;"])
        #expect(cleared.status == 0, "\(cleared.stderr)")
        let lost = try verify(setup)
        #expect(lost.status == 1)
        #expect(lost.report["consistent"] as? Bool == false && lost.report["missing"] as? Int == 0)
        #expect(lost.report["room_invitations_missing"] as? Int == 2)
        let listed = try #require(lost.report["missing_invitations"] as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["room"] as? String }) == [direct, mediated])
        let lostText = try RoostBinary.run(["verify", "--config", setup.config], timeout: 120)
        #expect(lostText.status == 1 && lostText.stdout.contains("room invitations missing locally: 2\n")
                && lostText.stdout.contains(" to \(direct) from \(peers[0].jid.bare)"), "\(lostText.stdout)")

        let repair = try verify(setup, ["--repair"])
        #expect(repair.status == 0, "\(repair.report)")
        #expect(repair.report["room_invitations_repaired"] as? Int == 2 && repair.report["repaired"] as? Int == 0)
        #expect(repair.report["room_invitations_missing"] as? Int == 0)
        #expect(try invitedRooms() == [direct, mediated], "the repaired invitations are listed")
        let reason = try RoostBinary.run(["rooms", "invites", "--json", "--config", setup.config]).jsonLines.first { $0["room"] as? String == direct }
        #expect(reason?["reason"] as? String == "cake at five")
        #expect(try ArchiveCount.sqlite(setup.archive, "SELECT count(*) FROM messages").trimmingCharacters(in: .whitespacesAndNewlines) == "0",
                "no invitation is stored as a chat message")
        let again = try verify(setup)
        #expect(again.status == 0 && again.report["room_invitations_missing"] as? Int == 0, "\(again.report)")
    }

    /// With the agent running and archiving live traffic (and a message alice sent through it), verify logs in
    /// beside it and finds the two archives agree.
    @Test func consistentWhileTheAgentRuns() async throws {
        let setup = try await setUp()
        let agent = try RoostBinary.start(["run", "--config", setup.config, "-v"])
        defer { _ = agent.stop() }
        try agent.waitForReady()
        let flood = Flood(count: 30, prefix: "verify-a-\(UUID().uuidString.prefix(6))")
        try await flood.send(from: setup.bob, to: try setup.alice.with(resource: "roost"), perSecond: 500)
        let sent = try RoostBinary.run(["send", "--config", setup.config, setup.bob.configuration.jid.bare.description, "hello from alice"])
        #expect(sent.status == 0, "\(sent.stderr)")
        await setup.bob.disconnect()
        try await waitUntil("the flood in the archive", timeout: .seconds(30)) {
            try ArchiveCount.tally(archive: setup.archive, flood: flood).rows >= 30
        }
        // The agent reads its own sent message back from the server archive (archive_poll_seconds = 2).
        try await RoostBinary.waitForServerArchiveRead(config: setup.config, after: Date())
        let result = try verify(setup)
        #expect(result.status == 0, "\(result.report)")
        #expect(result.report["missing"] as? Int == 0)
        #expect(result.report["server_stored_kinds"] as? Int == 31)
        #expect(agent.isRunning)
    }
}
