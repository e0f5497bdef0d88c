public import Foundation

/// One account as `roost status` shows it.
public struct AccountStatus: Sendable {
    public var account: String
    public var state: AccountState
    public var server: String?
    public var boundResource: String?
    public var streamManagement: Bool
    public var lastCatchUp: Date?
    /// Outbound stanzas the server has not acknowledged yet.
    public var unacknowledgedOutbound: Int
    public var rejectedStanzas: Int
    /// The presence priority Roost announces.
    public var priority: Int = 0
    /// The account's other resources that are available right now (the user's phone, desktop client, …).
    public var otherClientsOnline: Int = 0
    /// Group chats Roost is in now.
    public var roomsJoined: Int = 0
    /// Contacts in the roster as last loaded; nil until it has loaded in this run (the account is then ready:
    /// who is a contact and who a stranger is known).
    public var rosterContacts: Int?
    /// How long the oldest unacknowledged outbound stanza has waited for the server's acknowledgement, in seconds.
    public var unacknowledgedOldestSeconds: Int?
    /// Connections established in this run (a resumed session counts), and how many of them resumed the previous
    /// session (XEP-0198).
    public var logins = 0
    public var sessionsResumed = 0
    /// Roost's OMEMO device id once published in this run; nil before, and with `omemo = off`.
    public var omemoDevice: UInt32?
}
