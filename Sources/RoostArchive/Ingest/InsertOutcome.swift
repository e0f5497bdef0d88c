/// What `ArchiveWriter.commit` did with each event, in batch order.
public enum InsertOutcome: Sendable, Equatable {
    /// A new message row (its archive id).
    case inserted(id: Int64)
    /// Already archived (the id of the stored copy, the corrected message for a repeated correction, or nil
    /// for a repeated chat state).
    case duplicate(existingId: Int64?)
    /// A same-sender XEP-0308 correction: the message `id` now shows revision `revision` (1 = first edit).
    case corrected(id: Int64, revision: Int)
    /// A non-message event (chat state, presence, subscription, roster, vCard, sync state) was stored.
    case stored
    /// Deliberately not applied, with why (a forged retraction): the caller logs it.
    case refused(String)
}
