import Foundation

/// libdispatch sets up its event loop (an epoll descriptor and an eventfd) when its first worker thread starts, and
/// the main queue's wake-up (another eventfd) when another thread first hands it work, and traps when it cannot.
/// Both are made here, before a command opens anything: a process short of descriptors then meets the shortage in
/// Roost's own code, which says so (exit 70), instead of crashing in a thread that happened to start later (seen
/// at `ulimit -n 6`, 1 run in 100).
func startDispatchFirst() {
    let started = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        DispatchQueue.main.async {}
        started.signal()
    }
    started.wait()
}

startDispatchFirst()
let cli = RoostCLI(commands: RoostCLI.allCommands)
let status = await cli.run(arguments: CommandLine.arguments, output: .process, environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
