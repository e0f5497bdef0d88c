import Foundation
import RoostCore

/// Says why Roost cannot run with this descriptor limit (exit 70: the machine's state, not the config), or nothing.
func refuseTooFewDescriptors() {
    let limit = DescriptorLimit.current()
    guard limit >= 0, limit < DescriptorLimit.fewest else { return }
    let message = "roost: error: this process may have only \(limit) open files (`ulimit -n`); Roost needs at least "
        + "\(DescriptorLimit.fewest): raise the limit (`ulimit -n 1024`, or LimitNOFILE= in a systemd unit)\n"
    _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(70)
}

refuseTooFewDescriptors()
let cli = RoostCLI(commands: RoostCLI.allCommands)
let status = await cli.run(arguments: CommandLine.arguments, output: .process, environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
