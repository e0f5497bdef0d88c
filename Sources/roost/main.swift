import Foundation

// Registered subcommands; the command implementations live in Commands/, one file each.
let cli = RoostCLI(commands: [RunCommand.self, SearchCommand.self, LogCommand.self, StatsCommand.self, ConfigCommand.self, NotifyCommand.self])
let status = await cli.run(arguments: CommandLine.arguments, output: .process, environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
