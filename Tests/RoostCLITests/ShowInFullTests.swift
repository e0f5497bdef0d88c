import Foundation
import RoostArchive
import RoostTestSupport
import Testing

/// Issue 30, item 10: `roost show ID` is the message in full — every version of a correction with its time, the
/// reactions as they changed, the tombstone of a retraction, how it arrived in words — and names the user `me`
/// everywhere (the message answered, reactions, retractions), never by a JID with a resource.
@Suite struct ShowInFullTests {
    static let alice = "alice@example.org", me = "me@example.org"

    /// The everyday archive plus a conversation with Alice written from the user's phone: a corrected question,
    /// Alice's reply to it, reactions given and taken back, and a message the user retracted from the laptop.
    private func fixture() throws -> EverydayFixture {
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
        _ = try writer.commit([
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
    private func id(_ fixture: EverydayFixture, of messageID: String) throws -> String {
        let lines = try fixture.roost(["log", Self.alice, "--json"]).jsonLines
        return try #require(lines.first { $0["message_id"] as? String == messageID }?["short_id"] as? String, "\(lines)")
    }

    @Test func aCorrectedMessageShowsEveryVersionAndItsReactionsOverTime() throws {
        let fixture = try fixture()
        let shown = try fixture.roost(["show", try id(fixture, of: "q1")])
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

        let json = try #require(try fixture.roost(["show", try id(fixture, of: "q1"), "--json"]).jsonLines.first)
        let jsonVersions = try #require(json["versions"] as? [[String: Any]])
        #expect(jsonVersions.map { $0["body"] as? String } == ["lunch at noon?", "lunch at one?"])
        let jsonReactions = try #require(json["reaction_history"] as? [[String: Any]])
        #expect(jsonReactions.map { $0["from"] as? String } == ["Alice", "me", "Alice"])
    }

    @Test func aReplyToMyMessageAndMyRetractionNameMeWithoutAResource() throws {
        let fixture = try fixture()
        let reply = try fixture.roost(["show", try id(fixture, of: "r1")])
        #expect(reply.stdout.contains("answers:      me: lunch at one?"), "\(reply.stdout)")

        let shown = try fixture.roost(["show", try id(fixture, of: "x1")])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("retracted:    by me at ") && shown.stdout.contains("[message retracted (by me, at "), "\(shown.stdout)")
        #expect(!shown.stdout.contains("oops wrong chat") && !shown.stdout.contains("/laptop"), "\(shown.stdout)")
        let log = try fixture.roost(["log", Self.alice])
        #expect(log.stdout.contains("[message retracted (by me, at ") && log.stdout.contains("↪ me: lunch at one?"), "\(log.stdout)")
    }
}
