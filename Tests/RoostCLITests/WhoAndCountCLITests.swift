import Foundation
import Testing
import RoostArchive
import RoostTestSupport
@testable import roost

/// Issue 30, items 2, 3 and 4, through the built binary against an everyday archive (`EverydayFixture`) with a
/// room named by its bookmark and a burst of messages stored within one millisecond.
@Suite("Everyday use, round two: WHO everywhere, log -n by count, search lines say who wrote to whom")
struct WhoAndCountCLITests {
    static let room = "lounge-7@conference.example.org"

    /// The fixture, plus the room "Team" (its JID says nothing of the name) and 13 messages from Alice in one millisecond.
    func fixture() throws -> EverydayFixture {
        let fixture = try EverydayFixture()
        let writer = try ArchiveWriter(path: fixture.archive, durability: .off)
        let me = "me@example.org", t = EverydayFixture.january + 86_400_000
        var events: [ArchiveEvent] = [
            .room(RoomUpdate(account: me, room: Self.room,
                             change: .bookmark(present: true, name: "Team", nick: "me", autojoin: true, hasPassword: false), timestamp: t)),
            .message(MessageRecord(account: me, conversation: Self.room, direction: .incoming, kind: .groupchat, from: Self.room + "/carol",
                                   to: me, senderName: "carol", body: "standup in five", timestamp: t, stanzaId: "s-room-1",
                                   stanzaIdBy: Self.room, stanzaIdTrusted: true, messageId: "room-1")),
            .message(MessageRecord(account: me, conversation: Self.room, direction: .outgoing, kind: .groupchat, from: Self.room + "/me",
                                   to: Self.room, senderName: "me", body: "standup with me too", timestamp: t - 500, stanzaId: "s-room-2",
                                   stanzaIdBy: Self.room, stanzaIdTrusted: true, messageId: "room-2")),
        ]
        for n in 1...13 {
            events.append(.message(MessageRecord(account: me, conversation: "alice@example.org", direction: .incoming,
                                                 from: "alice@example.org/phone", to: me, body: "burst \(n)", timestamp: t + 1000,
                                                 stanzaId: "s-burst-\(n)", stanzaIdBy: me, stanzaIdTrusted: true, messageId: "burst-\(n)")))
        }
        _ = try writer.commitBlocking(events)
        return fixture
    }

    // Item 2: -n counts messages, however many share a millisecond.
    @Test func logLastNCountsMessagesNotMilliseconds() throws {
        let fixture = try fixture()
        let last = try fixture.roost(["log", "alice", "-n", "3"])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(last.lines.count == 3, "three messages, not the whole millisecond: \(last.stdout)")
        #expect(last.lines.map { $0.components(separatedBy: ": ").last ?? "" } == ["burst 11", "burst 12", "burst 13"], "\(last.stdout)")
        let json = try fixture.roost(["log", "alice", "-n", "3", "--json"])
        #expect(json.jsonLines.compactMap { $0["body"] as? String } == ["burst 11", "burst 12", "burst 13"], "\(json.stdout)")
        let all = try fixture.roost(["log", "alice", "-n", "14"])
        #expect(all.lines.count == 14 && all.lines.first?.contains("hello from Alice") == true, "\(all.stdout)")
        let one = try fixture.roost(["log", "alice", "-n", "1", "--states", "--presence"])
        #expect(one.lines.count == 1 && one.stdout.contains("burst 13"), "\(one.stdout)")
    }

    // Item 3: read takes WHO as log and send do — a name, a roster name in any case, a room by its name.
    @Test func readTakesNamesPrefixesAndRooms() throws {
        let fixture = try fixture()
        let alice = try fixture.roost(["read", "alice"])
        #expect(alice.status == 0, "\(alice.stderr)")
        #expect(alice.stdout.hasPrefix("alice@example.org: 14 marked read"), "\(alice.stdout)")
        let again = try fixture.roost(["read", "Alice"])
        #expect(again.status == 0 && again.stdout.hasPrefix("alice@example.org: 0 marked read"), "\(again.stdout)\(again.stderr)")
        let team = try fixture.roost(["read", "team", "--json"])
        #expect(team.status == 0, "\(team.stderr)")
        #expect(team.jsonLines.first?["conversation"] as? String == Self.room && team.jsonLines.first?["was_unread"] as? Int == 1,
                "\(team.stdout)")
        #expect(try fixture.roost(["log", "Team"]).stdout.contains("standup in five"), "log finds the room by its name too")
        #expect(try fixture.roost(["read", "wan"]).stdout.hasPrefix("wang@example.cn: "), "the start of a JID")
        let nobody = try fixture.roost(["read", "zoe"])
        #expect(nobody.status == 1 && nobody.stderr.contains("no contact, room or conversation matches 'zoe'"), "\(nobody.stderr)")
        #expect(try fixture.roost(["read", "bob@example.org/phone"]).status == 1, "a full JID is that address, as it is")
    }

    // Item 3: one ambiguity error, from every command that takes WHO.
    @Test func everyCommandTakingWhoSaysAmbiguousAlike() throws {
        let fixture = try fixture()
        let commands: [[String]] = [
            ["read", "b"], ["log", "b"], ["presence", "b"], ["export", "--format", "jsonl", "--conversation", "b"],
            ["--account", "me@example.org", "send", "b", "hi"],
            ["--account", "me@example.org", "roster", "remove", "b"],
            ["--account", "me@example.org", "vcard", "show", "b"],
            ["--account", "me@example.org", "omemo", "fingerprints", "b"],
        ]
        for command in commands {
            let run = try fixture.roost(command)
            #expect(run.status == 2, "\(command): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("'b' is ambiguous; it could be:") && run.stderr.contains("Bob (bob@example.org")
                    && run.stderr.contains("Bert (bert@example.org"), "\(command): \(run.stderr)")
        }
    }

    // Item 3: rooms leave takes a room's name too (resolved before the agent is asked; nothing listens here).
    @Test func roomsLeaveTakesARoomsName() throws {
        let fixture = try fixture()
        let leave = try fixture.roost(["-v", "--account", "me@example.org", "rooms", "leave", "team"])
        #expect(leave.stderr.contains("team is \(Self.room)"), "\(leave.status) \(leave.stderr)")
        let unknown = try fixture.roost(["--account", "me@example.org", "rooms", "leave", "nosuchroom"])
        #expect(unknown.status == 2 && unknown.stderr.contains("no room matches 'nosuchroom'"), "\(unknown.stderr)")
    }

    // Item 3: a full JID passes through untouched: presence of one resource (a room's occupant the same way).
    @Test func presenceOfAFullJIDKeepsToThatResource() throws {
        let fixture = try fixture()
        let phone = try fixture.roost(["presence", "bob@example.org/phone", "--account", "me@example.org", "--json"])
        #expect(phone.status == 0, "\(phone.stderr)")
        let rows = phone.jsonLines.filter { $0["kind"] as? String == "presence" }
        #expect(rows.count == 2 && rows.allSatisfy { $0["resource"] as? String == "phone" }, "\(phone.stdout)")
        #expect(try fixture.roost(["presence", "bob@example.org/laptop", "--account", "me@example.org"]).status == 1)
        #expect(try fixture.roost(["presence", "Bob", "--account", "me@example.org"]).status == 0, "a name, as before")
    }

    // Item 4: a search hit reads sender → recipient, so the user's own messages never read as the contact's.
    @Test func searchLinesSaySenderToRecipient() throws {
        let fixture = try fixture()
        let mine = try fixture.roost(["search", "see you", "--account", "me@example.org"])
        #expect(mine.status == 0 && mine.lines.count == 1, "\(mine.stdout)\(mine.stderr)")
        #expect(mine.stdout.contains(" me → Bob: see you at 5"), "\(mine.stdout)")
        let theirs = try fixture.roost(["search", "good morning", "--account", "me@example.org"])
        #expect(theirs.stdout.contains(" Bob → me: good morning Bob"), "\(theirs.stdout)")
        let room = try fixture.roost(["search", "standup", "--oldest-first"])
        #expect(room.lines.count == 2, "\(room.stdout)")
        #expect(room.lines.first?.contains(" me (me) → \(Self.room): standup with me too") == true, "\(room.stdout)")
        #expect(room.lines.last?.contains(" carol → \(Self.room): standup in five") == true, "\(room.stdout)")
        // The coloured lines (from whole rows) say the same.
        let coloured = try fixture.roost(["search", "see you", "--account", "me@example.org", "--color", "always"])
        let plain = coloured.stdout.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(plain.contains(" me → Bob: see you at 5"), "\(coloured.stdout)")
        let all = try fixture.roost(["search", "--limit", "0"])
        #expect(!all.lines.contains { $0.contains(" < ") || $0.contains(" > ") }, "no bare arrows left: \(all.stdout)")
    }
}
