import Foundation
import Testing
@testable import RoostNotify

/// Group chat notifications: the policy per room, invitations with their answers, summaries of a room's catch-up.
@Suite("Notify: group chats")
struct NotifyRoomTests {
    private func notifier(_ notify: [String: String]) -> (Notifier, RecordingSink) {
        let sink = RecordingSink(name: "rec")
        var factory = SinkFactory()
        factory.substitute = { _ in sink }
        let config = NotifyFixtures.config(notify, sinks: ["rec": ["type": "command", "command": "/bin/true"]])
        let notifier = Notifier(config: config, actions: nil, statePath: nil, log: LogCollector().log, clock: .system,
                                idle: IdleProbe { nil }, factory: factory)
        return (notifier, sink)
    }

    @Test func perRoomPolicyOverridesTheDefault() async {
        let (notifier, sink) = notifier(["coalesce_seconds": "0", "groupchat": "mentions", "room.busy@muc.example.org": "none",
                                         "room.team@muc.example.org": "all"])
        notifier.post(.message(NotifyFixtures.message("plain in lounge", from: "lounge@muc.example.org", groupchat: true)))
        notifier.post(.message(NotifyFixtures.message("alice! in lounge", from: "lounge@muc.example.org", groupchat: true, mentions: true)))
        notifier.post(.message(NotifyFixtures.message("alice! in busy", from: "busy@muc.example.org", groupchat: true, mentions: true)))
        notifier.post(.message(NotifyFixtures.message("plain in team", from: "team@muc.example.org", groupchat: true)))
        await notifier.flush()
        #expect(sink.notifications.map(\.body) == ["alice! in lounge", "plain in team"])
        #expect(sink.notifications.first?.title.contains("in lounge") == true)
        await notifier.shutdown()
    }

    @Test func roomOverridesAreValidated() {
        let (config, problems) = NotifyConfig.parse(notify: ["room.lounge@muc.example.org": "ALL", "room.nojid": "all",
                                                             "room.team@muc.example.org": "loud"], sinks: [:])
        #expect(config.roomOverrides == ["lounge@muc.example.org": .all])
        #expect(problems.map(\.key) == ["room.nojid", "room.team@muc.example.org"])
    }

    @Test func anInvitationIsItsOwnNotificationWithTheCommandsToAnswer() async {
        let (notifier, sink) = notifier(["when": "always"])
        notifier.post(.invitation(account: "alice@example.org", room: "party@muc.example.org", from: "bob@example.org/phone",
                                  displayName: "Bob", reason: "cake"))
        await notifier.flush()
        let shown = sink.notifications.first
        #expect(shown?.kind == .invitation)
        #expect(shown?.title == "Invitation to party@muc.example.org")
        #expect(shown?.text.contains("Bob (bob@example.org) invites you to party@muc.example.org") == true)
        #expect(shown?.fullText.contains("roost rooms join party@muc.example.org") == true)
        #expect(shown?.eventKind == .invitation)
        await notifier.shutdown()
    }

    @Test func aMutedInviterIsNotShown() async {
        let (notifier, sink) = notifier(["when": "always", "mute": "mallory@evil.example"])
        notifier.post(.invitation(account: "alice@example.org", room: "trap@muc.evil.example", from: "mallory@evil.example/x",
                                  displayName: nil, reason: nil))
        await notifier.flush()
        #expect(sink.notifications.isEmpty)
        await notifier.shutdown()
    }
}
