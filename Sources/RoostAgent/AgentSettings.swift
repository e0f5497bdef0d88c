/// Agent-wide knobs that are not per account.
public struct AgentSettings: Sendable {
    public var maxStanzaBytes: Int
    public var keepaliveInterval: Duration
    public var reconnectCap: Duration
    /// nil: read the server archive only at login.
    public var archivePollInterval: Duration?
    /// Where the archive lives; its folder also holds cached avatars.
    public var archivePath: String = ""
    /// The largest message Roost sends when the server does not say (XEP-0478).
    public var maxSendBytes: Int = 256 * 1024
    /// How long the archive may fail to take writes before the connections are closed without acknowledging.
    public var archiveStallLimit: Duration = .seconds(600)
    /// How often each joined room is self-pinged (XEP-0410), and its archive read for what live delivery missed.
    public var roomPingInterval: Duration = .seconds(300)
    /// `[archive] keep_retracted`.
    public var keepRetracted = false

    public init(maxStanzaBytes: Int = 1 << 20, keepaliveInterval: Duration = .seconds(60), reconnectCap: Duration = .seconds(300),
                archivePollInterval: Duration? = .seconds(60)) {
        self.maxStanzaBytes = maxStanzaBytes
        self.keepaliveInterval = keepaliveInterval
        self.reconnectCap = reconnectCap
        self.archivePollInterval = archivePollInterval
    }

    public init(config: RoostConfig) {
        self.init(maxStanzaBytes: config.maxStanzaBytes, keepaliveInterval: .seconds(config.keepaliveSeconds),
                  reconnectCap: .seconds(config.reconnectMaxSeconds),
                  archivePollInterval: config.archivePollSeconds > 0 ? .seconds(config.archivePollSeconds) : nil)
        archivePath = config.archivePath
        maxSendBytes = config.maxSendBytes
        archiveStallLimit = .seconds(config.archiveStallSeconds)
        roomPingInterval = .seconds(config.roomPingSeconds)
        keepRetracted = config.keepRetracted
    }

    /// Whether a reloaded config changes what only a restart applies.
    func differs(from other: AgentSettings) -> Bool {
        maxStanzaBytes != other.maxStanzaBytes || keepaliveInterval != other.keepaliveInterval || reconnectCap != other.reconnectCap
            || archivePollInterval != other.archivePollInterval || maxSendBytes != other.maxSendBytes
            || archiveStallLimit != other.archiveStallLimit
    }
}
