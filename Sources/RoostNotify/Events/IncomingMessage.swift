/// One incoming chat message as the notification layer needs it.
public struct IncomingMessage: Sendable, Hashable {
    public var account: String
    /// Bare JID of the conversation: the contact, or the room for group chat.
    public var conversation: String
    /// Full JID of the sender (for a room: room@service/nick).
    public var from: String
    /// vCard nickname, else roster name, else JID (for a room: the occupant's nick).
    public var displayName: String
    public var body: String
    public var isGroupchat: Bool
    /// The body mentions the user's nick or JID (group chat only).
    public var mentionsUser: Bool
    /// Milliseconds since 1970 (server `<delay/>` or receipt time).
    public var timestamp: Int64
    /// Cached avatar image file of the contact, if any.
    public var avatarPath: String?
    /// A picture the message shared, once downloaded: shown in the notification (the `image-path` hint).
    public var imagePath: String?
    /// The archive id of a message that shared a picture still downloading: the agent waits briefly for the
    /// file and fills `imagePath` before posting.
    public var pictureMessageID: Int64?
    /// The body names the one picture the message shared ("sent a picture: holiday.png") without its size, which
    /// the message did not give (a bare upload link): the agent adds it once the download has told it.
    public var pictureSizeAwaited = false
    /// The `[watch NAME]` groups whose query selects this message (the agent evaluates them once the message is
    /// archived): it notifies even where the rules would stay silent, once, titled by these names.
    public var watches: [String] = []
    /// The message's row in the archive (what the watches are evaluated on), when known.
    public var archiveID: Int64?

    public init(account: String, conversation: String, from: String, displayName: String, body: String,
                isGroupchat: Bool = false, mentionsUser: Bool = false, timestamp: Int64, avatarPath: String? = nil) {
        self.account = account
        self.conversation = conversation
        self.from = from
        self.displayName = displayName
        self.body = body
        self.isGroupchat = isGroupchat
        self.mentionsUser = mentionsUser
        self.timestamp = timestamp
        self.avatarPath = avatarPath
    }
}
