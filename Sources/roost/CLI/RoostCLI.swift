import RoostCore
import RoostAgent

/// The `roost` entry point: global options, `--help`/`--version`, dispatch to a subcommand, and the
/// mapping from errors to messages and exit statuses.
struct RoostCLI: Sendable {
    let commands: [any Command.Type]

    /// Every subcommand, in the order `roost --help` lists them; the implementations live in Commands/, one file each.
    static let allCommands: [any Command.Type] = [
        RunCommand.self, SearchCommand.self, CountCommand.self, LogCommand.self, ShowCommand.self, StatsCommand.self,
        VerifyCommand.self, ExportCommand.self, ImportCommand.self, ForgetCommand.self, BackupCommand.self, RestoreCommand.self, FilesCommand.self, ServeCommand.self, StatusCommand.self, RosterCommand.self,
        RequestsCommand.self, RoomsCommand.self, SendCommand.self, ReadCommand.self, OMEMOCommand.self, VCardCommand.self, PresenceCommand.self, RegisterCommand.self,
        PasswdCommand.self, UnregisterCommand.self, NotifyCommand.self, WatchCommand.self, ConfigCommand.self, CompletionsCommand.self, MirrorCommand.self,
    ]

    init(commands: [any Command.Type]) {
        self.commands = commands
    }

    func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.name == name }
    }

    /// Runs one command line (`arguments[0]` is the program name) and returns the exit status.
    func run(arguments: [String], output: Output, environment: [String: String]) async -> ExitCode {
        let help = HelpFormatter(commands: commands)
        do {
            let root = try ArgumentParser(command: "roost", specs: GlobalOptions.specs)
                .parse(arguments.dropFirst(), stopAtFirstPositional: true)
            if root.parsed.flag("version") {
                output.line("roost \(RoostVersion.string)")
                return .ok
            }
            guard let name = root.remaining.first else {
                if root.parsed.flag("help") {
                    output.standardOutput.write(help.rootHelp())
                    return .ok
                }
                output.usageHelp(help.rootHelp())
                return .usage
            }
            if name == "help" {
                return try showHelp(for: root.remaining.dropFirst(), output: output, help: help)
            }
            guard let commandType = command(named: name) else {
                throw UsageError("unknown command `\(name)`" + suggestion(for: name))
            }
            return try await run(commandType, arguments: root.remaining.dropFirst(), after: root,
                                 output: output, environment: environment, help: help)
        } catch let error as UsageError {
            output.error(error.description)
            return .usage
        } catch let error as ConfigError {
            output.error(error.description)
            // Short of descriptors or memory is no config problem: systemd must start roost again.
            return error.isResourceShortage ? .internalError : .config
        } catch let error as any CommandFailure {
            output.error(error.description)
            return error.exitCode
        } catch {
            output.error("internal error: \(error)")
            return .internalError
        }
    }

    private func run(
        _ commandType: any Command.Type, arguments: ArraySlice<String>, after root: ArgumentParser.Result,
        output: Output, environment: [String: String], help: HelpFormatter
    ) async throws -> ExitCode {
        let parsed = try Self.arguments(of: commandType, arguments, after: root)
        if parsed.flag("help") {
            output.standardOutput.write(help.help(for: commandType))
            return .ok
        }
        if parsed.flag("version") {
            output.line("roost \(RoostVersion.string)")
            return .ok
        }
        let options = try GlobalOptions(parsed: parsed)
        let command = try commandType.init(parsed: parsed)
        return try await run(command, options: options, output: output, environment: environment)
    }

    /// Parses a command line (without the program name) into the command it asks for and the global options,
    /// without running anything: what `roost` would accept. Nil for `help`, `--help` and `--version`.
    func parse(_ arguments: [String]) throws(UsageError) -> (command: any Command, options: GlobalOptions)? {
        let root = try ArgumentParser(command: "roost", specs: GlobalOptions.specs).parse(arguments[...], stopAtFirstPositional: true)
        guard let name = root.remaining.first, name != "help", !root.parsed.flag("version") else { return nil }
        guard let commandType = command(named: name) else { throw UsageError("unknown command `\(name)`" + suggestion(for: name)) }
        let parsed = try Self.arguments(of: commandType, root.remaining.dropFirst(), after: root)
        if parsed.flag("help") || parsed.flag("version") { return nil }
        return (try commandType.init(parsed: parsed), try GlobalOptions(parsed: parsed))
    }

    /// A command's part of the command line, parsed with its options and the global ones.
    private static func arguments(of commandType: any Command.Type, _ arguments: ArraySlice<String>,
                                  after root: ArgumentParser.Result) throws(UsageError) -> ParsedArguments {
        try ArgumentParser(command: "roost \(commandType.name)", specs: GlobalOptions.specs + commandType.options,
                           dashWordsArePositional: commandType.takesQuery)
            .parse(arguments, into: root.parsed, optionsEnded: root.optionsEnded).parsed
    }

    private func run(_ command: any Command, options: GlobalOptions, output: Output, environment: [String: String]) async throws -> ExitCode {
        var output = output
        output.color = Output.wantsColor(options.color, stdoutIsTTY: output.standardOutputIsTTY, environment: environment)
        output.quiet = options.quiet
        output.verbosity = options.verbosity
        var pager: Pager?
        if command.pagesOutput, output.standardOutputIsTTY, !options.noPager, !options.json {
            pager = Pager.start(environment: environment, atEnd: command.pagerOpensAtEnd)
        }
        guard let pager else {
            return try await command.run(context: CommandContext(options: options, output: output, environment: environment, commands: commands))
        }
        let paged = output.writing(to: pager.output)
        // Notes, and an error thrown from here, reach stderr after the pager has ended, where they can be read.
        defer {
            pager.finish()
            paged.flushDeferredNotes()
        }
        return try await command.run(context: CommandContext(options: options, output: paged, environment: environment, commands: commands))
    }

    private func showHelp(for arguments: ArraySlice<String>, output: Output, help: HelpFormatter) throws(UsageError) -> ExitCode {
        guard let name = arguments.first else {
            output.standardOutput.write(help.rootHelp())
            return .ok
        }
        guard arguments.count == 1 else {
            throw UsageError("`roost help` takes one command name")
        }
        if name == "help" {
            output.standardOutput.write(help.helpForHelp())
            return .ok
        }
        guard let commandType = command(named: name) else {
            throw UsageError("unknown command `\(name)`" + suggestion(for: name))
        }
        output.standardOutput.write(help.help(for: commandType))
        return .ok
    }

    /// " (did you mean `search`?)" for a close typo — every close command when several are (`stat`: `stats`
    /// or `status`) — else nothing.
    private func suggestion(for name: String) -> String {
        Suggestion.phrase(Suggestion.candidates(for: name, among: commands.map { $0.name } + ["help"], prefixes: true,
                                                maxDistance: { _ in 2 }))
    }
}
