import RoostCore
import Foundation
import RoostAgent
import RoostNotify

/// `roost notify`: the notification rules and sinks in use; `roost notify test [--sink NAME]` proves each
/// configured sink reaches the user.
struct NotifyCommand: Command {
    static let name = "notify"
    static let summary = "show the notification rules and sinks; send a test notification through each sink"
    static let usage = "[options] [test [--sink NAME]]"
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("test")])]
    static let discussion = """
        Without a subcommand, shows the rules of [notify] (when, quiet hours, muted and allowed contacts, \
        per-contact rules, group chats), every sink, and the watches ([watch NAME] with their query, sink, priority \
        and quiet_hours; highlight_words), as `roost run` will use them. \
        test checks [notify] and every [sink NAME] group of the config, then sends one test notification through \
        each sink (or only --sink NAME), ignoring the rules (away, quiet hours, mute), and prints one line per \
        sink: ok, or what failed. Without any [sink] group, the desktop sink is tested. Exit status 0 when every \
        sink delivered, 1 when one failed, 78 when the config has a problem. See docs/notify.md.
        """
    static let options: [OptionSpec] = [
        .value("sink", placeholder: "NAME", help: "test only the sink of this [sink NAME] group").completing(.sink),
    ]

    let sink: String?
    let test: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        switch parsed.positionals.first {
        case nil:
            test = false
        case "test":
            guard parsed.positionals.count == 1 else { throw UsageError("usage: roost notify test [--sink NAME]", command: parsed.command) }
            test = true
        case let other?:
            throw UsageError("unknown notify subcommand '\(other)' (test)", command: parsed.command)
        }
        sink = parsed.value("sink")
        if sink != nil && !test { throw UsageError("--sink goes with `roost notify test`", command: parsed.command) }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        guard let notify = Self.settings(config, context: context) else { return .config }
        if !test {
            show(notify, accounts: config.accounts, context: context)
            return .ok
        }
        if let sink, !notify.sinks.contains(where: { $0.name == sink }) {
            let known = notify.sinks.map(\.name).joined(separator: ", ")
            throw UsageError("no sink named \(sink) in \(config.sourcePath ?? "the config") (configured: \(known))", command: "roost notify")
        }
        let logger = Logger(level: context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .warning))
        let notifier = Notifier(config: notify, actions: nil, log: { level, line in logger.log(level, line) })
        let results = await notifier.testAllSinks(only: sink)
        await notifier.shutdown()
        var failures = 0
        for result in results {
            let failure: NotifyError?
            if case let .failure(error) = result.result { failure = error } else { failure = nil }
            if failure != nil { failures += 1 }
            if context.options.json {
                context.output.jsonLine(["kind": "sink", "sink": .string(result.sink), "type": .string(result.type),
                                         "ok": .bool(failure == nil), "error": failure.map { .string($0.description) } ?? .null])
            } else {
                context.output.line("\(result.sink) (\(result.type)): " + (failure.map { "failed: \($0)" } ?? "ok"))
            }
        }
        return failures == 0 ? .ok : .nothingFound
    }

    /// `[notify]`, the sinks and the watches as `roost run` reads them; nil, each problem said, when there is one.
    static func settings(_ config: RoostConfig, context: CommandContext) -> NotifyConfig? {
        let (notify, problems) = config.notifySettings()
        for problem in problems {
            context.output.error(config.locations.problem(group: problem.group, key: problem.key, message: problem.message).description)
        }
        return problems.isEmpty ? notify : nil
    }

    private func show(_ notify: NotifyConfig, accounts: [AccountConfig], context: CommandContext) {
        let quiet = notify.quietHours.map { String(format: "%02d:%02d-%02d:%02d", $0.start / 60, $0.start % 60, $0.end / 60, $0.end % 60) }
        if context.options.json {
            context.output.jsonLine(["kind": "rules", "when": .string(notify.when.rawValue), "quiet_hours": .string(quiet),
                                     "mute": .array(notify.mute.sorted().map { .string($0) }),
                                     "allow": .array(notify.allow.sorted().map { .string($0) }),
                                     "contacts": .object(JSONObject(notify.contactOverrides.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.rawValue)) })),
                                     "groupchat": .string(notify.groupchat.rawValue), "catch_up_summary": .bool(notify.catchUpSummary),
                                     "show_body": .bool(notify.showBody),
                                     "reply_command": .string(notify.replyCommand?.joined(separator: " "))])
            for sink in notify.sinks {
                context.output.jsonLine(["kind": "sink", "sink": .string(sink.name), "type": .string(sink.typeName),
                                         "events": .array(sink.events.map(\.rawValue).sorted().map { .string($0) }),
                                         "public_url": .string(Self.publicURL(of: sink))])
            }
            WatchCommand.show(notify.watches, accounts: accounts, output: context.output, json: true)
            return
        }
        let output = context.output
        output.line("when:         \(notify.when.rawValue)" + (notify.when == .away ? " (idle after \(notify.idleSeconds) s)" : ""))
        output.line("quiet hours:  \(quiet ?? "none")")
        if !notify.mute.isEmpty { output.line("muted:        \(notify.mute.sorted().joined(separator: ", "))") }
        if !notify.allow.isEmpty { output.line("only:         \(notify.allow.sorted().joined(separator: ", "))") }
        for (contact, when) in notify.contactOverrides.sorted(by: { $0.key < $1.key }) {
            output.line("contact:      \(contact) = \(when.rawValue)")
        }
        output.line("group chats:  \(notify.groupchat.rawValue)")
        if let reply = notify.replyCommand { output.line("reply with:   \(reply.joined(separator: " ")) (desktops without inline reply)") }
        for sink in notify.sinks {
            output.line("sink:         \(sink.name) (\(sink.typeName)): \(sink.events.map(\.rawValue).sorted().joined(separator: ", "))"
                        + (Self.publicURL(of: sink).map { "; buttons act through \($0)" } ?? ""))
        }
        WatchCommand.show(notify.watches, accounts: accounts, output: output, json: false)
    }

    /// A webhook sink's `public_url`: its pushes carry buttons acting through `roost serve` there.
    private static func publicURL(of sink: SinkConfig) -> String? {
        if case .webhook(let webhook) = sink.kind { return webhook.publicURL }
        return nil
    }
}
