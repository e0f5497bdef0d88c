import Foundation
import RoostCore

/// Reads `[notify]` and `[sink NAME]` values into `NotifyConfig`, collecting problems instead of stopping
/// at the first, so `roost config` can list them all.
struct NotifyConfigParser {
    private(set) var problems: [NotifyConfigProblem] = []

    static let ruleKeys = ["when", "idle_seconds", "recent_activity_minutes", "mute", "allow", "quiet_hours",
                           "coalesce_seconds", "max_per_minute", "groupchat", "catch_up_summary", "show_body", "body_length", "reply_command"]
    static let contactPrefix = "contact."
    static let roomPrefix = "room."
    static let headerPrefix = "header."
    static let commonSinkKeys = ["type", "events", "timeout_seconds"]
    static let sinkKeys: [String: [String]] = [
        "desktop": [],
        "command": ["command"],
        "webhook": ["url", "format", "token", "token_command", "tags", "retries", "public_url"],
        "email": ["url", "tls", "from", "to", "user", "password", "password_command", "ca_file", "digest_minutes"],
    ]

    mutating func rules(_ values: [String: String]) -> NotifyConfig {
        var config = NotifyConfig()
        let group = "notify"
        for key in values.keys.sorted() {
            let value = values[key]!.trimmingCharacters(in: .whitespaces)
            switch key {
            case "when": config.when = choice(value, group: group, key: key) ?? config.when
            case "idle_seconds": config.idleSeconds = integer(value, in: 0...86_400, group: group, key: key) ?? config.idleSeconds
            case "recent_activity_minutes":
                config.recentActivityMinutes = integer(value, in: 0...10_080, group: group, key: key) ?? config.recentActivityMinutes
            case "mute": config.mute = jids(value, group: group, key: key)
            case "allow": config.allow = jids(value, group: group, key: key)
            case "quiet_hours":
                if value.isEmpty { config.quietHours = nil }
                else if let hours = QuietHours(value) { config.quietHours = hours }
                else { problem(group, key, "expected a span of local time like 22:00-07:00") }
            case "coalesce_seconds": config.coalesceSeconds = integer(value, in: 0...3600, group: group, key: key) ?? config.coalesceSeconds
            case "max_per_minute": config.maxPerMinute = integer(value, in: 0...10_000, group: group, key: key) ?? config.maxPerMinute
            case "groupchat": config.groupchat = choice(value, group: group, key: key) ?? config.groupchat
            case "catch_up_summary": config.catchUpSummary = boolean(value, group: group, key: key) ?? config.catchUpSummary
            case "show_body": config.showBody = boolean(value, group: group, key: key) ?? config.showBody
            case "body_length": config.bodyLength = integer(value, in: 10...4000, group: group, key: key) ?? config.bodyLength
            case "reply_command":
                if value.isEmpty { config.replyCommand = nil }
                else if let argv = ShellWords.split(value), let program = argv.first { config.replyCommand = [Self.expandHome(program)] + argv.dropFirst() }
                else { problem(group, key, "unbalanced quotes") }
            default:
                if key.hasPrefix(Self.contactPrefix) {
                    let jid = String(key.dropFirst(Self.contactPrefix.count)).lowercased()
                    guard JIDList.isPlausibleBareJID(jid) else {
                        problem(group, key, "expected contact.JID with a bare JID (no /resource)")
                        continue
                    }
                    // `contact.bob`: a name, not an address; the override would never match a conversation.
                    guard jid.contains("@") || jid.contains(".") else {
                        problem(group, key, "'\(jid)' is not a JID; write the contact's address, e.g. contact.\(jid)@example.org")
                        continue
                    }
                    if let when: NotifyWhen = choice(value, group: group, key: key) { config.contactOverrides[jid] = when }
                } else if key.hasPrefix(Self.roomPrefix) {
                    let jid = String(key.dropFirst(Self.roomPrefix.count)).lowercased()
                    guard jid.contains("@"), JIDList.isPlausibleBareJID(jid) else {
                        problem(group, key, "expected room.JID with a room's bare JID (room@service)")
                        continue
                    }
                    if let policy: GroupchatPolicy = choice(value, group: group, key: key) { config.roomOverrides[jid] = policy }
                } else {
                    problem(group, key, "unknown key" + Self.suggestion(for: key)
                            + "; known keys: \((Self.ruleKeys + ["contact.JID", "room.JID"]).joined(separator: ", "))")
                }
            }
        }
        return config
    }

    /// " (did you mean `quiet_hours`?)" for a mistyped rule key; `contacts.bob@x` → `contact.bob@x`.
    static func suggestion(for key: String) -> String {
        if let dot = key.firstIndex(of: "."), dot != key.startIndex {
            let rest = key[key.index(after: dot)...]
            let prefixes = Suggestion.candidates(for: String(key[..<dot]), among: [contactPrefix, roomPrefix].map { String($0.dropLast()) })
            return Suggestion.phrase(prefixes.map { "\($0).\(rest)" })
        }
        return Suggestion.phrase(Suggestion.candidates(for: key, among: ruleKeys))
    }

    mutating func sink(name: String, values: [String: String]) -> SinkConfig? {
        let group = "sink \(name)"
        let value = { (key: String) -> String? in values[key].map { $0.trimmingCharacters(in: .whitespaces) } }
        let typeName = value("type") ?? (Self.sinkKeys[name] != nil ? name : nil)
        guard let typeName else {
            problem(group, "type", "missing; set type = desktop, command, webhook or email")
            return nil
        }
        guard let allowed = Self.sinkKeys[typeName] else {
            problem(group, "type", "expected desktop, command, webhook or email")
            return nil
        }
        for key in values.keys.sorted() where !Self.commonSinkKeys.contains(key) && !allowed.contains(key)
            && !(typeName == "webhook" && key.hasPrefix(Self.headerPrefix)) {
            let known = Self.commonSinkKeys + allowed + (typeName == "webhook" ? ["header.NAME"] : [])
            problem(group, key, "unknown key for a \(typeName) sink\(Suggestion.phrase(Suggestion.candidates(for: key, among: known))); "
                    + "known keys: \(known.joined(separator: ", "))")
        }
        var events = Set(SinkEventKind.allCases)
        if let text = value("events") {
            events = []
            for word in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == ";" }) {
                if let kind = SinkEventKind(rawValue: String(word)) { events.insert(kind) }
                else { problem(group, "events", "expected a list of message, request, invitation, summary") }
            }
        }
        let defaultTimeout = ["desktop": 5, "command": 10, "webhook": 10, "email": 30][typeName] ?? 10
        let timeout = value("timeout_seconds").flatMap { integer($0, in: 1...600, group: group, key: "timeout_seconds") } ?? defaultTimeout
        let before = problems.count
        let kind: SinkKind
        switch typeName {
        case "desktop": kind = .desktop
        case "command": kind = .command(commandSink(value, group: group))
        case "webhook": kind = .webhook(webhookSink(values, value, group: group))
        default: kind = .email(emailSink(value, group: group))
        }
        return problems.count == before ? SinkConfig(name: name, kind: kind, events: events, timeoutSeconds: timeout) : nil
    }

    static let watchKeys = ["query", "sink", "priority", "quiet_hours"]

    mutating func watch(name: String, values: [String: String], sinks: [SinkConfig]) -> WatchConfig? {
        let group = "watch \(name)"
        let before = problems.count
        for key in values.keys.sorted() where !Self.watchKeys.contains(key) {
            problem(group, key, "unknown key in a watch\(Suggestion.phrase(Suggestion.candidates(for: key, among: Self.watchKeys))); "
                    + "known keys: \(Self.watchKeys.joined(separator: ", "))")
        }
        let value = { (key: String) -> String? in values[key].map { $0.trimmingCharacters(in: .whitespaces) } }
        guard let query = value("query"), !query.isEmpty else {
            problem(group, "query", "missing; the messages to watch for, in the search language (e.g. from:boss OR \"server down\")")
            return nil
        }
        var watch = WatchConfig(name: name, query: query)
        if let sink = value("sink"), !sink.isEmpty {
            if sinks.contains(where: { $0.name == sink }) { watch.sink = sink }
            else { problem(group, "sink", "no sink named \(sink) (configured: \(sinks.map(\.name).joined(separator: ", ")))") }
        }
        if let text = value("priority") { watch.priority = choice(text, group: group, key: "priority") ?? watch.priority }
        if let text = value("quiet_hours") { watch.quietHours = choice(text, group: group, key: "quiet_hours") ?? watch.quietHours }
        return problems.count == before ? watch : nil
    }

    private mutating func commandSink(_ value: (String) -> String?, group: String) -> CommandSinkConfig {
        guard let text = value("command"), !text.isEmpty else {
            problem(group, "command", "missing; the program (and its arguments) to run")
            return CommandSinkConfig(argv: [])
        }
        guard let argv = ShellWords.split(text), !argv.isEmpty else {
            problem(group, "command", "unbalanced quotes")
            return CommandSinkConfig(argv: [])
        }
        return CommandSinkConfig(argv: argv.enumerated().map { $0.offset == 0 ? Self.expandHome($0.element) : $0.element })
    }

    private mutating func webhookSink(_ values: [String: String], _ value: (String) -> String?, group: String) -> WebhookSinkConfig {
        let url = value("url") ?? ""
        if url.isEmpty { problem(group, "url", "missing; the http:// or https:// address to POST to") }
        else if !(url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://")) || URL(string: url)?.host == nil {
            problem(group, "url", "expected an http:// or https:// URL")
        }
        var headers: [String: String] = [:]
        for (key, text) in values where key.hasPrefix(Self.headerPrefix) {
            let name = String(key.dropFirst(Self.headerPrefix.count))
            if name.isEmpty || name.contains(where: { $0 == ":" || $0 == " " || $0.asciiValue == nil }) || text.contains(where: \.isNewline) {
                problem(group, key, "expected header.NAME = value with an ASCII header name and a one-line value")
            } else {
                headers[name] = text.trimmingCharacters(in: .whitespaces)
            }
        }
        let publicURL = value("public_url").flatMap { $0.isEmpty ? nil : $0 }
        if let publicURL, !(publicURL.lowercased().hasPrefix("https://") || publicURL.lowercased().hasPrefix("http://")) || URL(string: publicURL)?.host == nil {
            problem(group, "public_url", "expected the http:// or https:// address where roost serve is reached, e.g. https://roost.example.org")
        }
        return WebhookSinkConfig(
            url: url,
            format: value("format").flatMap { choice($0, group: group, key: "format") } ?? .json,
            token: secret(value, literalKey: "token", commandKey: "token_command", group: group),
            headers: headers,
            tags: value("tags") ?? "speech_balloon",
            retries: value("retries").flatMap { integer($0, in: 0...10, group: group, key: "retries") } ?? 3,
            publicURL: publicURL)
    }

    private mutating func emailSink(_ value: (String) -> String?, group: String) -> EmailSinkConfig {
        let url = value("url") ?? ""
        let lower = url.lowercased()
        let host = URL(string: url)?.host ?? ""
        if url.isEmpty { problem(group, "url", "missing; e.g. smtp://mail.example.org:587 or smtps://mail.example.org") }
        else if !(lower.hasPrefix("smtp://") || lower.hasPrefix("smtps://")) || host.isEmpty {
            problem(group, "url", "expected smtp://HOST[:PORT] or smtps://HOST[:PORT]")
        }
        let tls: EmailSinkConfig.TLS = value("tls").flatMap { choice($0, group: group, key: "tls") } ?? (lower.hasPrefix("smtps://") ? .direct : .starttls)
        if tls == .direct && lower.hasPrefix("smtp://") { problem(group, "tls", "tls = direct needs an smtps:// url") }
        if tls != .direct && lower.hasPrefix("smtps://") { problem(group, "tls", "an smtps:// url is always direct TLS; set tls = direct or use smtp://") }
        if tls == .none && !Self.isLoopback(host) {
            problem(group, "tls", "tls = none is only allowed for a server on this machine (localhost, 127.0.0.1, ::1)")
        }
        let from = value("from") ?? ""
        if !Self.isMailAddress(from) { problem(group, "from", "expected the sender address, e.g. roost@example.org") }
        let to = (value("to") ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == ";" }).map(String.init)
        if to.isEmpty || !to.allSatisfy(Self.isMailAddress) { problem(group, "to", "expected one or more recipient addresses") }
        let user = value("user").flatMap { $0.isEmpty ? nil : $0 }
        let password = secret(value, literalKey: "password", commandKey: "password_command", group: group)
        if password != nil && user == nil { problem(group, "user", "missing; a password needs a user name") }
        if password != nil && tls == .none { problem(group, "password", "is never sent without TLS; set tls = starttls or direct") }
        return EmailSinkConfig(
            url: url, tls: tls, from: from, to: to, user: user, password: password,
            caFile: value("ca_file").map(Self.expandHome),
            digestMinutes: value("digest_minutes").flatMap { integer($0, in: 0...1440, group: group, key: "digest_minutes") } ?? 0)
    }

    // MARK: Values

    private mutating func secret(_ value: (String) -> String?, literalKey: String, commandKey: String, group: String) -> SecretSource? {
        switch (value(literalKey), value(commandKey)) {
        case (nil, nil): return nil
        case let (literal?, nil): return .literal(literal)
        case let (nil, command?): return .command(command)
        case (.some, .some):
            problem(group, commandKey, "give either \(literalKey) or \(commandKey), not both")
            return nil
        }
    }

    // The grammar is the one every group shares (`SettingValue`); a problem is kept and the default used.

    private mutating func choice<Choice: RawRepresentable & CaseIterable>(_ text: String, group: String, key: String) -> Choice?
    where Choice.RawValue == String {
        recorded(group, key) { () throws(ConfigValueError) in try SettingValue.choice(text, of: Choice.self) }
    }

    private mutating func integer(_ text: String, in range: ClosedRange<Int>, group: String, key: String) -> Int? {
        recorded(group, key) { () throws(ConfigValueError) in try SettingValue.integer(text, in: range) }
    }

    private mutating func boolean(_ text: String, group: String, key: String) -> Bool? {
        recorded(group, key) { () throws(ConfigValueError) in try SettingValue.boolean(text) }
    }

    private mutating func recorded<Value>(_ group: String, _ key: String, _ parse: () throws(ConfigValueError) -> Value) -> Value? {
        do { return try parse() } catch {
            problem(group, key, error.message)
            return nil
        }
    }

    private mutating func jids(_ text: String, group: String, key: String) -> Set<String> {
        let list = JIDList.parse(text)
        for jid in list where !JIDList.isPlausibleBareJID(jid) {
            problem(group, key, "'\(jid)' is not a bare JID")
        }
        return list.filter(JIDList.isPlausibleBareJID)
    }

    private mutating func problem(_ group: String, _ key: String?, _ message: String) {
        problems.append(NotifyConfigProblem(group: group, key: key, message: message))
    }

    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    static func isMailAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
            && !text.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "," || $0 == "\"" })
    }

    static func expandHome(_ path: String) -> String {
        guard path.hasPrefix("~/") else { return path }
        return FileManager.default.homeDirectoryForCurrentUser.path + path.dropFirst(1)
    }
}
