/// A change to what the archive knows about one room of an account (see `SchemaV6`).
public struct RoomUpdate: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        /// The room's bookmark as the server has it now; `present == false`: no bookmark any more.
        case bookmark(present: Bool, name: String?, nick: String?, autojoin: Bool, hasPassword: Bool)
        /// `roost rooms join` (or Join on an invitation): rejoined at every start; the password command, if any.
        case joinedByUser(passwordCommand: String?)
        /// `roost rooms leave`: no longer joined at start (the bookmark's autojoin is cleared separately).
        case leftByUser
        /// Roost is about to join as `nick`: the occupant list is rebuilt from the room's answer.
        case joining(nick: String, passwordSource: String?)
        /// The room accepted Roost as `nick`; what its disco#info said (`discoName`: its identity's name, if any).
        case joined(nick: String, occupantID: String?, mam: Bool, nonAnonymous: Bool, discoName: String? = nil)
        /// Roost is out of the room (left, kicked, the connection ended); `error` says why when it was not asked for.
        case left(error: String?)
        /// A join was refused (`error`: what the room said and what to do).
        case joinFailed(error: String)
        case subject(String?, by: String?)
        /// The room archive's mark: everything up to this id is stored.
        case mark(id: String, timestamp: Int64?)
    }

    public var account: String
    /// The room's bare JID.
    public var room: String
    public var change: Change
    public var timestamp: Int64

    public init(account: String, room: String, change: Change, timestamp: Int64) {
        self.account = account
        self.room = room
        self.change = change
        self.timestamp = timestamp
    }
}
