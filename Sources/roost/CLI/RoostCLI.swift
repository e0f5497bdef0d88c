import RoostAgent

/// The `roost` entry point: global options, `--help`/`--version`, dispatch to a subcommand, and the
/// mapping from errors to messages and exit statuses.
struct RoostCLI: Sendable {
    let commands: [any Command.Type]

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
                output.note(help.rootHelp())
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
            return .config
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
        let parser = ArgumentParser(command: "roost \(commandType.name)", specs: GlobalOptions.specs + commandType.options)
        let parsed = try parser.parse(arguments, into: root.parsed, optionsEnded: root.optionsEnded).parsed
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
        let context = CommandContext(options: options, output: output, environment: environment)
        return try await command.run(context: context)
    }

    private func showHelp(for arguments: ArraySlice<String>, output: Output, help: HelpFormatter) throws(UsageError) -> ExitCode {
        guard let name = arguments.first else {
            output.standardOutput.write(help.rootHelp())
            return .ok
        }
        guard arguments.count == 1 else {
            throw UsageError("`roost help` takes one command name")
        }
        guard let commandType = command(named: name) else {
            throw UsageError("unknown command `\(name)`" + suggestion(for: name))
        }
        output.standardOutput.write(help.help(for: commandType))
        return .ok
    }

    /// "; did you mean `search`?" for a close typo, else nothing.
    private func suggestion(for name: String) -> String {
        let names = commands.map { $0.name } + ["help"]
        let close = names.filter { $0.hasPrefix(name) || Self.editDistance($0, name) <= 2 }
        guard close.count == 1 else { return "" }
        return " (did you mean `\(close[0])`?)"
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            previous = current
        }
        return previous[b.count]
    }
}
