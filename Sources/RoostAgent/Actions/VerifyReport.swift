/// What `roost verify` found when comparing an account's local archive with the server's (XEP-0313).
public struct VerifyReport: Codable, Sendable, Equatable {
    public var account: String
    /// Results the server archive returned for the account (accepted ones: own archive, open query id).
    public var serverMessages = 0
    /// Of those, messages Roost stores (with a body); the rest (receipts, chat states) are not compared.
    public var serverStorable = 0
    /// Results rejected (wrong sender or query id).
    public var rejected = 0
    /// Trusted stanza-ids in the local archive for the account, after any repair.
    public var localTrusted = 0
    /// Server messages absent from the local archive (after any repair: those still absent).
    public var missing = 0
    public var missingRanges: [VerifyRange] = []
    /// Server messages stored locally without their server id (sent by Roost, server copy not read back yet).
    public var unlinked = 0
    /// Server copies of a room's private message stored as one row under another copy's id: the room delivered one
    /// copy to each of the user's sessions under the nick, and the server archived each (not a fault).
    public var roomPrivateCopies = 0
    /// Rows `--repair` added or linked to their server id.
    public var repaired = 0
    /// Room invitations (XEP-0249 direct, XEP-0045 mediated) the server archived as messages: Roost keeps them as
    /// invitations (`roost rooms invites`), not as chat messages, so they are compared with those.
    public var roomInvitations = 0
    /// Of those, invitations the archive lacks (after any repair: those still absent); the first 20 are listed.
    public var roomInvitationsMissing = 0
    public var missingInvitations: [Invitation] = []
    /// Invitations `--repair` archived.
    public var roomInvitationsRepaired = 0
    /// Local trusted ids the server does not list (e.g. its archive expired); informational.
    public var orphans = 0
    public var orphanSample: [String] = []
    public var duplicateStanzaIds: [Duplicate] = []
    public var duplicateFallbackKeys: [Duplicate] = []

    /// A room invitation the server archived and the local archive lacks.
    public struct Invitation: Codable, Sendable, Equatable {
        /// Its id in the server archive.
        public var id: String
        public var room: String
        public var inviter: String?
        public var timestamp: Int64
    }

    public struct Duplicate: Codable, Sendable, Equatable {
        public var key: String
        public var rowIds: [Int64]
    }

    public init(account: String) { self.account = account }

    /// Nothing is missing (messages or invitations) and nothing is stored twice (orphans and unlinked messages are
    /// not faults).
    public var consistent: Bool {
        missing == 0 && roomInvitationsMissing == 0 && duplicateStanzaIds.isEmpty && duplicateFallbackKeys.isEmpty
    }
}

/// A run of messages the server archive holds, consecutive in its order, that the local archive lacks.
public struct VerifyRange: Codable, Sendable, Equatable {
    public var count: Int
    public var firstId: String
    public var lastId: String
    /// Server timestamps of the first and last message, UTC milliseconds.
    public var firstTimestamp: Int64
    public var lastTimestamp: Int64
}
