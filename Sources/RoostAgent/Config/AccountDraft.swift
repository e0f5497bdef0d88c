import RoostCore
/// One `[account JID]` group's values as they are read, before defaults and cross-key checks.
struct AccountDraft {
    var password: String?
    var passwordCommand: String?
    var host: String?
    var port: UInt16?
    var tls: TLSModeSetting?
    var caFile: String?
    var fingerprint: String?
    var resource: String?
    var priority: Int?
    var enabled: Bool?
    var omemo: Bool?
    var omemoSend: OMEMOSendSetting?
    var nick: String?
    var rooms: [String]?
    var excludedRooms: [String]?
    var acceptInvitations: InvitationAcceptance?
    var highlightWords: [String]?

    func build(jid: String) throws(ConfigValueError) -> AccountConfig {
        let source: PasswordSource
        switch (password, passwordCommand) {
        case let (password?, nil): source = .literal(password)
        case let (nil, command?): source = .command(command)
        case (.some, .some):
            throw ConfigValueError("set either `password` or `password_command`, not both")
        case (nil, nil):
            throw ConfigValueError("needs `password` or `password_command`")
        }
        var config = AccountConfig(
            jid: jid,
            password: source,
            host: host,
            port: port,
            tls: tls ?? .starttls,
            caFile: caFile,
            fingerprint: fingerprint,
            resource: resource ?? AccountConfig.defaultResource,
            priority: priority ?? AccountConfig.defaultPriority,
            enabled: enabled ?? true
        )
        config.omemo = omemo ?? true
        config.omemoSend = omemoSend ?? .auto
        config.nick = nick
        config.rooms = (rooms ?? []).map { RoomConfig(jid: $0) }
        config.excludedRooms = Set(excludedRooms ?? [])
        config.acceptInvitations = acceptInvitations ?? .never
        config.highlightWords = highlightWords ?? []
        return config
    }
}
