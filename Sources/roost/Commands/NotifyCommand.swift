import Foundation
import RoostAgent
import RoostNotify

/// `roost notify test [--sink NAME]`: proves each configured sink reaches the user.
struct NotifyCommand: Command {
    static let name = "notify"
    static let summary = "send a test notification through the configured sinks and report each result"
    static let usage = "test [--sink NAME]"
    static let discussion = """
        Checks [notify] and every [sink NAME] group of the config, then sends one test notification through \
        each sink (or only --sink NAME), ignoring the rules (away, quiet hours, mute), and prints one line per \
        sink: ok, or what failed. Without any [sink] group, the desktop sink is tested. Exit status 0 when every \
        sink delivered, 1 when one failed, 78 when the config has a problem. See docs/notify.md.
        """
    static let options: [OptionSpec] = [
        .value("sink", placeholder: "NAME", help: "test only the sink of this [sink NAME] group"),
    ]

    let sink: String?

    init(parsed: ParsedArguments) throws(UsageError) {
        let action = try parsed.onePositional(named: "action (test)")
        guard action == "test" else {
            throw UsageError("unknown action '\(action)' for `roost notify`: expected test", command: parsed.command)
        }
        sink = parsed.value("sink")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        let (notify, problems) = NotifyConfig.parse(notify: config.notify, sinks: config.sinks)
        if !problems.isEmpty {
            for problem in problems {
                context.output.error(config.locations.problem(group: problem.group, key: problem.key, message: problem.message).description)
            }
            return .config
        }
        if let sink, !notify.sinks.contains(where: { $0.name == sink }) {
            let known = notify.sinks.map(\.name).joined(separator: ", ")
            throw UsageError("no sink named \(sink) in \(config.sourcePath ?? "the config") (configured: \(known))", command: "roost notify")
        }
        let logger = Logger(level: context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .warning))
        let notifier = Notifier(config: notify, actions: nil, log: { level, line in logger.log(Self.level(level), line) })
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

    private static func level(_ level: NotifyLogLevel) -> LogLevelSetting {
        switch level {
        case .error: .error
        case .warning: .warning
        case .info: .info
        case .debug: .debug
        }
    }
}
