import Synchronization
@testable import roost

/// Collects what a command writes, for assertions.
final class CapturedText: TextSink {
    private let buffer = Mutex("")

    func write(_ text: String) {
        buffer.withLock { $0 += text }
    }

    var text: String {
        buffer.withLock { $0 }
    }
}

/// Runs the CLI in-process with captured stdout and stderr.
struct CLIRun {
    let status: ExitCode
    let stdout: String
    let stderr: String

    static func run(_ arguments: [String], commands: [any Command.Type] = [FakeSearchCommand.self],
                    environment: [String: String] = ["HOME": "/nonexistent-roost-home"]) async -> CLIRun {
        let out = CapturedText()
        let err = CapturedText()
        let output = Output(standardOutput: out, standardError: err, standardOutputIsTTY: false, standardErrorIsTTY: false)
        let status = await RoostCLI(commands: commands).run(arguments: ["roost"] + arguments, output: output, environment: environment)
        return CLIRun(status: status, stdout: out.text, stderr: err.text)
    }
}

enum Order: String, CaseIterable {
    case newest
    case oldest
    case rank
}

/// A command exercising every kind of option; it echoes what it parsed as JSON.
struct FakeSearchCommand: Command {
    static let name = "search"
    static let summary = "find messages"
    static let usage = "[options] QUERY..."
    static let options: [OptionSpec] = [
        .value("limit", short: "n", placeholder: "N", help: "show at most N messages (default 50)"),
        .values("group", short: "g", placeholder: "G", help: "only in group G; repeat for several"),
        .value("order", placeholder: "ORDER", help: "newest, oldest or rank"),
        .flag("highlight", short: "H", help: "highlight matches even when not on a terminal"),
    ]

    let limit: Int
    let groups: [String]
    let order: Order
    let highlight: Bool
    let query: [String]

    init(parsed: ParsedArguments) throws(UsageError) {
        limit = try parsed.integer("limit", in: 1...10_000) ?? 50
        groups = parsed.values("group")
        order = try parsed.choice("order", of: Order.self) ?? .newest
        highlight = parsed.flag("highlight")
        query = parsed.positionals
    }

    func run(context: CommandContext) async throws -> ExitCode {
        context.output.jsonLine([
            "limit": .int(limit),
            "groups": .array(groups.map { .string($0) }),
            "order": .string(order.rawValue),
            "highlight": .bool(highlight),
            "query": .array(query.map { .string($0) }),
            "json": .bool(context.options.json),
            "verbosity": .int(context.options.verbosity),
            "config": .string(context.options.configPath),
        ])
        return query.isEmpty ? .nothingFound : .ok
    }
}
