/// The validated `[notify]` rules and `[sink NAME]` groups. See docs/notify.md for every key.
public struct NotifyConfig: Sendable, Hashable {
    public var when: NotifyWhen = .away
    /// The desktop session counts as idle (so the user as away) after this many seconds; 0 ignores idle time.
    public var idleSeconds: Int = 300
    /// When > 0, the user counts as present in a conversation only if they wrote in it from another client
    /// within this many minutes.
    public var recentActivityMinutes: Int = 0
    public var mute: Set<String> = []
    /// When not empty, only these conversations notify (subscription requests are not affected).
    public var allow: Set<String> = []
    /// `contact.JID = always|away|never`: `when` for one conversation.
    public var contactOverrides: [String: NotifyWhen] = [:]
    public var quietHours: QuietHours?
    public var coalesceSeconds: Int = 10
    /// 0: no cap.
    public var maxPerMinute: Int = 20
    public var groupchat: GroupchatPolicy = .mentions
    /// `room.JID = all|mentions|none`: `groupchat` for one room.
    public var roomOverrides: [String: GroupchatPolicy] = [:]
    public var catchUpSummary: Bool = true
    public var showBody: Bool = true
    /// Longest body shown, in characters.
    public var bodyLength: Int = 200
    /// `reply_command`: the program (split like a shell would, never run by one) whose standard output is the text of a
    /// `Reply` pressed on a desktop notification whose server has no inline reply; nil: no `Reply` button there.
    public var replyCommand: [String]?
    /// In file order of names; the implicit `desktop` sink when no `[sink]` group exists.
    public var sinks: [SinkConfig] = [SinkConfig(name: "desktop", kind: .desktop, events: Set(SinkEventKind.allCases), timeoutSeconds: 5)]
    /// `[watch NAME]` groups, by name.
    public var watches: [WatchConfig] = []

    public init() {}

    /// Validates `[notify]`, the `[sink NAME]` and the `[watch NAME]` groups exactly as written in the config file.
    /// Every unknown key and bad value is a problem; the config returned uses defaults in their place. A watch's query
    /// is checked by the agent (`roost config`), which knows the search language.
    public static func parse(notify: [String: String], sinks: [String: [String: String]],
                             watches: [String: [String: String]] = [:]) -> (NotifyConfig, [NotifyConfigProblem]) {
        var parser = NotifyConfigParser()
        var config = parser.rules(notify)
        if !sinks.isEmpty {
            config.sinks = sinks.keys.sorted().compactMap { parser.sink(name: $0, values: sinks[$0] ?? [:]) }
        }
        config.watches = watches.keys.sorted().compactMap { parser.watch(name: $0, values: watches[$0] ?? [:], sinks: config.sinks) }
        return (config, parser.problems)
    }
}
