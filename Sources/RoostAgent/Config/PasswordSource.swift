/// Where an account's password comes from. Resolved only when a command actually logs in,
/// so that `roost search` never runs a `password_command` (which may prompt or unlock a keyring).
///
/// Printing, dumping or interpolating a value never shows the password or the command.
public enum PasswordSource: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `password = ...` written in the config file.
    case literal(String)
    /// `password_command = ...`, run through `/bin/sh -c`; the first line of its standard output.
    case command(String)

    /// The password, running the command when there is one.
    /// - Parameter account: the bare JID, named in errors.
    public func resolve(account: String) async throws(ConfigError) -> String {
        switch self {
        case let .literal(password):
            return password
        case let .command(command):
            return try await PasswordCommand(command: command, account: account).run()
        }
    }

    public var description: String {
        switch self {
        case .literal: "password (hidden)"
        case .command: "password_command (hidden)"
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: [], displayStyle: .enum)
    }
}
