/// Why the configuration could not be loaded or used. Never contains a password or a command's output.
public enum ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A config file named explicitly (by `--config` or `$ROOST_CONFIG`, given as `origin`) does not exist.
    case fileNotFound(path: String, origin: String)
    /// The file exists but could not be read.
    case unreadable(path: String, reason: String)
    /// The file could not be read for want of descriptors or memory (see `ResourceShortage`): nothing about the
    /// config; reading it again later can work.
    case unreadableForNow(path: String, reason: String)
    /// The file holds a secret (`key` at `line`: a password, a token, …) but group or others may read or write it.
    case insecurePermissions(path: String, mode: UInt32, key: String, line: Int)
    /// Syntax errors, unknown groups or keys, invalid values: all of them, sorted by line.
    case invalid(path: String, problems: [ConfigProblem])
    /// `password_command` of an account did not produce a password.
    case passwordCommandFailed(account: String, reason: String)
    /// `password_command` could not be started for want of descriptors, memory or processes (see
    /// `ResourceShortage`): nothing the user must change; tried again later.
    case passwordCommandNotStarted(account: String, reason: String)
    /// Thrown by callers that need an account when the config defines none.
    case noAccountsConfigured(path: String)

    /// Short of descriptors, memory or processes: not the config's fault, so never the exit status (78) that stops
    /// systemd from starting roost again.
    public var isResourceShortage: Bool {
        switch self {
        case .unreadableForNow, .passwordCommandNotStarted: true
        // A file check that met a shortage says nothing about the config, and the other checks made at the same
        // moment may have met it too.
        case let .invalid(_, problems): problems.contains(where: \.isResourceShortage)
        default: false
        }
    }

    public var description: String {
        switch self {
        case let .fileNotFound(path, origin):
            return "config file \(path) (from \(origin)) does not exist"
        case let .unreadable(path, reason):
            return "cannot read config file \(path): \(reason)"
        case let .unreadableForNow(path, reason):
            return "cannot read config file \(path) now: \(reason) (this machine or process is short of descriptors or memory)"
        case let .insecurePermissions(path, mode, key, line):
            let octal = String(mode & 0o777, radix: 8)
            return "refusing to use \(path): it contains a secret (\(key) at line \(line)) but its mode 0\(octal) lets group or "
                + "others access it; run `chmod 600 \(path)`"
        case let .invalid(path, problems):
            let header = problems.count == 1
                ? "invalid config file \(path):"
                : "invalid config file \(path) (\(problems.count) problems):"
            return ([header] + problems.map { "  \($0)" }).joined(separator: "\n")
        case let .passwordCommandFailed(account, reason):
            return "password_command of account \(account) \(reason)"
        case let .passwordCommandNotStarted(account, reason):
            return "password_command of account \(account) \(reason) (this machine or process is short of descriptors, memory or processes)"
        case let .noAccountsConfigured(path):
            return "no accounts configured; add an [account you@example.org] group to \(path) "
                + "(see config/roost.example.ini)"
        }
    }
}
