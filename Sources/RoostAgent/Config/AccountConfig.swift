/// One `[account JID]` group, validated and with defaults applied.
public struct AccountConfig: Sendable, Hashable {
    /// The bare JID (`localpart@domain`), lowercased.
    public var jid: String
    public var password: PasswordSource
    /// Server host to connect to instead of resolving SRV records of the JID's domain.
    public var host: String?
    public var port: UInt16?
    public var tls: TLSModeSetting
    /// A PEM file of CA certificates to trust instead of the system store.
    public var caFile: String?
    /// The server certificate's SHA-256 fingerprint: 64 lowercase hex digits, no separators.
    public var fingerprint: String?
    public var resource: String
    public var priority: Int
    public var enabled: Bool
    /// `omemo = on|off`: Roost is an OMEMO device of the account and decrypts what is encrypted for it.
    public var omemo: Bool = true
    public var omemoSend: OMEMOSendSetting = .auto
    /// `nick`: the nick in rooms whose bookmark names none (else the JID's local part).
    public var nick: String?
    /// Rooms joined besides the bookmarked ones: `rooms = …` and `[room JID]` groups.
    public var rooms: [RoomConfig] = []
    /// `exclude_rooms`: never joined, even when a bookmark says autojoin.
    public var excludedRooms: Set<String> = []
    /// `accept_invitations`: `contacts` joins rooms a roster contact invites to; never for anyone else.
    public var acceptInvitations: InvitationAcceptance = .never
    /// `highlight_words`: words or phrases that make a room message notify like a mention (a watch on them in this
    /// account's rooms; a `[room JID]` group's own apply in that room).
    public var highlightWords: [String] = []

    public static let defaultResource = "roost"
    public static let defaultPriority = -1

    public init(
        jid: String,
        password: PasswordSource,
        host: String? = nil,
        port: UInt16? = nil,
        tls: TLSModeSetting = .starttls,
        caFile: String? = nil,
        fingerprint: String? = nil,
        resource: String = AccountConfig.defaultResource,
        priority: Int = AccountConfig.defaultPriority,
        enabled: Bool = true
    ) {
        self.jid = jid
        self.password = password
        self.host = host
        self.port = port
        self.tls = tls
        self.caFile = caFile
        self.fingerprint = fingerprint
        self.resource = resource
        self.priority = priority
        self.enabled = enabled
    }

    /// The nick Roost uses in a room when neither the bookmark nor the room's config names one.
    public var defaultNick: String { nick ?? String(jid.split(separator: "@").first ?? Substring(jid)) }

    /// Runs `password_command` if that is where the password comes from.
    public func resolvePassword() async throws(ConfigError) -> String {
        try await password.resolve(account: jid)
    }
}
