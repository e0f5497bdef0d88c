/// The process exit status of every `roost` command; scripts and systemd units rely on these numbers.
enum ExitCode: Int32, Sendable {
    /// Success.
    case ok = 0
    /// Nothing matched (`search`, `log`), or the requested action did not happen (like grep's 1).
    case nothingFound = 1
    /// Bad command line or query: the user must change what they typed.
    case usage = 2
    /// Could not connect to, or authenticate with, a server.
    case connection = 3
    /// A bug or an unexpected system failure (sysexits EX_SOFTWARE), such as running short of descriptors or
    /// memory: a systemd unit restarts on it.
    case internalError = 70
    /// The config file is missing something or is invalid (sysexits EX_CONFIG), so that a systemd unit
    /// can stop restarting with `RestartPreventExitStatus=78`.
    case config = 78
}
