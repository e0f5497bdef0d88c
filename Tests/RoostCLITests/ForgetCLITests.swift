import Foundation
import Testing
import RoostTestSupport

/// `roost forget`'s command line on the everyday archive (no server): what it refuses before touching anything, the
/// dry run, one message by its id, and the rest of the archive untouched (issue 34, 3).
@Suite struct ForgetCLITests {
    @Test func refusalsChangeNothing() throws {
        let fixture = try EverydayFixture(defaultAccount: "me@example.org")
        let before = try fixture.roost(["count"]).stdout
        for (arguments, says) in [
            (["forget"], "say what to forget"),
            (["forget", "--yes", " "], "say what to forget"),
            (["forget", "--id", "m1", "with:bob"], "not both"),
            (["forget", "--id", "x!"], "is not a message id"),
            (["forget", "--yes", "with:"], "invalid query"),
            (["forget", "with:bob"], "--yes"),
        ] {
            let run = try fixture.roost(arguments)
            #expect(run.status == 2 && run.stderr.contains(says), "\(arguments): \(run.status) \(run.stderr)")
        }
        let nothing = try fixture.roost(["forget", "--yes", "nosuchwordanywhere"])
        #expect(nothing.status == 1 && nothing.stderr.contains("nothing to forget"), "\(nothing.stderr)")
        #expect(try fixture.roost(["count"]).stdout == before)
    }

    @Test func dryRunThenOneMessageByItsID() throws {
        let fixture = try EverydayFixture(defaultAccount: "me@example.org")
        let dryRun = try fixture.roost(["forget", "--dry-run", "with:bob"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.hasPrefix("would forget 5 messages in 1 conversation:\n  Bob (bob@example.org): 5 messages\n"), "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("see you at 5"), "the messages as search shows them: \(dryRun.stdout)")
        let json = try fixture.roost(["forget", "--dry-run", "--json", "with:bob"]).jsonLines
        #expect(json.first?["messages"] as? Int == 5 && json.first?["dry_run"] as? Bool == true, "\(json)")
        #expect(try fixture.roost(["count", "with:bob"]).stdout.hasPrefix("5"))

        let id = try fixture.shortID(of: "see you at 5")
        let forgot = try fixture.roost(["forget", "--yes", "--id", id])
        #expect(forgot.status == 0 && forgot.stdout.hasSuffix("forgot 1 message\n"), "\(forgot.stdout)\(forgot.stderr)")
        #expect(try fixture.roost(["show", id]).status == 1)
        #expect(try fixture.roost(["search", "\"see you at 5\""]).status == 1)
        #expect(try fixture.roost(["count", "with:bob"]).stdout.hasPrefix("4"))
        #expect(try fixture.roost(["search", "travelling"]).status == 0, "the rest of the conversation stays")
        #expect(!ArchiveFiles.contain("see you at 5", archive: fixture.archive))
    }
}

/// `[retention]` seen from the command line (issue 34, 4): `roost stats` says what the agent's next run removes, and
/// `roost config` refuses what the agent would.
@Suite struct RetentionCLITests {
    @Test func statsShowsWhatTheNextRunRemoves() throws {
        let fixture = try EverydayFixture(defaultAccount: "me@example.org")
        try "[retention]\nkeep = 30d\ncontact.alice@example.org = forever\ncontact.bob@example.org = 2y\n".appendLine(to: fixture.config)
        // The fixture's January messages are older than 30 days, yesterday's are not; Alice's are kept for ever, Bob's two years.
        let old = Int(try fixture.roost(["count", "--account", "me@example.org", "before:30d"]).stdout.prefix { $0.isNumber }) ?? -1
        let alices = Int(try fixture.roost(["count", "--account", "me@example.org", "with:alice before:30d"]).stdout.prefix { $0.isNumber }) ?? -1
        let bobs = Int(try fixture.roost(["count", "--account", "me@example.org", "with:bob before:30d"]).stdout.prefix { $0.isNumber }) ?? -1
        #expect(old > alices + bobs && alices > 0 && bobs > 0, "\(old) \(alices) \(bobs)")
        let stats = try fixture.roost(["stats", "--json"]).jsonLines.filter { $0["kind"] as? String == "retention" }
        #expect(stats.map { $0["rule"] as? String } == ["contact.bob@example.org = 2y", "keep = 30d"], "\(stats)")
        #expect(stats.first?["messages"] as? Int == 0, "nothing of Bob's is two years old")
        #expect(stats.last?["messages"] as? Int == old - alices - bobs, "\(stats)")
        let human = try fixture.roost(["stats"]).stdout
        #expect(human.contains("retention (keep = 30d): next run removes \(old - alices - bobs) message"), "\(human)")
    }

    @Test func configRefusesWhatTheAgentWould() throws {
        let fixture = try EverydayFixture(defaultAccount: "me@example.org")
        try "[retention]\nkeep = soon\ncontact.bob = 1y\nkeeps = 1d\n".appendLine(to: fixture.config)
        let check = try fixture.roost(["config"])
        #expect(check.status == 78, "\(check.stdout)\(check.stderr)")
        for says in ["expected forever or an age", "expected contact.JID", "unknown key"] {
            #expect(check.stderr.contains(says), "\(check.stderr)")
        }
    }
}
