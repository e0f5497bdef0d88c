public import RoostCore
public import RoostNotify

/// Everything Roost reads from its INI file (see `config/roost.example.ini`), validated, with defaults applied.
public struct RoostConfig: Sendable, Hashable {
    /// Absolute path of the SQLite archive, `~` already expanded.
    public var archivePath: String
    /// `[general] log_level`; nil when the file does not set it, so each command can pick its own default.
    public var logLevel: LogLevel?
    /// `[general] max_stanza_bytes`: larger stanzas end the stream instead of exhausting memory.
    public var maxStanzaBytes: Int
    /// `[general] keepalive_seconds`: a dead connection is noticed within this time.
    public var keepaliveSeconds: Int = 60
    /// `[general] reconnect_max_seconds`: the cap of the reconnect backoff.
    public var reconnectMaxSeconds: Int = 300
    /// `[general] archive_poll_seconds`: how often the server archive is read for messages Roost was not
    /// offered live (0 = only at login).
    public var archivePollSeconds: Int = 60
    /// `[general] max_send_bytes`: the largest stanza Roost sends when the server does not announce its
    /// limit (XEP-0478); a larger `roost send` is refused before anything is sent.
    public var maxSendBytes: Int = 262_144
    /// `[general] archive_stall_seconds`: how long the archive may refuse writes (locked, disk full) before
    /// the agent closes its connections without acknowledging, so the server keeps everything.
    public var archiveStallSeconds: Int = 600
    /// `[general] default_account`: the account reading commands (search, log, stats, …) use without
    /// `--account`; nil: all of them.
    public var defaultAccount: String?
    /// `[files]`: attachment downloads.
    public var files = FilesSettings()
    /// `[general] room_ping_seconds`: how often Roost checks (XEP-0410 self-ping) that it is still in each room.
    public var roomPingSeconds: Int = 300
    /// `[archive] keep_retracted`: a retracted message keeps its text (marked retracted) instead of losing it.
    public var keepRetracted = false
    /// In file order.
    public var accounts: [AccountConfig]
    /// `[serve]`: the web view inside `roost run`.
    public var serve = ServeConfig()
    /// `[retention]`: how long messages are kept (default: forever).
    public var retention = RetentionConfig()
    /// `[backup]`: `roost backup`.
    public var backup = BackupConfig()
    /// `[mirror]`: the live Maildir (none by default).
    public var mirror = MirrorConfig()
    /// `[notify]` exactly as written; the notification layer validates it.
    public var notify: [String: String]
    /// `[sink NAME]` groups by NAME, exactly as written.
    public var sinks: [String: [String: String]]
    /// `[watch NAME]` groups by NAME, exactly as written.
    public var watches: [String: [String: String]]
    /// The file read; nil when no file exists at the default location.
    public var sourcePath: String?
    /// Where each group header and key was found, so later validation can report `file:line`.
    public var locations: ConfigLocations

    public static let defaultMaxStanzaBytes = 1_048_576

    public init(
        archivePath: String,
        logLevel: LogLevel? = nil,
        maxStanzaBytes: Int = RoostConfig.defaultMaxStanzaBytes,
        accounts: [AccountConfig] = [],
        notify: [String: String] = [:],
        sinks: [String: [String: String]] = [:],
        watches: [String: [String: String]] = [:],
        sourcePath: String? = nil,
        locations: ConfigLocations = ConfigLocations()
    ) {
        self.archivePath = archivePath
        self.logLevel = logLevel
        self.maxStanzaBytes = maxStanzaBytes
        self.accounts = accounts
        self.notify = notify
        self.sinks = sinks
        self.watches = watches
        self.sourcePath = sourcePath
        self.locations = locations
    }

    /// Finds and reads the config file: `explicitPath` (from `--config`), else `$ROOST_CONFIG`,
    /// else `$XDG_CONFIG_HOME/roost/config.ini`. A missing file at the default location yields
    /// a config without accounts; a missing file named explicitly is an error.
    public static func load(explicitPath: String?, environment: [String: String]) throws(ConfigError) -> RoostConfig {
        try ConfigLoader(environment: environment).load(explicitPath: explicitPath)
    }

    /// The file `load` would read, for messages such as "create ... to add an account".
    public static func searchedPath(explicitPath: String?, environment: [String: String]) -> String {
        ConfigPaths(environment: environment).configFile(explicitPath: explicitPath).path
    }

    /// `[notify]`, `[sink NAME]` and `[watch NAME]` validated by the notification layer.
    public func notifySettings() -> (NotifyConfig, [NotifyConfigProblem]) {
        NotifyConfig.parse(notify: notify, sinks: sinks, watches: watches)
    }

    /// The accounts with `enabled = true`.
    public var enabledAccounts: [AccountConfig] {
        accounts.filter(\.enabled)
    }

    /// The account with this bare JID (case-insensitive).
    public func account(_ jid: String) -> AccountConfig? {
        let wanted = jid.lowercased()
        return accounts.first { $0.jid == wanted }
    }
}
