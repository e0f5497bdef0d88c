import RoostCore
import Foundation
import RoostAgent
import RoostArchive
import RoostXMPP

/// `roost config`: checks the config file and shows what Roost will use, never a password. With
/// `--check-passwords` it also runs each `password_command`. `roost config init` writes a first config.
struct ConfigCommand: Command {
    static let name = "config"
    static let summary = "check the config file and show the settings Roost will use; `config init` writes a first one"
    static let usage = "[--check] [--check-passwords] [init [--jid JID] [--password-command CMD | --password-stdin] [--host H] [--port P] [--tls MODE] [--ca-file F]]"
    static let discussion = """
        Reads the config file (--config, else $ROOST_CONFIG, else $XDG_CONFIG_HOME/roost/config.ini), \
        reports every problem with its line number — the same checks `roost run` makes, [notify] and [sink] \
        groups included, "did you mean" for a mistyped key or group — and prints the resulting settings. \
        Passwords are never shown. The files it names are checked too: [archive] path must be an SQLite \
        database (or a file Roost can create), ca_file a PEM file of certificates. \
        --check logs in once with each enabled account and reports the TLS version, whether the server \
        certificate was verified against the trusted CAs or pinned, and the SASL mechanism.
        init writes a first config file with one account: on a terminal it asks for the JID and for a \
        password_command (recommended: e.g. `pass show xmpp/JID`; empty: the password is asked without echo \
        and stored in the file), the host, the port and a CA file; otherwise the options give them (--jid, and \
        --password-command or --password-stdin, which reads the password from standard input). The file is \
        created with mode 0600 (an existing one is only replaced with --force), then Roost logs in once to test \
        it (--no-test skips that); on a terminal, a server certificate the system does not trust is shown with \
        its fingerprint and can be pinned. Exit status: 0, 1 when a password_command failed \
        (--check-passwords), 3 when a login failed (--check, the test login), 78 when the config is invalid.
        """
    static let options: [OptionSpec] = [
        .flag("check-passwords", help: "also run every password_command and report whether it printed a password"),
        .flag("check", help: "also log in once with each enabled account and report the TLS version, the certificate check and the SASL mechanism"),
        .value("jid", placeholder: "JID", help: "init: the account's address"),
        .value("password-command", placeholder: "CMD", help: "init: a command printing the password on its first line"),
        .flag("password-stdin", help: "init: read the password from standard input (it is stored in the file)"),
        .value("host", placeholder: "HOST", help: "init: the server to connect to (default: DNS SRV, then the JID's domain)"),
        .value("port", placeholder: "PORT", help: "init: the port on the server"),
        .value("tls", placeholder: "MODE", help: "init: starttls (default) or direct").completing(.choices(["starttls", "direct"])),
        .value("ca-file", placeholder: "FILE", help: "init: a PEM file of CA certificates to trust (self-signed servers)").completing(.file),
        .flag("force", help: "init: replace an existing config file"),
        .flag("no-test", help: "init: do not log in to test the account"),
    ]
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("init")])]

    let checkPasswords: Bool
    let checkLogin: Bool
    let initialise: Bool
    let parsed: ParsedArguments

    init(parsed: ParsedArguments) throws(UsageError) {
        switch parsed.positionals.first {
        case nil: initialise = false
        case "init":
            guard parsed.positionals.count == 1 else { throw UsageError("`roost config init` takes options only", command: parsed.command) }
            initialise = true
        case let other?:
            throw UsageError("unknown config subcommand '\(other)' (init)", command: parsed.command)
        }
        checkPasswords = parsed.flag("check-passwords")
        checkLogin = parsed.flag("check")
        if initialise && (checkPasswords || checkLogin) {
            throw UsageError("--check\(checkPasswords ? "-passwords" : "") checks an existing config; `roost config init` tests its login itself",
                             command: parsed.command)
        }
        let initOnly = ["jid", "password-command", "password-stdin", "host", "port", "tls", "ca-file", "force", "no-test"]
            .filter { parsed.flag($0) || parsed.value($0) != nil }
        if !initialise, let first = initOnly.first {
            throw UsageError("--\(first) goes with `roost config init`", command: parsed.command)
        }
        if parsed.value("password-command") != nil && parsed.flag("password-stdin") {
            throw UsageError("--password-command and --password-stdin contradict each other", command: parsed.command)
        }
        if let tls = parsed.value("tls"), !["starttls", "direct"].contains(tls) {
            throw UsageError("--tls must be starttls or direct", command: parsed.command)
        }
        _ = try parsed.integer("port", in: 1...65535)
        self.parsed = parsed
    }

    func run(context: CommandContext) async throws -> ExitCode {
        if initialise { return try await ConfigInit(parsed: parsed, context: context).run() }
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
        var logins: [String: LoginCheck] = [:]
        var loginExit: ExitCode?
        if checkLogin {
            let level = context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .warning)
            for account in accounts where account.enabled || context.options.account != nil {
                do {
                    let info = try await OneShotLogin.testLogin(account: account, config: config, log: Logger(level: level))
                    logins[account.jid] = .ok(info)
                } catch {
                    logins[account.jid] = .failed(error.description)
                    loginExit = loginExit ?? error.exitCode
                    context.output.error(error.description)
                }
            }
        }
        if context.options.json {
            context.output.jsonLine(json(config, accounts: accounts, passwordStatus: passwordStatus, logins: logins))
        } else {
            printHuman(config, accounts: accounts, passwordStatus: passwordStatus, logins: logins, output: context.output)
        }
        if let loginExit { return loginExit }
        if config.accounts.isEmpty {
            context.output.warning(ConfigError.noAccountsConfigured(path: config.sourcePath
                ?? RoostConfig.searchedPath(explicitPath: context.options.configPath, environment: context.environment)).description
                + "; or run `roost config init`")
            return .nothingFound
        }
        return failures == 0 ? .ok : .nothingFound
    }

    /// What `--check` found for one account.
    enum LoginCheck {
        case ok(SessionInfo)
        case failed(String)

        var json: JSONObject {
            switch self {
            case let .ok(info):
                return ["login": "ok", "tls": .string(info.tlsProtocol), "certificate": .string(info.certificatePinned ? "pinned" : "verified"),
                        "fingerprint": .string(info.tlsPeerFingerprint),
                        "sasl": .string(info.mechanism), "channel_binding": .string(info.channelBinding),
                        "stream_management": .bool(info.streamManagement)]
            case let .failed(message):
                return ["login": "failed", "error": .string(message)]
            }
        }

        /// `logged in: TLSv1.3, certificate verified against the trusted CAs, SASL SCRAM-SHA-256-PLUS (tls-exporter)`.
        var text: String {
            switch self {
            case let .ok(info):
                let certificate = info.certificatePinned ? "certificate pinned (fingerprint matches)" : "certificate verified against the trusted CAs"
                return "logged in: \(info.tlsProtocol ?? "no TLS"), \(certificate), SASL \(info.mechanism)"
                    + (info.channelBinding.map { " (\($0))" } ?? "")
                    + (info.tlsPeerFingerprint.map { "\n              server certificate SHA-256 \($0)" } ?? "")
            case .failed:
                return "login failed (see above)"
            }
        }
    }

    private func json(_ config: RoostConfig, accounts: [AccountConfig], passwordStatus: [String: String],
                      logins: [String: LoginCheck]) -> JSONObject {
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
            if let login = logins[account.jid] { object["check"] = .object(login.json) }
            return .object(object)
        }
        return [
            "config_file": .string(config.sourcePath),
            "archive_path": .string(config.archivePath),
            "log_level": .string(config.logLevel?.rawValue),
            "default_account": .string(config.defaultAccount),
            "max_stanza_bytes": .int(config.maxStanzaBytes),
            "files": .object(["download": .string(config.files.download.rawValue), "max_size": .int(config.files.maxSize),
                              "allow_private_addresses": .bool(config.files.allowPrivateAddresses),
                              "retry_seconds": .int(config.files.retrySeconds),
                              "max_transfer_seconds": .int(config.files.maxTransferSeconds), "min_rate": .int(config.files.minRate),
                              "quota": .int(config.files.quota), "quota_per_contact": .int(config.files.quotaPerContact),
                              "min_free": .int(config.files.minFree)]),
            "accounts": .array(accountObjects),
            "notify_keys": .array(config.notify.keys.sorted().map { .string($0) }),
            "sinks": .array(config.sinks.keys.sorted().map { .string($0) }),
            "watches": .array(config.notifySettings().0.watches.map { watch in
                .object(["name": .string(watch.name), "query": .string(watch.query), "sink": .string(watch.sink),
                         "priority": .string(watch.priority.rawValue), "quiet_hours": .string(watch.quietHours.rawValue)])
            }),
        ]
    }

    private func printHuman(_ config: RoostConfig, accounts: [AccountConfig], passwordStatus: [String: String],
                            logins: [String: LoginCheck], output: Output) {
        output.line("config file:  \(config.sourcePath ?? "(none)")")
        output.line("archive:      \(config.archivePath)")
        output.line("log level:    \(config.logLevel?.rawValue ?? "(command default)")")
        if let account = config.defaultAccount { output.line("default:      \(account) (for reading commands)") }
        output.line("files:        download \(config.files.download.rawValue), up to \(config.files.maxSize) bytes (\(FileSize.text(config.files.maxSize)))"
                    + (config.files.allowPrivateAddresses ? ", private addresses allowed" : ""))
        let quota = { (bytes: Int64) in bytes > 0 ? FileSize.text(bytes) : "no limit" }
        output.line("              quota \(quota(config.files.quota)) (\(quota(config.files.quotaPerContact)) per contact), "
                    + "\(FileSize.text(config.files.minFree)) kept free; a fetch ends after \(config.files.maxTransferSeconds) s "
                    + "or below \(config.files.minRate > 0 ? FileSize.text(config.files.minRate) + "/s" : "no minimum rate")")
        for account in accounts {
            let server = (account.host ?? "(SRV lookup)") + (account.port.map { ":\($0)" } ?? "")
            var line = "account:      \(account.jid)/\(account.resource) \(account.enabled ? "enabled" : "disabled"), "
                + "\(server) \(account.tls.rawValue), priority \(account.priority), \(Self.sourceName(account.password))"
            if let status = passwordStatus[account.jid] { line += " (\(status))" }
            output.line(line)
            if let login = logins[account.jid] { output.line("  check:      \(login.text)") }
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
        WatchCommand.show(config.notifySettings().0.watches, accounts: accounts, output: output, json: false)
    }

    static func sourceName(_ source: PasswordSource) -> String {
        switch source {
        case .literal: "password"
        case .command: "password_command"
        }
    }
}

/// `roost config init`: a first config file with one account, asked for on a terminal or given as options,
/// written 0600, then tested with one login.
struct ConfigInit {
    let parsed: ParsedArguments
    let context: CommandContext

    struct Exists: CommandFailure {
        let path: String
        var exitCode: ExitCode { .usage }
        var description: String { "\(path) exists; check it with `roost config`, or replace it with `roost config init --force`" }
    }

    func run() async throws -> ExitCode {
        let path = RoostConfig.searchedPath(explicitPath: context.options.configPath, environment: context.environment)
        if FileManager.default.fileExists(atPath: path) && !parsed.flag("force") { throw Exists(path: path) }
        let interactive = parsed.value("jid") == nil && isatty(STDIN_FILENO) == 1
        let jidText: String
        if let given = parsed.value("jid") {
            jidText = given
        } else if interactive {
            jidText = try TerminalInput.line("Your XMPP address (JID, e.g. me@example.org): ").trimmingCharacters(in: .whitespaces)
        } else {
            throw UsageError("`roost config init` needs --jid JID (and --password-command CMD or --password-stdin) when not on a terminal",
                             command: "roost config")
        }
        let jid: String
        do { jid = try ConfigFormat.bareJID(jidText) } catch {
            throw UsageError("'\(jidText)' is not an account JID (expected name@server)", command: "roost config")
        }
        var command = parsed.value("password-command")
        var password: String?
        if parsed.flag("password-stdin") {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            password = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
        } else if command == nil {
            guard interactive else {
                throw UsageError("give --password-command CMD or --password-stdin", command: "roost config")
            }
            let typed = try TerminalInput.line("A command that prints the password (recommended, e.g. pass show xmpp/\(jid));\n"
                                               + "leave empty to type the password and store it in the config file: ")
                .trimmingCharacters(in: .whitespaces)
            if typed.isEmpty {
                password = try TerminalInput.secret("Password for \(jid): ")
            } else {
                command = typed
            }
        }
        if let password, password.isEmpty { throw UsageError("the password is empty", command: "roost config") }
        var host = parsed.value("host")
        if host == nil && interactive {
            let typed = try TerminalInput.line("Server host (empty: found through DNS): ").trimmingCharacters(in: .whitespaces)
            host = typed.isEmpty ? nil : typed
        }
        var port = parsed.value("port")
        if port == nil && interactive {
            while true {
                let typed = try TerminalInput.line("Port (empty: \(host == nil ? "found through DNS" : "5222")): ").trimmingCharacters(in: .whitespaces)
                if typed.isEmpty { break }
                if let number = Int(typed), (1...65535).contains(number) { port = typed; break }
                context.output.error("'\(typed)' is not a port (1 to 65535)")
            }
        }
        var caFile = parsed.value("ca-file").map(RegisterCommand.absolute)
        if caFile == nil && interactive {
            while true {
                let typed = try TerminalInput.line("CA certificate file, for a server whose certificate the system does not trust "
                                                   + "(empty: the system's CAs): ").trimmingCharacters(in: .whitespaces)
                if typed.isEmpty { break }
                let absolute = RegisterCommand.absolute(typed)
                // Loaded as a connection loads it, so the file written is one `roost config` accepts.
                do throws(TLSError) {
                    try TLSEngine.checkCAFile(absolute)
                    caFile = absolute
                    break
                } catch {
                    context.output.error(error.description)
                }
            }
        }
        var settings = ConfigFormat.FirstAccount(jid: jid, passwordCommand: command, password: password, host: host, port: port,
                                                 tls: parsed.value("tls"), caFile: caFile)
        try ConfigFormat.writePrivate(ConfigFormat.firstConfig(settings), to: path, replacing: parsed.flag("force"))
        var config = try RoostConfig.load(explicitPath: path, environment: context.environment)
        context.output.note("wrote \(path) (mode 0600) with the account \(jid)")
        guard !parsed.flag("no-test"), var account = config.account(jid) else {
            context.output.note("next: `roost config` to check it, `roost run` to start archiving")
            return .ok
        }
        let level = context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .warning)
        while true {
            do {
                try await OneShotLogin.testLogin(account: account, config: config, log: Logger(level: level))
                break
            } catch {
                context.output.error("the test login failed: \(error.description)")
                // A certificate the system does not trust (self-signed, a private CA): offer to trust exactly this one.
                if interactive, settings.fingerprint == nil, let fingerprint = error.refusedCertificate,
                   try TerminalInput.line("Trust exactly this certificate (SHA-256 \(fingerprint)) by pinning it? [y/N] ")
                    .trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("y") {
                    settings.fingerprint = fingerprint
                    try ConfigFormat.writePrivate(ConfigFormat.firstConfig(settings), to: path, replacing: true)
                    config = try RoostConfig.load(explicitPath: path, environment: context.environment)
                    guard let pinned = config.account(jid) else { return .internalError }
                    account = pinned
                    context.output.note("pinned the certificate in \(path); testing again")
                    continue
                }
                context.output.note("fix \(path) (then `roost config --check`), or run `roost config init --force` again")
                return error.exitCode
            }
        }
        if context.options.json {
            context.output.jsonLine(["ok": true, "config_file": .string(path), "account": .string(jid), "login": "ok"])
        } else {
            context.output.line("logged in as \(jid): the account works. Start archiving with `roost run` "
                                + "(or as a service: see contrib/systemd/roost.service).")
        }
        return .ok
    }
}

/// Text of config files Roost writes, and writing them privately.
enum ConfigFormat {
    struct InvalidJID: Error {}

    static func bareJID(_ text: String) throws -> String {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !text.contains("/"), !text.contains(where: \.isWhitespace) else {
            throw InvalidJID()
        }
        return text.lowercased()
    }

    /// A value as GKeyFile reads it back unchanged: backslashes doubled, and ` #`/` ;` kept from starting a comment.
    static func escaped(_ value: String) -> String {
        var text = value.replacingOccurrences(of: "\\", with: "\\\\")
        text = text.replacingOccurrences(of: "#", with: "\\#").replacingOccurrences(of: ";", with: "\\;")
        if text.first == " " { text = "\\s" + text.dropFirst() }
        return text
    }

    /// What `roost config init` asked for.
    struct FirstAccount {
        var jid: String
        var passwordCommand: String?
        var password: String?
        var host: String?
        var port: String?
        var tls: String?
        var caFile: String?
        var fingerprint: String?
    }

    static func firstConfig(_ account: FirstAccount) -> String {
        var text = firstConfig(jid: account.jid, passwordCommand: account.passwordCommand, password: account.password, host: account.host,
                               port: account.port, tls: account.tls, caFile: account.caFile)
        if let fingerprint = account.fingerprint { text += "fingerprint = \(fingerprint)\n" }
        return text
    }

    static func firstConfig(jid: String, passwordCommand: String?, password: String?, host: String?, port: String?, tls: String?,
                            caFile: String?) -> String {
        var lines = [
            "# Roost configuration, written by `roost config init`. Every option: config/roost.example.ini, man roost.",
            "# Check it with `roost config`.",
            "",
            "[archive]",
            "# default: $XDG_DATA_HOME/roost/archive.sqlite",
            "#path = ~/.local/share/roost/archive.sqlite",
            "",
            "[account \(jid)]",
        ]
        if let passwordCommand { lines.append("password_command = \(escaped(passwordCommand))") }
        if let password { lines.append("password = \(escaped(password))") }
        if let host { lines.append("host = \(host)") }
        if let port { lines.append("port = \(port)") }
        if let tls { lines.append("tls = \(tls)") }
        if let caFile { lines.append("ca_file = \(caFile)") }
        return lines.joined(separator: "\n") + "\n"
    }

    struct WriteFailure: CommandFailure {
        let path: String
        let reason: String
        var exitCode: ExitCode { .internalError }
        var description: String { "cannot write \(path): \(reason)" }
    }

    /// Creates the file with mode 0600 from the start (its folder 0700 when made), never readable by others
    /// even for a moment.
    static func writePrivate(_ text: String, to path: String, replacing: Bool) throws {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw WriteFailure(path: path, reason: "\(error.localizedDescription)")
        }
        let temporary = folder + "/.config.ini.\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw WriteFailure(path: path, reason: String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, synced else {
            unlink(temporary)
            throw WriteFailure(path: path, reason: "short write")
        }
        if !replacing && FileManager.default.fileExists(atPath: path) {
            unlink(temporary)
            throw WriteFailure(path: path, reason: "it appeared meanwhile")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw WriteFailure(path: path, reason: reason)
        }
    }
}
