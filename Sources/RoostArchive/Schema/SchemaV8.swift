/// Schema version 8: what people do to messages besides sending them — reactions (XEP-0444), replies
/// (XEP-0461), retractions (XEP-0424) and moderation (XEP-0425), delivery receipts (XEP-0184) and chat markers
/// (XEP-0333).
///
/// # Finding the message meant
/// Each of these names its target by an id: in a chat the target's `id` attribute (or origin-id), in a group chat
/// the room's stanza-id. The target is the newest message of the same account and conversation that has that
/// id as `message_id`, `origin_id` or (group chats: assigned by the room) `stanza_id`. The target may arrive
/// after what refers to it (a server archive is read page by page): reactions and retractions are kept with
/// their target id and attached when the message arrives (`message_row` NULL until then).
///
/// # Reactions
/// `reactions` keeps every update, one row each: a reactor's whole new set of emojis (JSON array; empty = all
/// removed). The reactor is the bare JID in a chat, the occupant id (or, without one, the nick) in a room. The
/// current reactions of a message are the newest update of each reactor. `dedup_key` makes the same update
/// seen live, as a carbon and in the server archive count once; a set imported from another client's history
/// (which keeps no stanza id) counts once by what it says (`Ingestor.reactorState`). A reaction's fallback body
/// is never a message.
///
/// # Replies
/// `messages.reply_to` / `reply_to_jid`: the target id and author the reply names; the target is resolved when
/// read. The fallback quote (XEP-0428) is not part of the stored body, so it is not searched as the reply's text
/// (the raw stanza keeps it).
///
/// # Retractions
/// A retraction counts only from the target's own sender (the same bare JID in a chat; the same occupant id in
/// a room, or the same nick where the room gives no ids), or from the room itself (moderation). Then
/// `retracted = 1`, `retracted_by`, `retracted_at`, `retraction_reason`; unless the account keeps retracted
/// text (`[archive] keep_retracted`), the body, the raw stanza and every earlier revision's text are erased, which
/// takes the message out of the full-text index. Every retraction is recorded in `retractions`, with `status`
/// `applied`, `pending` (target not archived yet) or `refused` (another sender: a forgery).
///
/// # Read state
/// `read_state`, one row per conversation (made with its first message): `read_row` is the newest message the user has seen (a displayed marker sent by
/// one of the user's clients, a message the user wrote, `roost read`); incoming messages after it are unread.
/// `peer_received_row` / `peer_displayed_row` are how far the contact's clients got (receipts, markers): an
/// outgoing message at or before them is delivered / read. Rows are message ids (time ordered); a marker whose
/// target is not archived counts up to its own time. Archives upgraded to this version start with everything
/// read.
enum SchemaV8 {
    static let sql = """
    ALTER TABLE messages ADD COLUMN reply_to TEXT;
    ALTER TABLE messages ADD COLUMN reply_to_jid TEXT;
    ALTER TABLE messages ADD COLUMN retracted_by TEXT;
    ALTER TABLE messages ADD COLUMN retracted_at INTEGER;
    ALTER TABLE messages ADD COLUMN retraction_reason TEXT;
    CREATE INDEX messages_message_id ON messages(conversation, message_id) WHERE message_id IS NOT NULL;
    CREATE INDEX messages_origin_id ON messages(conversation, origin_id) WHERE origin_id IS NOT NULL;
    CREATE INDEX messages_stanza_id ON messages(conversation, stanza_id) WHERE stanza_id IS NOT NULL;

    CREATE TABLE reactions (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL COLLATE NOCASE,
        target TEXT NOT NULL,
        message_row INTEGER REFERENCES messages(id) ON DELETE CASCADE,
        reactor TEXT NOT NULL,
        reactor_name TEXT,
        direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
        emojis TEXT NOT NULL DEFAULT '[]',
        timestamp INTEGER NOT NULL,
        source TEXT NOT NULL,
        dedup_key TEXT NOT NULL,
        UNIQUE (account_id, dedup_key)
    );
    CREATE INDEX reactions_message ON reactions(message_row, reactor);
    CREATE INDEX reactions_pending ON reactions(conversation, target) WHERE message_row IS NULL;

    CREATE TABLE retractions (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL COLLATE NOCASE,
        target TEXT NOT NULL,
        message_row INTEGER REFERENCES messages(id) ON DELETE CASCADE,
        from_jid TEXT NOT NULL,
        occupant_id TEXT,
        moderated INTEGER NOT NULL DEFAULT 0,
        moderator TEXT,
        reason TEXT,
        keep_text INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL CHECK (status IN ('applied', 'pending', 'refused')),
        timestamp INTEGER NOT NULL,
        source TEXT NOT NULL,
        dedup_key TEXT NOT NULL,
        UNIQUE (account_id, dedup_key)
    );
    CREATE INDEX retractions_pending ON retractions(conversation, target) WHERE status = 'pending';

    CREATE TABLE read_state (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL COLLATE NOCASE,
        read_row INTEGER NOT NULL DEFAULT 0,
        read_at INTEGER,
        peer_received_row INTEGER NOT NULL DEFAULT 0,
        peer_displayed_row INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, conversation)
    );
    INSERT INTO read_state (account_id, conversation, read_row, updated_at)
        SELECT account_id, conversation, max(id), max(received_at) FROM messages GROUP BY account_id, conversation;
    """
}
