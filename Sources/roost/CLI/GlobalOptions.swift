import RoostAgent

/// Options every command accepts, before or after the command name.
struct GlobalOptions: Sendable, Equatable {
    static let specs: [OptionSpec] = [
        .value("config", placeholder: "PATH", help: "config file (default: $ROOST_CONFIG, else $XDG_CONFIG_HOME/roost/config.ini)"),
        .value("account", placeholder: "JID", help: "act on this account only"),
        .flag("json", help: "machine-readable output: JSON Lines, one object per line"),
        .flag("verbose", short: "v", help: "log more; repeat for debug output (-vv)"),
        .flag("quiet", short: "q", help: "log errors only"),
        .value("log-level", placeholder: "LEVEL", help: "log level: error, warning, info or debug"),
        .flag("help", short: "h", help: "show help and exit"),
        .flag("version", help: "show the version and exit"),
    ]

    var configPath: String?
    var account: String?
    var json = false
    var verbosity = 0
    var quiet = false
    var logLevel: LogLevelSetting?

    init() {}

    init(parsed: ParsedArguments) throws(UsageError) {
        configPath = parsed.value("config")
        account = parsed.value("account")
        json = parsed.flag("json")
        verbosity = parsed.count("verbose")
        quiet = parsed.flag("quiet")
        logLevel = try parsed.choice("log-level", of: LogLevelSetting.self)
        if quiet && verbosity > 0 {
            throw UsageError("-q/--quiet and -v/--verbose contradict each other", command: parsed.command)
        }
    }

    /// `--log-level`, else the config's `log_level`, else the command's default; then `-q` silences all but
    /// errors and each `-v` makes it one step chattier.
    func effectiveLogLevel(configured: LogLevelSetting?, commandDefault: LogLevelSetting) -> LogLevelSetting {
        if quiet { return .error }
        let base = logLevel ?? configured ?? commandDefault
        return base.adjusted(by: verbosity)
    }
}
