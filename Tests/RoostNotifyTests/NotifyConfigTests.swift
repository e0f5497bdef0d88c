import Foundation
import Testing
@testable import RoostNotify

@Suite("Notify config")
struct NotifyConfigTests {
    /// Quiet hours are the user's wall clock, through the program's one date codec (half-hour and DST zones too).
    @Test func quietHoursReadTheLocalWallClock() {
        let instant = Date(timeIntervalSince1970: 1_768_087_800)  // 2026-01-10T23:30:00Z
        func minute(_ zone: String) -> Int { NotifyClock(now: { instant }, timeZone: TimeZone(identifier: zone)!).minuteOfDay }
        #expect(minute("UTC") == 23 * 60 + 30)
        #expect(minute("Asia/Kolkata") == 5 * 60)  // +05:30, the next day
        #expect(minute("America/New_York") == 18 * 60 + 30)  // -05:00 in January
        let summer = Date(timeIntervalSince1970: 1_783_726_200)  // 2026-07-10T23:30:00Z
        #expect(NotifyClock(now: { summer }, timeZone: TimeZone(identifier: "America/New_York")!).minuteOfDay == 19 * 60 + 30)
    }

    @Test func defaultsWithoutAnyGroup() {
        let (config, problems) = NotifyConfig.parse(notify: [:], sinks: [:])
        #expect(problems.isEmpty)
        #expect(config.when == .away)
        #expect(config.groupchat == .mentions)
        #expect(config.sinks.map(\.typeName) == ["desktop"])
    }

    @Test func everyRuleKey() {
        let (config, problems) = NotifyConfig.parse(notify: [
            "when": "always", "idle_seconds": "120", "recent_activity_minutes": "3", "mute": "a@x.org, b@y.org; c@z.org",
            "allow": "d@x.org", "quiet_hours": "22:30-06:15", "coalesce_seconds": "5", "max_per_minute": "7",
            "groupchat": "all", "catch_up_summary": "false", "show_body": "no", "body_length": "80", "contact.Boss@Work.example": "always",
        ], sinks: [:])
        #expect(problems.isEmpty)
        #expect(config.mute == ["a@x.org", "b@y.org", "c@z.org"])
        #expect(config.contactOverrides == ["boss@work.example": .always])
        #expect(config.quietHours?.contains(minuteOfDay: 23 * 60) == true)
        #expect(config.quietHours?.contains(minuteOfDay: 6 * 60 + 15) == false)
        #expect(config.maxPerMinute == 7 && config.coalesceSeconds == 5 && !config.catchUpSummary && !config.showBody)
    }

    @Test func unknownKeysAndBadValuesAreProblems() {
        let (_, problems) = NotifyConfig.parse(notify: ["wen": "away", "when": "sometimes", "quiet_hours": "late", "contact.x@y/z": "always"],
                                               sinks: ["x": ["type": "pager"], "hook": ["type": "webhook", "url": "ftp://x", "colour": "red"]])
        let keys = Set(problems.map { "\($0.group) \($0.key ?? "")" })
        #expect(keys == ["notify wen", "notify when", "notify quiet_hours", "notify contact.x@y/z", "sink x type", "sink hook url", "sink hook colour"])
    }

    @Test func sinkTypesAndTheirKeys() {
        let (config, problems) = NotifyConfig.parse(notify: [:], sinks: [
            "desktop": [:],
            "script": ["type": "command", "command": "notify-phone --title 'new message'", "events": "message, request"],
            "ntfy": ["type": "webhook", "url": "https://ntfy.sh/topic", "format": "ntfy", "token_command": "pass ntfy", "header.X-A": "b"],
            "mail": ["type": "email", "url": "smtps://mail.example.org", "from": "roost@example.org", "to": "me@example.org",
                     "user": "roost", "password_command": "pass mail", "digest_minutes": "15"],
        ])
        #expect(problems.isEmpty)
        #expect(config.sinks.map(\.name) == ["desktop", "mail", "ntfy", "script"])
        guard case let .command(command) = config.sinks[3].kind else {
            Issue.record("sink script is not a command sink: \(config.sinks[3].kind)")
            return
        }
        #expect(command.argv == ["notify-phone", "--title", "new message"])
        #expect(config.sinks[3].events == [.message, .request])
        guard case let .email(mail) = config.sinks[1].kind else {
            Issue.record("sink mail is not an e-mail sink: \(config.sinks[1].kind)")
            return
        }
        #expect(mail.tls == .direct && mail.digestMinutes == 15)
    }

    @Test func plaintextMailOnlyToLoopbackAndSecretsNeverInProblems() {
        let (_, problems) = NotifyConfig.parse(notify: [:], sinks: [
            "mail": ["type": "email", "url": "smtp://mail.example.org", "tls": "none", "from": "r@example.org", "to": "me@example.org",
                     "user": "u", "password": "hunter2-secret"],
            "hook": ["type": "webhook", "url": "https://x.example", "token": "tok-secret", "token_command": "pass tok"],
        ])
        #expect(problems.contains { $0.key == "tls" && $0.message.contains("only allowed") })
        #expect(problems.contains { $0.key == "password" })
        #expect(problems.contains { $0.key == "token_command" })
        #expect(!problems.map(\.description).joined().contains("secret"))
    }

    @Test func truncationAndEscaping() {
        #expect(MarkupText.escape("<a href='x'>&</a>") == "&lt;a href=&apos;x&apos;&gt;&amp;&lt;/a&gt;")
        let long = String(repeating: "word ", count: 100)
        let cut = MarkupText.truncate(long, limit: 50)
        #expect(cut.count <= 51 && cut.hasSuffix("…"))
        #expect(MarkupText.truncate("short", limit: 50) == "short")
    }

    @Test func encodedWordsNeverSplitCharacters() {
        let text = String(repeating: "你好😀", count: 30)
        let encoded = EncodedWords.encode(text)
        for word in encoded.components(separatedBy: "\r\n ") {
            #expect(word.count <= 75)
            let payload = word.dropFirst("=?UTF-8?B?".count).dropLast(2)
            #expect(Data(base64Encoded: String(payload)).flatMap { String(data: $0, encoding: .utf8) } != nil)
        }
    }
}

/// `reply_command` (Reply on desktops without inline reply) and a webhook's `public_url` (push buttons), issue 32.
@Suite("Notify config: reply_command and public_url")
struct NotifyActionConfigTests {
    @Test func replyCommandIsSplitLikeAShellWouldNeverRunByOne() {
        let (config, problems) = NotifyConfig.parse(notify: ["reply_command": #"zenity --entry --title "Reply to it""#], sinks: [:])
        #expect(problems.isEmpty)
        #expect(config.replyCommand == ["zenity", "--entry", "--title", "Reply to it"])
        #expect(NotifyConfig.parse(notify: [:], sinks: [:]).0.replyCommand == nil)
        let (_, bad) = NotifyConfig.parse(notify: ["reply_command": #"zenity "unbalanced"#], sinks: [:])
        #expect(bad.map(\.key) == ["reply_command"])
    }

    @Test func publicURLIsAnHTTPAddress() {
        let sink = ["type": "webhook", "format": "ntfy", "url": "https://ntfy.example/topic"]
        let (config, problems) = NotifyConfig.parse(notify: [:], sinks: ["phone": sink.merging(["public_url": "https://roost.example.org"]) { $1 }])
        #expect(problems.isEmpty)
        guard case .webhook(let webhook)? = config.sinks.first?.kind else { Issue.record("no webhook sink"); return }
        #expect(webhook.publicURL == "https://roost.example.org")
        let (_, bad) = NotifyConfig.parse(notify: [:], sinks: ["phone": sink.merging(["public_url": "roost.example.org"]) { $1 }])
        #expect(bad.map(\.key) == ["public_url"])
    }
}
