import RoostCore
/// A room the config asks Roost to be in: `rooms = JID, …` in an `[account]` group, or a `[room JID]` group
/// (which may give a nick and a password).
public struct RoomConfig: Sendable, Hashable {
    /// The room's bare JID, lowercased.
    public var jid: String
    public var nick: String?
    /// Never printed (see `PasswordSource`).
    public var password: PasswordSource?
    /// `highlight_words` of the `[room JID]` group: in this room, like a mention.
    public var highlightWords: [String] = []

    public init(jid: String, nick: String? = nil, password: PasswordSource? = nil) {
        self.jid = jid
        self.nick = nick
        self.password = password
    }
}

/// `accept_invitations`: whether an invitation joins the room by itself.
public enum InvitationAcceptance: String, Sendable, Hashable, CaseIterable {
    /// Every invitation waits for the user (notification buttons, `roost rooms join`).
    case never
    /// A direct invitation from a roster contact joins at once; from anyone else it waits, like `never`.
    case contacts
}

/// One `[room JID]` group's values as they are read.
struct RoomDraft {
    var account: String?
    var nick: String?
    var password: String?
    var passwordCommand: String?
    var highlightWords: [String]?

    func build(jid: String) throws(ConfigValueError) -> (account: String?, room: RoomConfig) {
        let password: PasswordSource?
        switch (self.password, passwordCommand) {
        case let (literal?, nil): password = .literal(literal)
        case let (nil, command?): password = .command(command)
        case (.some, .some): throw ConfigValueError("set either `password` or `password_command`, not both")
        case (nil, nil): password = nil
        }
        var room = RoomConfig(jid: jid, nick: nick, password: password)
        room.highlightWords = highlightWords ?? []
        return (account, room)
    }
}
