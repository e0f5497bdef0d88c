/// A `roost` subcommand. Its static description drives parsing and help; an instance is one invocation.
///
/// Parsing and validation happen in `init(parsed:)`, before anything runs, so every usage mistake
/// exits with status 2 without touching the network or the archive.
protocol Command: Sendable {
    /// The word after `roost`, e.g. `search`.
    static var name: String { get }
    /// One line for `roost --help`.
    static var summary: String { get }
    /// What follows `roost NAME` in the usage line, e.g. `[options] QUERY...`.
    static var usage: String { get }
    /// Paragraphs shown in `roost NAME --help` after the usage line; may be empty.
    static var discussion: String { get }
    /// Options of this command; the global options are added by the framework.
    static var options: [OptionSpec] { get }

    init(parsed: ParsedArguments) throws(UsageError)

    func run(context: CommandContext) async throws -> ExitCode
}

extension Command {
    static var discussion: String { "" }
    static var usage: String { options.isEmpty ? "" : "[options]" }
}
