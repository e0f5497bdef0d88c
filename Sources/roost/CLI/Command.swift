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
    /// The positional arguments are a query: a `-word` that is no option is a query term (`-spam`).
    static var takesQuery: Bool { get }
    /// What the positional arguments complete to in the shell completions, in order; the last repeats.
    static var arguments: [ArgumentKind] { get }

    init(parsed: ParsedArguments) throws(UsageError)

    func run(context: CommandContext) async throws -> ExitCode

    /// This invocation's output is long and goes through a pager on a terminal (`$PAGER`, `--no-pager`).
    var pagesOutput: Bool { get }

    /// The pager opens at the end of the output (a transcript: the newest messages), not at its start.
    var pagerOpensAtEnd: Bool { get }
}

extension Command {
    static var discussion: String { "" }
    static var usage: String { options.isEmpty ? "" : "[options]" }
    static var takesQuery: Bool { false }
    static var arguments: [ArgumentKind] { [] }
    var pagesOutput: Bool { false }
    var pagerOpensAtEnd: Bool { false }
}
