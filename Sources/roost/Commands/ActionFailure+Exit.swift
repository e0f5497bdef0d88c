import RoostAgent

/// An action's failure decides the exit status the same way whether the agent or the CLI did the work.
extension ActionFailure: CommandFailure {
    var exitCode: ExitCode {
        switch kind {
        case .invalidArgument, .tooLarge: .usage
        case .notFound, .refused: .nothingFound
        case .connection, .unknownAccount: .connection
        case .config: .config
        case .badRequest, .internalError: .internalError
        }
    }
}

/// A second agent, or an unusable socket folder: `roost run` stops before logging in (status 1, which the
/// systemd unit restarts on, unlike 78).
extension ControlServerError: CommandFailure {
    var exitCode: ExitCode { .nothingFound }
}
