import Foundation

// Registered subcommands; the command implementations live in Commands/, one file each.
let cli = RoostCLI(commands: [RunCommand.self, SearchCommand.self, LogCommand.self, StatsCommand.self, VerifyCommand.self,
                              ExportCommand.self, ImportCommand.self, FilesCommand.self, ServeCommand.self,
                              StatusCommand.self, RosterCommand.self, RequestsCommand.self, RoomsCommand.self, SendCommand.self, OMEMOCommand.self, VCardCommand.self,
                              PresenceCommand.self, RegisterCommand.self, PasswdCommand.self, UnregisterCommand.self,
                              NotifyCommand.self, ConfigCommand.self])
let status = await cli.run(arguments: CommandLine.arguments, output: .process, environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
