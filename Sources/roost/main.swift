import Foundation

/// Fewer descriptors than this and Roost does not start. Below it the Swift runtime itself cannot run: libdispatch
/// makes its event loop's descriptors (epoll, eventfds, timerfds) when it first needs them, at moments no code of
/// ours chooses, and traps when it cannot — a crash, where a process short of descriptors should be told so. 16
/// leaves what the runtime needs and a few files for the simplest command.
let fewestDescriptors: rlim_t = 16

/// Says why Roost cannot run with this descriptor limit (exit 70: the machine's state, not the config), or nothing.
func refuseTooFewDescriptors() {
    var limit = rlimit()
    guard getrlimit(RLIMIT_NOFILE, &limit) == 0, limit.rlim_cur < fewestDescriptors else { return }
    let message = "roost: error: this process may have only \(limit.rlim_cur) open files (`ulimit -n`); Roost needs at least "
        + "\(fewestDescriptors): raise the limit (`ulimit -n 1024`, or LimitNOFILE= in a systemd unit)\n"
    _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    exit(70)
}

/// libdispatch sets up its event loop (an epoll descriptor and an eventfd) when its first worker thread starts:
/// done here, before a command opens anything, so that what a command opens later meets any shortage in Roost's
/// own code, which says so.
func startDispatchFirst() {
    let started = DispatchSemaphore(value: 0)
    DispatchQueue.global().async { started.signal() }
    started.wait()
}

refuseTooFewDescriptors()
startDispatchFirst()
let cli = RoostCLI(commands: RoostCLI.allCommands)
let status = await cli.run(arguments: CommandLine.arguments, output: .process, environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
