/// Everything the engine needs to log one account in.
public struct ClientConfiguration: Sendable {
    public var jid: JID
    public var password: String
    /// Explicit server address; nil means DNS SRV, then the domain itself.
    public var host: String?
    public var port: UInt16?
    public var tlsMode: TLSMode
    public var caFile: String?
    /// SHA-256 of the server's certificate, hex; when set it replaces CA trust (and a mismatch always fails).
    public var pinnedSHA256: String?
    public var resource: String
    /// Default -1 so Roost never receives messages meant for the user's real clients (RFC 6121 §8.5.2).
    public var priority: Int
    public var connectTimeout: Duration
    public var requestTimeout: Duration
    /// A dead TCP connection is detected within this interval.
    public var keepaliveInterval: Duration
    /// The largest stanza accepted from the server.
    public var maxStanzaBytes: Int
    /// The largest stanza Roost sends when the server does not announce its limit (XEP-0478).
    public var maxOutboundStanzaBytes: Int
    /// What the connection's write queue holds at most before `send` throws `.outboundQueueFull`.
    public var outboundQueueBytes: Int
    /// Whether login asks the account's server what it supports (disco#info) before handing the session over.
    public var discoversAccount: Bool
    public var streamManagement: Bool
    /// The modules the layers above implement, beyond the engine's own (`ClientModule.builtIn`): their features
    /// are advertised in disco#info and entity caps.
    public var modules: [ClientModule]
    public var clientName: String
    public var clientVersion: String
    /// Restricts SASL to these mechanisms (upper case); nil lets Roost pick the strongest the server offers.
    public var saslMechanisms: [String]?
    /// Whether connect() sends initial presence (the agent does; one-shot CLI logins may not want to be seen).
    public var sendsInitialPresence: Bool
    /// Hears every XML element sent and received, secrets redacted (`XMLTrace`); for `roost -vv`.
    public var trace: (@Sendable (String) -> Void)? = nil

    public init(jid: JID, password: String, host: String? = nil, port: UInt16? = nil, tlsMode: TLSMode = .starttls,
                caFile: String? = nil, pinnedSHA256: String? = nil, resource: String = "roost", priority: Int = -1,
                connectTimeout: Duration = .seconds(15), requestTimeout: Duration = .seconds(30),
                keepaliveInterval: Duration = .seconds(60), maxStanzaBytes: Int = 1 << 20,
                maxOutboundStanzaBytes: Int = 256 * 1024, streamManagement: Bool = true,
                modules: [ClientModule] = [], clientName: String = "Roost", clientVersion: String = "0.1",
                sendsInitialPresence: Bool = true) {
        self.jid = jid.bare
        self.password = password
        self.host = host
        self.port = port
        self.tlsMode = tlsMode
        self.caFile = caFile
        self.pinnedSHA256 = pinnedSHA256
        self.resource = resource
        self.priority = priority
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.keepaliveInterval = keepaliveInterval
        self.maxStanzaBytes = maxStanzaBytes
        self.maxOutboundStanzaBytes = maxOutboundStanzaBytes
        self.outboundQueueBytes = 8 << 20
        self.discoversAccount = true
        self.streamManagement = streamManagement
        self.modules = modules
        self.clientName = clientName
        self.clientVersion = clientVersion
        self.sendsInitialPresence = sendsInitialPresence
    }
}
