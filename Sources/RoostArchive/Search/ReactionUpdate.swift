/// One stored reaction update (schema v8): a reactor's whole set at that time. Exported and imported as is.
public struct ReactionUpdate: Sendable, Equatable {
    /// The id the reaction named.
    public var target: String
    /// The bare JID in a chat; `occupant:ID` or the occupant's full JID in a room.
    public var reactor: String
    public var name: String?
    public var direction: MessageDirection
    public var emojis: [String]
    public var timestamp: Int64
    public var source: MessageSource
    /// The archive's key for the update, so an import into an archive that has it adds nothing.
    public var key: String
}
