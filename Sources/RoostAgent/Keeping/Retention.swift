import RoostCore
public import Foundation
public import RoostArchive

/// `[retention]`: how long messages are kept (issue 34, 4). `keep = 90d` (a number of days, weeks, months or years:
/// `d`, `w`, `m`, `y`) or `forever` (the default), and per conversation `contact.JID = 30d|forever` (a contact or a
/// room, by its bare JID), as `[notify]` overrides per contact. What is older goes as `roost forget` removes it
/// (docs/forget.md), tombstones included.
public struct RetentionConfig: Sendable, Hashable {
    /// The default age, as the query language writes it (`90d`); nil: forever.
    public var keep: String?
    /// Per conversation (lowercased bare JID): its age, nil for forever.
    public var overrides: [String: String?] = [:]

    public init(keep: String? = nil, overrides: [String: String?] = [:]) {
        self.keep = keep
        self.overrides = overrides
    }

    static let contactPrefix = "contact."

    /// Whether anything is ever removed.
    public var removesAnything: Bool { keep != nil || overrides.values.contains { $0 != nil } }

    /// One rule per age: what it says (`keep = 90d`, `contact.bob@example.org = 7d`), its age, and whose messages it
    /// removes: one conversation, or (nil) every one but those with a rule of their own.
    public var rules: [Rule] {
        var rules: [Rule] = []
        for (jid, age) in overrides.sorted(by: { $0.key < $1.key }) {
            if let age { rules.append(Rule(text: "\(Self.contactPrefix)\(jid) = \(age)", age: age, conversation: jid, excluding: [])) }
        }
        if let keep { rules.append(Rule(text: "keep = \(keep)", age: keep, conversation: nil, excluding: overrides.keys.sorted())) }
        return rules
    }

    public struct Rule: Sendable, Hashable {
        public let text: String
        /// `90d`: as the query language writes a relative date.
        public let age: String
        public let conversation: String?
        public let excluding: [String]

        /// The instant before which messages go, for a run at `now`.
        public func cutoff(now: Date = Date()) -> Int64 {
            // A valid age (`RetentionConfig.isAge`) is a relative date of the query language: its one date codec.
            (try? DateExpression.span(of: age, option: "keep", now: now))?.start ?? Int64.min
        }

        /// What this rule removes now.
        public func selection(_ reader: ArchiveReader, now: Date = Date()) throws(ArchiveError) -> (ids: [Int64], conversations: Int) {
            try reader.messageIDs(before: cutoff(now: now), conversation: conversation, excluding: excluding)
        }
    }

    /// Reads `[retention]` as written; the problems are (key, message).
    static func parse(_ values: [String: String]) -> (RetentionConfig, [(key: String, message: String)]) {
        var config = RetentionConfig()
        var problems: [(String, String)] = []
        for key in values.keys.sorted() {
            let value = values[key]!.trimmingCharacters(in: .whitespaces).lowercased()
            let age: String??
            if value == "forever" { age = .some(nil) } else if Self.isAge(value) { age = .some(value) } else { age = nil }
            guard let age else {
                problems.append((key, "expected forever or an age such as 90d, 12w, 6m or 2y (days, weeks, months, years)"))
                continue
            }
            if key == "keep" {
                config.keep = age
            } else if key.hasPrefix(Self.contactPrefix) {
                let jid = String(key.dropFirst(Self.contactPrefix.count)).lowercased()
                guard jid.contains("@") || jid.contains("."), !jid.contains("/"), !jid.contains(" ") else {
                    problems.append((key, "expected contact.JID with a contact's or a room's bare JID, e.g. contact.bob@example.org"))
                    continue
                }
                config.overrides[jid] = age
            } else {
                problems.append((key, "unknown key; [retention] takes keep and contact.JID"))
            }
        }
        return (config, problems)
    }

    /// `90d`, `12w`, `6m`, `2y`: a positive number and a unit.
    static func isAge(_ text: String) -> Bool {
        guard let unit = text.last, "dwmy".contains(unit), let number = Int(text.dropLast()) else { return false }
        return number > 0 && number <= 100_000
    }
}

/// Applies `[retention]` in the agent: at start, then once a day; each run's removals are logged with their counts.
enum Retention {
    static let interval: Duration = .seconds(24 * 3600)

    /// Starts the daily runs (the first at once); cancel the task to stop them.
    static func start(_ config: RetentionConfig, archive: String, writer: ArchiveWriter, log: Logger) -> Task<Void, Never>? {
        guard config.removesAnything else { return nil }
        return Task.detached(priority: .utility) {
            while !Task.isCancelled {
                apply(config, archive: archive, writer: writer, log: log)
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// One run: each rule's messages forgotten; returns how many went.
    @discardableResult
    static func apply(_ config: RetentionConfig, archive: String, writer: ArchiveWriter, log: Logger) -> Int {
        var removed = 0
        for rule in config.rules {
            do {
                let (ids, conversations) = try rule.selection(try ArchiveReader(path: archive))
                guard !ids.isEmpty else { continue }
                let result = try writer.forget(ids: ids)
                removed += result.messages
                log.info("retention (\(rule.text)): forgot \(result.messages) \(result.messages == 1 ? "message" : "messages") in "
                         + "\(conversations) \(conversations == 1 ? "conversation" : "conversations")")
            } catch {
                log.error("retention (\(rule.text)): \(LogText.quote(error))")
            }
        }
        return removed
    }
}
