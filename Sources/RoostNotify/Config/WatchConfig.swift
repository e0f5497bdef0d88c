/// One `[watch NAME]` group: messages the query selects notify even where the rules would stay silent (a muted room,
/// a group chat message without a mention), titled by the watch. The query is Roost's search language; the agent
/// compiles it with the search's own parser and compiler and tells the notifier which watches a new message matched
/// (`IncomingMessage.watches`). See docs/notify.md.
public struct WatchConfig: Sendable, Hashable {
    public var name: String
    /// As written; `roost config` refuses one that does not parse (the agent checks it, this layer knows no query).
    public var query: String
    /// `sink = NAME`: only that sink shows the watch's notifications; nil: every sink taking messages.
    public var sink: String?
    public var priority: WatchPriority = .high
    /// `quiet_hours = respect`: silent during `[notify] quiet_hours` like other messages; `ignore` (the default):
    /// notifies at any hour.
    public var quietHours: WatchQuietHours = .ignore

    public init(name: String, query: String, sink: String? = nil) {
        self.name = name
        self.query = query
        self.sink = sink
    }
}

/// `[watch NAME] priority`: the desktop urgency (low, normal, critical for urgent) and the ntfy priority (2 to 5).
public enum WatchPriority: String, Sendable, CaseIterable, Comparable {
    case low, normal, high, urgent

    public static func < (a: WatchPriority, b: WatchPriority) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// ntfy's `Priority` header: 1 (min) to 5 (max).
    var ntfy: Int {
        switch self {
        case .low: 2
        case .normal: 3
        case .high: 4
        case .urgent: 5
        }
    }
}

/// `[watch NAME] quiet_hours = ignore|respect`.
public enum WatchQuietHours: String, Sendable, CaseIterable {
    case ignore, respect
}
