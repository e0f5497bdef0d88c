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
        _ = try writer.commit([
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
}
