/// Agent-wide knobs that are not per account.
public struct AgentSettings: Sendable {
    public var maxStanzaBytes: Int
    public var keepaliveInterval: Duration
    public var reconnectCap: Duration

    public init(maxStanzaBytes: Int = 1 << 20, keepaliveInterval: Duration = .seconds(60), reconnectCap: Duration = .seconds(300)) {
        self.maxStanzaBytes = maxStanzaBytes
        self.keepaliveInterval = keepaliveInterval
        self.reconnectCap = reconnectCap
    }
}
