/// A token or password: written in the config, or printed by a command (first line of its output).
/// Its description never shows the secret.
public enum SecretSource: Sendable, Hashable, CustomStringConvertible {
    case literal(String)
    /// Run through `/bin/sh -c`, like an account's `password_command`: the user wrote it, not a contact.
    case command(String)

    public var description: String {
        switch self {
        case .literal: "(secret from the config)"
        case .command: "(secret from a command)"
        }
    }
}
