import Foundation
import Testing
import RoostArchive
import RoostTestSupport
@testable import roost

/// Issue 30, item 10: `roost show ID` is the message in full — its reactions, its earlier versions with their
/// times, a retraction's tombstone, the kind without `carbon (carbon)`, and the user named `me` throughout.
@Suite("roost show: the message in full")
struct ShowInFullCLITests {
    static let me = "me@example.org", bob = "bob@example.org"
    static let t = EverydayFixture.january + 2 * 86_400_000

    func fixture() throws -> EverydayFixture {
        let fixture = try EverydayFixture()
        let writer = try ArchiveWriter(path: fixture.archive, durability: .off)
        let me = Self.me, bob = Self.bob, t = Self.t
        func mine(_ body: String, _ at: Int64, id: String, replaces: String? = nil) -> ArchiveEvent {
            .message(MessageRecord(account: me, conversation: bob, direction: .outgoing, from: me + "/roost", to: bob, body: body,
                                   timestamp: t + at, originId: id, messageId: id, replaces: replaces))
        }
        func annotation(_ kind: MessageAnnotation.Kind, target: String, from: String, outgoing: Bool = false, at: Int64) -> ArchiveEvent {
            .annotation(MessageAnnotation(account: me, conversation: bob, kind: kind, target: target, from: from,
                                          direction: outgoing ? .outgoing : .incoming, timestamp: t + at, messageId: "a-\(at)"))
        }
        _ = try writer.commitBlocking([
            mine("teh plan for friday", 0, id: "plan"),
            mine("the plan for friday", 60_000, id: "plan-fix-1", replaces: "plan"),
            mine("the plan for Saturday", 120_000, id: "plan-fix-2", replaces: "plan"),
            annotation(.reactions(["👍"]), target: "plan", from: bob + "/phone", at: 130_000),
            annotation(.reactions(["❤️"]), target: "plan", from: me + "/phone", outgoing: true, at: 140_000),
            .message(MessageRecord(account: me, conversation: bob, direction: .incoming, from: bob + "/phone", to: me,
                                   body: "oops, wrong chat", timestamp: t + 200_000, stanzaId: "s-oops", stanzaIdBy: me,
                                   stanzaIdTrusted: true, originId: "oops", messageId: "oops")),
            annotation(.retraction, target: "oops", from: bob + "/phone", at: 210_000),
            mine("my typo", 300_000, id: "typo"),
            annotation(.retraction, target: "typo", from: me + "/phone", outgoing: true, at: 310_000),
            .message(MessageRecord(account: me, conversation: bob, direction: .incoming, from: bob + "/phone", to: me + "/phone",
                                   body: "seen on the phone", timestamp: t + 400_000, stanzaId: "s-carbon", stanzaIdBy: me,
                                   stanzaIdTrusted: true, messageId: "carbon-1", isCarbon: true, source: .carbon)),
        ])
        return fixture
    }

    /// The short id of the message of `conversation` stored at `t + offset`.
    func shortID(_ fixture: EverydayFixture, at offset: Int64) throws -> String {
        var found: Int64?
        try ArchiveReader(path: fixture.archive).transcript(conversation: Self.bob, from: Self.t + offset, until: Self.t + offset + 1) { event in
            if case .message(let row) = event { found = row.id }
            return false
        }
        return ShortID.text(for: try #require(found, "a message at t + \(offset)"))
    }

    @Test func showsReactionsEarlierVersionsTombstonesAndMe() throws {
        let fixture = try fixture()
        let plan = try fixture.roost(["show", try shortID(fixture, at: 0)])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("the plan for Saturday"), "\(plan.stdout)")
        #expect(plan.stdout.contains("reactions:    👍 Bob  ❤️ me"), "reactions, named as everywhere: \(plan.stdout)")
        #expect(plan.stdout.contains("versions, oldest first:"), "\(plan.stdout)")
        let january17 = "2026-01-17"
        #expect(plan.stdout.contains("\(january17) 12:00:00 original: teh plan for friday")
                && plan.stdout.contains("\(january17) 12:01:00 correction 1: the plan for friday")
                && plan.stdout.contains("\(january17) 12:02:00 correction 2: the plan for Saturday"),
                "each version with its time: \(plan.stdout)")

        let oops = try fixture.roost(["show", try shortID(fixture, at: 200_000)])
        #expect(oops.stdout.contains("[message retracted (by Bob, at \(january17) 12:03:30)]"), "a tombstone: \(oops.stdout)")
        #expect(oops.stdout.contains("retracted:    by Bob at \(january17) 12:03:30"), "\(oops.stdout)")
        #expect(!oops.stdout.contains("oops, wrong chat"), "the text is erased")

        let typo = try fixture.roost(["show", try shortID(fixture, at: 300_000)])
        #expect(typo.stdout.contains("[message retracted (by me, at \(january17) 12:05:10)]"), "the user is me, without a resource: \(typo.stdout)")
        #expect(!typo.stdout.contains("me@example.org/phone"), "\(typo.stdout)")

        let carbon = try fixture.roost(["show", try shortID(fixture, at: 400_000)])
        #expect(carbon.stdout.contains("kind:         chat, incoming\n") && carbon.stdout.contains("arrived:      as a carbon copy\n"),
                "\(carbon.stdout)")
        #expect(!carbon.stdout.contains("carbon (carbon)"), "\(carbon.stdout)")

        // log names the same way.
        let log = try fixture.roost(["log", "bob", "--account", Self.me, "--since", january17])
        #expect(log.stdout.contains("👍 Bob  ❤️ me") && log.stdout.contains("(by me, at") && log.stdout.contains("(by Bob, at"), "\(log.stdout)")
    }

    // The conversation with Alice, written from the user's phone (carbons): versions, reactions over time, the
    // message answered, a retraction from another of the user's clients, and --json.

    static let alice = "alice@example.org"

    /// The everyday archive plus a conversation with Alice written from the user's phone: a corrected question,
    /// Alice's reply to it, reactions given and taken back, and a message the user retracted from the laptop.
    private func aliceFixture() throws -> EverydayFixture {
        let fixture = try EverydayFixture()
        let t = EverydayFixture.january + 86_400_000
        let me = Self.me, alice = Self.alice
        func mine(_ body: String, _ at: Int64, id: String, replaces: String? = nil) -> ArchiveEvent {
            .message(MessageRecord(account: me, conversation: alice, direction: .outgoing, from: me + "/phone", to: alice, body: body,
                                   timestamp: at, messageId: id, replaces: replaces, isCarbon: true, source: .carbon))
        }
        func annotation(_ kind: MessageAnnotation.Kind, _ target: String, from: String, _ at: Int64) -> ArchiveEvent {
            .annotation(MessageAnnotation(account: me, conversation: alice, kind: kind, target: target, from: from,
                                          direction: from.hasPrefix(me) ? .outgoing : .incoming, timestamp: at, messageId: "a\(at)"))
        }
        var reply = MessageRecord(account: me, conversation: alice, direction: .incoming, from: alice + "/laptop", to: me,
                                  body: "one is fine", timestamp: t + 120_000, messageId: "r1")
        reply.replyTo = "q1"
        reply.replyToJid = me
        let writer = try ArchiveWriter(path: fixture.archive, durability: .off)
        _ = try writer.commitBlocking([
            mine("lunch at noon?", t, id: "q1"),
            mine("lunch at one?", t + 60_000, id: "q1c", replaces: "q1"),
            .message(reply),
            annotation(.reactions(["👍"]), "q1", from: alice + "/laptop", t + 180_000),
            annotation(.reactions(["❤️"]), "q1", from: me + "/phone", t + 200_000),
            annotation(.reactions([]), "q1", from: alice + "/laptop", t + 240_000),
            mine("oops wrong chat", t + 300_000, id: "x1"),
            annotation(.retraction, "x1", from: me + "/laptop", t + 320_000),
        ])
        return fixture
    }

    /// The short id of the message with this stanza id, as `roost log --json` gives it.
    private func aliceID(_ fixture: EverydayFixture, of messageID: String) throws -> String {
        let lines = try fixture.roost(["log", Self.alice, "--json"]).jsonLines
        return try #require(lines.first { $0["message_id"] as? String == messageID }?["short_id"] as? String, "\(lines)")
    }

    @Test func aCorrectedMessageShowsEveryVersionAndItsReactionsOverTime() throws {
        let fixture = try aliceFixture()
        let shown = try fixture.roost(["show", try aliceID(fixture, of: "q1")])
        #expect(shown.status == 0, "\(shown.stderr)")
        let out = shown.stdout
        #expect(out.contains("arrived:      as a carbon copy") && !out.contains("carbon (carbon)"), "\(out)")
        #expect(out.contains("edited:       1 correction"), "\(out)")
        let versions = try #require(out.range(of: "versions, oldest first:\n"), "\(out)")
        let listed = out[versions.upperBound...].split(separator: "\n").prefix(2).map(String.init)
        #expect(listed.count == 2 && listed[0].hasSuffix(" original: lunch at noon?") && listed[1].hasSuffix(" correction 1: lunch at one?"),
                "\(listed)")
        #expect(listed.first?.hasPrefix("  2026-01-16 12:00:00 ") == true && listed.last?.hasPrefix("  2026-01-16 12:01:00 ") == true,
                "each version at its own time: \(listed)")
        #expect(out.contains("reactions:    ❤️ me"), "the reactions now: \(out)")
        let history = try #require(out.range(of: "reactions over time:\n"), "\(out)")
        let updates = out[history.upperBound...].split(separator: "\n").map(String.init)
        #expect(updates.count == 3 && updates[0].hasSuffix(" Alice: 👍") && updates[1].hasSuffix(" me: ❤️")
                && updates[2].hasSuffix(" Alice: (took back every reaction)"), "\(updates)")
        #expect(!out.contains("/phone") || out.contains("from:         me <me@example.org/phone>"), "a resource only where the sender is detailed: \(out)")

        let json = try #require(try fixture.roost(["show", try aliceID(fixture, of: "q1"), "--json"]).jsonLines.first)
        // The one message schema: the versions in `revisions`, every reaction update in `reactions`, the set now.
        let jsonVersions = try #require(json["revisions"] as? [[String: Any]])
        #expect(jsonVersions.map { $0["body"] as? String } == ["lunch at noon?", "lunch at one?"])
        #expect(jsonVersions.map { $0["revision"] as? Int } == [0, 1] && jsonVersions.allSatisfy { $0["raw"] == nil })
        let jsonReactions = try #require(json["reactions"] as? [[String: Any]])
        #expect(jsonReactions.map { $0["direction"] as? String } == ["in", "out", "in"], "\(jsonReactions)")
        #expect(jsonReactions.map { $0["emojis"] as? [String] } == [["👍"], ["❤️"], []], "\(jsonReactions)")
        let now = try #require(json["current_reactions"] as? [[String: Any]])
        #expect(now.map { "\($0["emoji"] ?? "?") \($0["from"] ?? "?")" } == ["❤️ me"], "\(now)")
    }

    @Test func aReplyToMyMessageAndMyRetractionNameMeWithoutAResource() throws {
        let fixture = try aliceFixture()
        let reply = try fixture.roost(["show", try aliceID(fixture, of: "r1")])
        #expect(reply.stdout.contains("answers:      me: lunch at one?"), "\(reply.stdout)")

        let shown = try fixture.roost(["show", try aliceID(fixture, of: "x1")])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("retracted:    by me at ") && shown.stdout.contains("[message retracted (by me, at "), "\(shown.stdout)")
        #expect(!shown.stdout.contains("oops wrong chat") && !shown.stdout.contains("/laptop"), "\(shown.stdout)")
        let log = try fixture.roost(["log", Self.alice])
        #expect(log.stdout.contains("[message retracted (by me, at ") && log.stdout.contains("↪ me: lunch at one?"), "\(log.stdout)")
    }
}
