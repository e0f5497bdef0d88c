/// One thing to archive; a batch of them is committed in one transaction by `ArchiveWriter.commit`.
public enum ArchiveEvent: Sendable, Equatable {
    case message(MessageRecord)
    case chatState(ChatStateRecord)
    case presence(PresenceRecord)
    case subscription(SubscriptionRecord)
    case rosterItem(RosterItemRecord)
    /// The contact left the roster (`subscription='remove'`); its row and vCard stay, marked not in roster.
    case rosterRemoval(account: String, jid: String, timestamp: Int64)
    case vCard(VCardRecord)
    case syncState(SyncStateRecord)
    /// Outgoing messages (by origin-id) reached a new delivery state.
    case delivery(account: String, originIDs: [String], state: DeliveryState)
    /// An outgoing message (by origin-id) joins the outbox (`queued`: archived, not sent yet: `SchemaV16`) or
    /// leaves it (about to be written to the stream).
    case outbox(account: String, originID: String, queued: Bool, timestamp: Int64)
    /// A message stored as undecryptable was decrypted later.
    case messageDecrypted(MessageDecryption)
    /// Group chats: what is known about a room, an occupant's presence, an invitation and its answer.
    case room(RoomUpdate)
    case roomPresence(RoomPresenceRecord)
    case invitation(InvitationRecord)
    case invitationAnswered(account: String, room: String, status: InvitationStatus, timestamp: Int64)
    /// A reaction, retraction, moderation, receipt or chat marker about an earlier message (schema v8).
    case annotation(MessageAnnotation)
    /// The user read a conversation up to its newest message (`roost read`), or up to the message `upTo` (a row: the
    /// mail mirror's `read_from_mirror`).
    case conversationRead(account: String, conversation: String, timestamp: Int64, upTo: Int64? = nil)
}
