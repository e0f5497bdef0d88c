/// Schema version 2: the delivery state of outgoing messages, and chat states told apart by stanza id.
///
/// # Delivery
/// `messages.delivery` is NULL for incoming messages and for outgoing ones learnt from elsewhere (carbons,
/// the server archive, imports, archives from before version 2): the server had them. A message Roost
/// sends itself is stored `pending` before it is written to the stream, becomes `sent` when the server
/// acknowledges it (XEP-0198) or when its copy comes back from the server archive (same origin-id), and
/// `failed` when the session it went out on ended unacknowledged and the server archive does not have it
/// either (Roost then sends it again once; see docs/zero-loss.md).
enum SchemaV2 {
    ///
    /// # Chat states
    /// `chat_states.message_id` is the `id` of the stanza that carried the state. A state with an id is
    /// stored once per (account, conversation, sender, id): a stanza resent after a reconnect arrives later
    /// but is the same state. One without an id keeps the version-1 rule (same state, sender and millisecond).
    /// The table is rebuilt, since SQLite cannot change a table's UNIQUE constraint in place.
    static let sql = """
    ALTER TABLE messages ADD COLUMN delivery TEXT CHECK (delivery IN ('pending', 'sent', 'failed'));
    CREATE INDEX messages_delivery ON messages(account_id, delivery) WHERE delivery IN ('pending', 'failed');
    CREATE INDEX messages_origin ON messages(account_id, origin_id) WHERE origin_id IS NOT NULL;

    CREATE TABLE chat_states_v2 (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL COLLATE NOCASE,
        from_jid TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('active', 'composing', 'paused', 'inactive', 'gone')),
        timestamp INTEGER NOT NULL,
        message_id TEXT
    );
    INSERT INTO chat_states_v2 (id, account_id, conversation, from_jid, state, timestamp)
        SELECT id, account_id, conversation, from_jid, state, timestamp FROM chat_states;
    DROP TABLE chat_states;
    ALTER TABLE chat_states_v2 RENAME TO chat_states;
    CREATE UNIQUE INDEX chat_states_by_stanza ON chat_states(account_id, conversation, from_jid, message_id)
        WHERE message_id IS NOT NULL;
    CREATE UNIQUE INDEX chat_states_by_time ON chat_states(account_id, conversation, from_jid, state, timestamp)
        WHERE message_id IS NULL;
    CREATE INDEX chat_states_conversation ON chat_states(account_id, conversation, timestamp);
    """
}
