import RoostAgent

/// A password chosen on the command line: from `--password-command` (its first output line), else typed twice
/// on the terminal without echo.
enum NewPassword {
    struct Mismatch: CommandFailure {
        var exitCode: ExitCode { .usage }
        var description: String { "the two passwords differ; nothing was changed" }
    }

    static func obtain(command: String?, account: String, prompt: String) async throws -> String {
        if let command {
            return try await PasswordSource.command(command).resolve(account: account)
        }
        let first = try TerminalInput.secret("\(prompt): ")
        let second = try TerminalInput.secret("\(prompt) (again): ")
        guard first == second else { throw Mismatch() }
        guard !first.isEmpty else { throw ActionFailure(.invalidArgument, "the password is empty") }
        return first
    }
}
