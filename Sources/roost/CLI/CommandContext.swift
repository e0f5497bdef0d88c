import RoostAgent
import RoostArchive

/// What a running command may use: the global options, the terminal, the environment.
struct CommandContext: Sendable {
    let options: GlobalOptions
    let output: Output
    let environment: [String: String]
    /// Every command of the program (for `roost completions`).
    var commands: [any Command.Type] = []

    /// The config named by `--config`, `$ROOST_CONFIG` or the XDG default.
    func loadConfig() throws(ConfigError) -> RoostConfig {
        let config = try RoostConfig.load(explicitPath: options.configPath, environment: environment)
        output.info("config: \(config.sourcePath ?? "none (\(RoostConfig.searchedPath(explicitPath: options.configPath, environment: environment)) does not exist)")")
        return config
    }

    /// The accounts a command should act on: `--account JID` if given, else every enabled one.
    func selectedAccounts(in config: RoostConfig) throws -> [AccountConfig] {
        if let wanted = options.account {
            guard let account = config.account(wanted) else {
                throw UsageError(unknownAccount(wanted, config: config, archived: []))
            }
            return [account]
        }
        let accounts = config.enabledAccounts
        if accounts.isEmpty {
            throw ConfigError.noAccountsConfigured(path: config.sourcePath
                ?? RoostConfig.searchedPath(explicitPath: options.configPath, environment: environment))
        }
        return accounts
    }

    /// The account a reading command (search, log, stats, export, …) keeps to: `--account`, else the config's
    /// `default_account`, else nil (every account). The account must be configured or in the archive.
    func readingAccount(config: RoostConfig, reader: ArchiveReader?) throws -> String? {
        guard let wanted = options.account ?? config.defaultAccount else { return nil }
        if config.account(wanted) != nil { return wanted.lowercased() }
        let archived = (try? reader?.accounts()) ?? []
        if let found = archived.first(where: { $0.caseInsensitiveCompare(wanted) == .orderedSame }) { return found }
        let origin = options.account == nil ? "default_account \(wanted) of \(config.sourcePath ?? "the config")" : wanted
        throw UsageError(unknownAccount(origin, config: config, archived: archived))
    }

    /// Whether text output names each line's account: when more than one is configured (or archived) and
    /// the command is not kept to one.
    func showsAccount(config: RoostConfig, reader: ArchiveReader?, reading account: String?) -> Bool {
        guard account == nil else { return false }
        if config.accounts.count > 1 { return true }
        return ((try? reader?.accounts()) ?? []).count > 1
    }

    private func unknownAccount(_ wanted: String, config: RoostConfig, archived: [String]) -> String {
        var known = config.accounts.map(\.jid)
        for account in archived where !known.contains(account.lowercased()) { known.append(account) }
        return "no account \(wanted) in \(config.sourcePath ?? "the config")" + (archived.isEmpty ? "" : " or the archive")
            + (known.isEmpty ? "" : " (known: \(known.joined(separator: ", ")))")
    }
}
