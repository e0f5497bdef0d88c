/// The command line cannot be understood; exit status 2, with a pointer to the right help page.
struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    let message: String
    /// The command whose `--help` explains the fix, e.g. `roost search`.
    let command: String

    init(_ message: String, command: String = "roost") {
        self.message = message
        self.command = command
    }

    var description: String {
        "\(message); see `\(command) --help`"
    }
}
