import RoostCore
import RoostAgent

/// Options every command accepts, before or after the command name.
struct GlobalOptions: Sendable, Equatable {
    static let specs: [OptionSpec] = [
        .value("config", placeholder: "PATH", help: "config file (default: $ROOST_CONFIG, else $XDG_CONFIG_HOME/roost/config.ini)")
            .completing(.file),
        .value("account", placeholder: "JID", help: "act on this account only (default: [general] default_account for reading commands)")
            .completing(.account),
        .flag("json", help: "machine-readable output: JSON Lines, one object per line"),
        .flag("verbose", short: "v",
              help: "one level more on stderr than the command's default: -v what is done (info; debug for roost run, which logs info by default), -vv the details (debug; one-shot logins show the XMPP exchange, passwords redacted)"),
        .flag("quiet", short: "q", help: "errors only on stderr: no notes, progress or warnings"),
        .value("log-level", placeholder: "LEVEL", help: "log level: error, warning, info or debug (then -v/-q adjust it)")
            .completing(.choices(LogLevel.allCases.map(\.rawValue))),
        .value("color", placeholder: "WHEN", help: "colour and highlights: auto (on a terminal, unless NO_COLOR is set), always or never")
            .completing(.choices(ColorChoice.allCases.map(\.rawValue))),
        .flag("no-pager", help: "never page long output (default on a terminal: $PAGER, else less -FRX)"),
        .flag("help", short: "h", help: "show help and exit"),
        .flag("version", help: "show the version and exit"),
    ]

    var configPath: String?
    var account: String?
    var json = false
    var verbosity = 0
    var quiet = false
    var logLevel: LogLevel?
    var color = ColorChoice.auto
    var noPager = false

    init() {}

    init(parsed: ParsedArguments) throws(UsageError) {
        configPath = parsed.value("config")
        account = parsed.value("account")
        json = parsed.flag("json")
        verbosity = parsed.count("verbose")
        quiet = parsed.flag("quiet")
        logLevel = try parsed.choice("log-level", of: LogLevel.self)
        color = try parsed.choice("color", of: ColorChoice.self) ?? .auto
        noPager = parsed.flag("no-pager")
        if quiet && verbosity > 0 {
            throw UsageError("-q/--quiet and -v/--verbose contradict each other", command: parsed.command)
        }
    }

    /// `--log-level`, else the config's `log_level`, else the command's default (info for `roost run`, warning
    /// for the others); then `-q` silences all but errors and each `-v` makes it one step chattier. `-v` means
    /// the same for every command: one step more (info, then debug).
    func effectiveLogLevel(configured: LogLevel?, commandDefault: LogLevel) -> LogLevel {
        if quiet { return .error }
        let base = logLevel ?? configured ?? commandDefault
        return base.adjusted(by: verbosity)
    }
}
