import RoostXMPP

/// What the router needs to know about the account to classify a stanza.
struct RoutingContext: Sendable {
    var account: JID
    /// Whether `<stanza-id by=account>` can be believed: the server archives (MAM) or advertises `urn:xmpp:sid:0`.
    var trustsOwnStanzaIDs: Bool
    /// Roster names, for the sender's display name in the archive and its full-text index.
    var displayNames: [JID: String]
    var ownNickname: String?
    /// Roost's own bound resource, which is never one of "the user's other clients".
    var ownResource: String? = nil
    /// Contacts the user asked for a subscription (roster `ask` pending, or subscription `to`): their own
    /// request is answered at once, so adding a friend ends as `both` (RFC 6121 §3.4, done by Roost where the
    /// server has no pre-approval). Kept from the roster and its pushes.
    var approvedContacts: Set<JID> = []
    /// Decrypts OMEMO messages (nil: `omemo = off`, encrypted messages are archived as they come).
    var decryptor: StanzaRouter.Decryptor? = nil
    /// The rooms Roost is in or joining, by bare JID (kept by `RoomManager`): group chat traffic is accepted
    /// only from these.
    var rooms: [JID: RoomRoute] = [:]
    /// Every room the account knows, joined or not (the archive's, the config's, the bookmarked ones, and those in
    /// `rooms`): a full JID in one of them is an occupant, whose messages are private messages in the room — also
    /// in a catch-up that runs before the rooms are joined, and in `roost verify`. Never a reason to accept group
    /// chat traffic (`rooms` decides that).
    var knownRooms: Set<JID> = []
    /// The roster's bare JIDs: only their invitations may ever be accepted automatically.
    var contacts: Set<JID> = []
    /// Until when (UTC ms) the server may be delivering its offline storage: a new session's first minute, for a
    /// resource of non-negative priority (never, at Roost's default -1). Only then does a live message's
    /// `<delay/>` from the server count as the server's (see `MessageTime`).
    var offlineDeliveryUntil: Int64 = .min
    /// `[archive] keep_retracted`: retractions mark messages but keep their text.
    var keepRetracted = false
}

/// What the router needs to know about one room.
struct RoomRoute: Sendable, Equatable {
    var room: JID
    /// Roost's nick there (with a conflict suffix, if it needed one).
    var nick: String
    /// Words that mention the user: the nick, and the nick Roost wanted when it had to add a suffix.
    var mentionNames: [String]
    /// Roost's XEP-0421 id there, once known (the same for all the user's clients in the room).
    var occupantID: String?
    /// The room advertises MAM (`urn:xmpp:mam:2`): its stanza-ids are trusted.
    var trustsStanzaIDs: Bool
    /// Roost's own presence came back: occupant presences after it are changes, not the initial list.
    var joined: Bool = false
    /// The subject as last stored (the room sends it again at every join).
    var subject: String?
    /// Occupants' real bare JIDs by nick, where the room shows them (non-anonymous rooms): whose OMEMO
    /// sessions decrypt their messages.
    var occupants: [String: JID] = [:]
    /// The room may be sending its discussion history: from a join that asked for it (a room without an archive)
    /// until the subject, which ends it (XEP-0045 §7.2.15). Only then is the room's own `<delay/>` believed: a
    /// room relays what occupants put in their messages, so in live traffic such a stamp may be an occupant's forgery.
    var history: Bool = false

    var occupantJID: JID? { try? room.with(resource: nick) }
}

extension RoutingContext {
    /// Follows one roster item into `approvedContacts`.
    mutating func noteApproval(of item: RosterItem) {
        if item.subscription != .remove && (item.askPending || item.subscription == .to) {
            approvedContacts.insert(item.jid.bare)
        } else {
            approvedContacts.remove(item.jid.bare)
        }
    }
}
