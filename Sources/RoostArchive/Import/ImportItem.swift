/// What one jsonl line becomes: the archive events that replay it.
enum ImportItem {
    /// The original message, its corrections in order, and possibly a last copy carrying the trusted
    /// stanza-id the stored row adopted later (see `ImportLineDecoder`).
    case message([ArchiveEvent])
    case chatState(ChatStateRecord)
    case presence(PresenceRecord)
    case subscription(SubscriptionRecord)
    case contact(roster: RosterItemRecord?, removedAt: Int64?, vCard: VCardRecord?)
}
