import Foundation
import Testing
@testable import RoostNotify

/// Watches (`[watch NAME]`) in the rules, summaries that do not hide each other, invitations through a room.
@Suite("Notify: watches and summaries")
struct NotifyWatchTests {
    private func notifier(_ notify: [String: String], watches: [String: [String: String]] = [:], clock: NotifyClock = .system)
        -> (Notifier, RecordingSink, RecordingSink) {
        let first = RecordingSink(name: "rec"), second = RecordingSink(name: "phone")
        var factory = SinkFactory()
        factory.substitute = { $0.name == "rec" ? first : second }
        let (config, problems) = NotifyConfig.parse(notify: notify, sinks: ["rec": ["type": "command", "command": "/bin/true"],
                                                                           "phone": ["type": "command", "command": "/bin/true"]],
                                                    watches: watches)
        precondition(problems.isEmpty, "\(problems)")
        let notifier = Notifier(config: config, actions: nil, statePath: nil, log: LogCollector().log, clock: clock,
                                idle: IdleProbe { nil }, factory: factory)
        return (notifier, first, second)
    }

    private func watched(_ body: String, _ watches: [String], room: String = "ops@muc.example.org") -> IncomingMessage {
        var message = NotifyFixtures.message(body, from: room, name: "bob", groupchat: true)
        message.watches = watches
        return message
    }

    @Test func aWatchedMessageOfAMutedRoomNotifiesOnceTitledByItsWatches() async {
        let (notifier, sink, _) = notifier(["mute": "ops@muc.example.org", "coalesce_seconds": "0"],
                                           watches: ["deploys": ["query": "deploy"], "boss": ["query": "from:bob"]])
        notifier.post(.message(watched("deploy now", ["boss", "deploys"])))
        notifier.post(.message(watched("chatter", [])))
        await notifier.flush()
        #expect(sink.notifications.map(\.body) == ["deploy now"])
        #expect(sink.notifications.first?.title == "boss, deploys: bob in ops")
        #expect(sink.notifications.first?.watches == ["boss", "deploys"])
        #expect(sink.notifications.first?.priority == .high)
        await notifier.shutdown()
    }

    @Test func quietHoursAreRespectedOrIgnoredPerWatch() async {
        // 03:00 UTC, inside 22:00-07:00.
        let clock = TestClock(Date(timeIntervalSince1970: 3 * 3600))
        let (notifier, sink, _) = notifier(["quiet_hours": "22:00-07:00", "coalesce_seconds": "0"],
                                           watches: ["polite": ["query": "polite", "quiet_hours": "respect"],
                                                     "pager": ["query": "urgent", "quiet_hours": "ignore", "priority": "urgent"]],
                                           clock: clock.clock)
        notifier.post(.message(watched("polite word", ["polite"])))
        notifier.post(.message(watched("urgent word", ["pager"])))
        await notifier.flush()
        #expect(sink.notifications.map(\.body) == ["urgent word"])
        #expect(sink.notifications.first?.priority == .urgent)
        await notifier.shutdown()
    }

    @Test func aWatchWithASinkGoesToThatSinkOnly() async {
        let (notifier, rec, phone) = notifier(["coalesce_seconds": "0"], watches: ["pager": ["query": "x", "sink": "phone"]])
        notifier.post(.message(watched("paged", ["pager"])))
        await notifier.flush()
        #expect(rec.notifications.isEmpty)
        #expect(phone.notifications.map(\.body) == ["paged"])
        await notifier.shutdown()
    }

    @Test func watchGroupsAreValidated() {
        let (config, problems) = NotifyConfig.parse(notify: [:], sinks: [:], watches: [
            "ok": ["query": "deploy", "priority": "low", "quiet_hours": "respect"],
            "nosink": ["query": "x", "sink": "pager"],
            "noquery": ["sink": "desktop"],
            "typo": ["query": "x", "priorty": "high"],
        ])
        #expect(config.watches.map(\.name) == ["ok"])
        #expect(config.watches.first?.priority == .low && config.watches.first?.quietHours == .respect)
        #expect(Set(problems.map { "\($0.group) \($0.key ?? "")" }) == ["watch nosink sink", "watch noquery query", "watch typo priorty"])
    }

    @Test func theRoomsSummaryNeitherReplacesNorHidesTheChatsSummary() async {
        let clock = TestClock(Date())
        let (notifier, sink, _) = notifier(["when": "always", "groupchat": "all"], clock: clock.clock)
        let start = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        let chats = (0..<3).map { NotifyFixtures.message("dm\($0)", at: start + Int64($0)) }
        // Said in the rooms before the chats' newest message: still summarised.
        let lounge = (0..<4).map { NotifyFixtures.message("l\($0)", from: "lounge@muc.example.org", at: start - 500 + Int64($0), groupchat: true) }
        let team = (0..<2).map { NotifyFixtures.message("t\($0)", from: "team@muc.example.org", at: start - 400 + Int64($0), groupchat: true) }
        clock.advance(10)
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: chats))
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: lounge))
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: team))
        await notifier.flush()
        let summaries = sink.notifications
        #expect(summaries.map(\.kind) == [.summary, .summary, .summary])
        #expect(summaries[0].text.hasPrefix("3 messages from Bob Example while you were away"))
        #expect(summaries[1].text.hasPrefix("4 messages in lounge@muc.example.org while you were away"))
        // The second room's catch-up adds to the rooms' summary: it replaces it, counting both.
        #expect(summaries[2].text.hasPrefix("6 messages in 2 rooms while you were away"), "\(summaries[2].text)")
        #expect(summaries[0].replacementKey != summaries[1].replacementKey)
        #expect(summaries[1].replacementKey == summaries[2].replacementKey)
        await notifier.shutdown()
    }

    @Test func aWatchedMessageOfACatchUpNotifiesOnItsOwnAndLeavesTheSummary() async {
        let clock = TestClock(Date())
        let (notifier, sink, _) = notifier(["when": "always"], watches: ["deploys": ["query": "deploy"]], clock: clock.clock)
        let start = Int64(Date().timeIntervalSince1970 * 1000) + 1000
        var messages = (0..<3).map { NotifyFixtures.message("dm\($0)", at: start + Int64($0)) }
        messages[1].body = "deploy failed"
        messages[1].watches = ["deploys"]
        clock.advance(10)
        notifier.post(.catchUpFinished(account: "alice@example.org", messages: messages))
        await notifier.flush()
        #expect(sink.notifications.map(\.kind) == [.message, .summary])
        #expect(sink.notifications.first?.title == "deploys: Bob Example" && sink.notifications.first?.body == "deploy failed")
        // The two others, the older one too (the watched message's time does not hide it).
        #expect(sink.notifications.last?.text.hasPrefix("2 messages from Bob Example") == true, "\(sink.notifications.last?.text ?? "")")
        await notifier.shutdown()
    }

    @Test func anInvitationThroughTheRoomNamesTheInvitersNickNotTheRoomTwice() async {
        let (notifier, sink, _) = notifier(["when": "always"])
        notifier.post(.invitation(account: "alice@example.org", room: "party@muc.example.org", from: "party@muc.example.org/Carol",
                                  displayName: nil, reason: nil))
        await notifier.flush()
        let text = sink.notifications.first?.text ?? ""
        #expect(text == "Carol invites you to party@muc.example.org", "\(text)")
        await notifier.shutdown()
    }
}
