/// A `prefix:value` restriction of a query.
public enum QueryFilter: Sendable, Equatable {
    /// `from:` sender: a bare or full JID, or a name/localpart/MUC nick.
    case from(String)
    /// `from:NAME` once `QueryNames` has looked the name up: the contact it names (nil: none), and the name as
    /// typed, which in rooms (group chat messages, and private messages from an occupant) matches the start of
    /// the sender's nick. Made by the resolution only, never by the parser.
    case fromName(String, contact: String?)
    case to(String)
    /// `with:` the conversation (bare JID, or localpart; `room@service/nick` for a private conversation in a room).
    case with(String)
    /// Exactly one conversation, given as a value (a bare JID, or `room@service/nick`), never parsed from query
    /// text: how the web view and the CLI select a conversation they already know (`ExportOptions.conversation`),
    /// so that a JID or a nick can never become query language. Made by code only, never by the parser.
    case conversation(String)
    case account(String)
    /// `in:` a groupchat room.
    case room(String)
    /// `date:A..B` (either side may be missing), `date:A`, `after:A` (from the start of A), `before:B`
    /// (until the start of B).
    case date(from: DateExpression?, through: DateExpression?)
    case after(DateExpression)
    case before(DateExpression)
    case direction(MessageDirection)
    case kind(MessageKind)
    case edited
    case hasFile
    /// `has:image`, `has:video`, `has:audio`: an attachment whose media type starts with this (`image/`).
    case hasMedia(String)
    /// `filename:NAME` (a part of the name) or `filename:*.png` (a glob over the whole name).
    case fileName(String)
    /// `type:image/png`, or `type:image` / `type:image/*` for a whole family.
    case fileType(String)
    /// `has:reaction` (nil) or `reaction:👍`: someone's current reactions to the message (include) this one.
    case reaction(String?)
    /// `is:unread` (true) / `is:read`: incoming after (or at or before) the conversation's read mark.
    case unread(Bool)
    /// `is:retracted`: retracted by its sender or removed by a room's moderator.
    case retracted
    /// `is:reply`: answers another message (XEP-0461).
    case reply
}
