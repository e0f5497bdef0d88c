/// A trusted XEP-0359 stanza-id the archive holds for an account (on a message or on one of its revisions).
public struct LocalStanzaID: Sendable, Equatable {
    public var stanzaId: String
    /// The message's time (server `<delay/>` stamp or receipt time), UTC milliseconds.
    public var timestamp: Int64
    /// When Roost stored it, UTC milliseconds.
    public var receivedAt: Int64

    public init(stanzaId: String, timestamp: Int64, receivedAt: Int64) {
        self.stanzaId = stanzaId
        self.timestamp = timestamp
        self.receivedAt = receivedAt
    }
}
