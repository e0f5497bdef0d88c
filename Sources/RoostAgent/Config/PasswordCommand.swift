import RoostCore
import Foundation
import RoostXMPP

/// Runs a `password_command` and takes the first line of its standard output.
///
/// Through Roost's one process runner: at most `timeout` (30 s by default; the whole process group is
/// killed after it), only the first line is read (a command printing forever cannot grow memory), and the
/// waiting happens off the cooperative pool, so the agent keeps answering signals and the control socket.
/// Standard input stays attached to Roost's, so a command that asks for a passphrase can still do so on a
/// terminal. Its output never goes into an error; errors name only the program, not the whole command
/// (which might carry a secret of its own).
struct PasswordCommand {
    let command: String
    let account: String
    var timeout: Duration = .seconds(30)

    func run() async throws(ConfigError) -> String {
        switch await ProcessRunner.firstLine(ofCommand: command, input: .inherit, timeout: timeout) {
        case .success(let password):
            return password
        case .failure(let failure) where failure.shortage:
            throw .passwordCommandNotStarted(account: account, reason: "(`\(program)`) \(failure.reason)")
        case .failure(let failure):
            let hint = failure.reason.hasPrefix("printed an empty") ? "; it must print the password" : ""
            throw .passwordCommandFailed(account: account, reason: "(`\(program)`) \(failure.reason)\(hint)")
        }
    }

    /// The command's first word, for errors.
    private var program: String {
        let first = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) ?? command
        return LogText.quote(first, limit: 60)
    }
}
