import RoostAgent

/// What a running command may use: the global options, the terminal, the environment.
struct CommandContext: Sendable {
    let options: GlobalOptions
    let output: Output
    let environment: [String: String]

    /// The config named by `--config`, `$ROOST_CONFIG` or the XDG default.
    func loadConfig() throws(ConfigError) -> RoostConfig {
        try RoostConfig.load(explicitPath: options.configPath, environment: environment)
    }

    /// The accounts a command should act on: `--account JID` if given, else every enabled one.
    func selectedAccounts(in config: RoostConfig) throws -> [AccountConfig] {
        if let wanted = options.account {
            guard let account = config.account(wanted) else {
                let known = config.accounts.map(\.jid).joined(separator: ", ")
                throw UsageError("no account \(wanted) in \(config.sourcePath ?? "the config")"
                    + (known.isEmpty ? "" : " (configured: \(known))"))
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
}
