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
    /// Decrypts OMEMO messages (nil: `omemo = off`, encrypted messages are archived as they come).
    var decryptor: StanzaRouter.Decryptor? = nil
}
