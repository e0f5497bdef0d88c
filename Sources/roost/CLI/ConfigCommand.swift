import RoostAgent
import RoostArchive

/// `roost config`: checks the config file and shows what Roost will use, never a password.
/// With `--check-passwords` it also runs each `password_command` to prove it works.
struct ConfigCommand: Command {
    static let name = "config"
    static let summary = "check the config file and show the settings Roost will use"
    static let discussion = """
        Reads the config file (--config, else $ROOST_CONFIG, else $XDG_CONFIG_HOME/roost/config.ini), \
        reports every problem with its line number, and prints the resulting settings. Passwords are never shown.
        """
    static let options: [OptionSpec] = [
        .flag("check-passwords", help: "also run every password_command and report whether it printed a password"),
    ]

    let checkPasswords: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
        checkPasswords = parsed.flag("check-passwords")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        let accounts = try context.options.account.map { _ in try context.selectedAccounts(in: config) } ?? config.accounts
        var failures = 0
        var passwordStatus: [String: String] = [:]
        if checkPasswords {
            for account in accounts {
                do {
                    _ = try await account.resolvePassword()
                    passwordStatus[account.jid] = "ok"
                } catch {
                    failures += 1
                    passwordStatus[account.jid] = "failed"
                    context.output.error(error.description)
                }
            }
        }
        if context.options.json {
            context.output.jsonLine(json(config, accounts: accounts, passwordStatus: passwordStatus))
        } else {
            printHuman(config, accounts: accounts, passwordStatus: passwordStatus, output: context.output)
        }
        if config.accounts.isEmpty {
            context.output.warning(ConfigError.noAccountsConfigured(path: config.sourcePath
                ?? RoostConfig.searchedPath(explicitPath: context.options.configPath, environment: context.environment)).description)
            return .nothingFound
        }
        return failures == 0 ? .ok : .nothingFound
    }

    private func json(_ config: RoostConfig, accounts: [AccountConfig], passwordStatus: [String: String]) -> JSONObject {
        let accountObjects: [JSONValue] = accounts.map { account in
            var object: JSONObject = [
                "jid": .string(account.jid),
                "enabled": .bool(account.enabled),
                "host": .string(account.host),
                "port": account.port.map { .int(Int($0)) } ?? .null,
                "tls": .string(account.tls.rawValue),
                "ca_file": .string(account.caFile),
                "fingerprint": .string(account.fingerprint),
                "resource": .string(account.resource),
                "priority": .int(account.priority),
                "password_source": .string(Self.sourceName(account.password)),
                "nick": .string(account.defaultNick),
                "rooms": .array(account.rooms.map { .string($0.jid) }),
                "exclude_rooms": .array(account.excludedRooms.sorted().map { .string($0) }),
                "accept_invitations": .string(account.acceptInvitations.rawValue),
            ]
            if let status = passwordStatus[account.jid] { object["password_check"] = .string(status) }
            return .object(object)
        }
        return [
            "config_file": .string(config.sourcePath),
            "archive_path": .string(config.archivePath),
            "log_level": .string(config.logLevel?.rawValue),
            "max_stanza_bytes": .int(config.maxStanzaBytes),
            "files": .object(["download": .string(config.files.download.rawValue), "max_size": .int(config.files.maxSize),
                              "allow_private_addresses": .bool(config.files.allowPrivateAddresses),
                              "retry_seconds": .int(config.files.retrySeconds)]),
            "accounts": .array(accountObjects),
            "notify_keys": .array(config.notify.keys.sorted().map { .string($0) }),
            "sinks": .array(config.sinks.keys.sorted().map { .string($0) }),
        ]
    }

    private func printHuman(_ config: RoostConfig, accounts: [AccountConfig], passwordStatus: [String: String], output: Output) {
        output.line("config file:  \(config.sourcePath ?? "(none)")")
        output.line("archive:      \(config.archivePath)")
        output.line("log level:    \(config.logLevel?.rawValue ?? "(command default)")")
        output.line("files:        download \(config.files.download.rawValue), up to \(config.files.maxSize) bytes (\(FileSize.text(config.files.maxSize)))"
                    + (config.files.allowPrivateAddresses ? ", private addresses allowed" : ""))
        for account in accounts {
            let server = (account.host ?? "(SRV lookup)") + (account.port.map { ":\($0)" } ?? "")
            var line = "account:      \(account.jid)/\(account.resource) \(account.enabled ? "enabled" : "disabled"), "
                + "\(server) \(account.tls.rawValue), priority \(account.priority), \(Self.sourceName(account.password))"
            if let status = passwordStatus[account.jid] { line += " (\(status))" }
            output.line(line)
            if !account.rooms.isEmpty || !account.excludedRooms.isEmpty {
                output.line("  rooms:      \(account.rooms.map(\.jid).joined(separator: ", "))"
                    + (account.excludedRooms.isEmpty ? "" : "; never: \(account.excludedRooms.sorted().joined(separator: ", "))"))
            }
        }
        if !config.notify.isEmpty {
            output.line("notify:       \(config.notify.keys.sorted().joined(separator: ", "))")
        }
        for sink in config.sinks.keys.sorted() {
            output.line("sink:         \(sink)")
        }
    }

    private static func sourceName(_ source: PasswordSource) -> String {
        switch source {
        case .literal: "password"
        case .command: "password_command"
        }
    }
}
