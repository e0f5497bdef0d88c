import Foundation

let cli = RoostCLI(commands: RoostCLI.allCommands)
let status = await cli.run(arguments: CommandLine.arguments, output: .process, environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
