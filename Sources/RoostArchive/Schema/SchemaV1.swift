/// Schema version 1.
///
/// # Message ids
/// `messages.id` is `timestamp_ms << 20 | n` (n = the lowest free slot within that millisecond), so rowid
/// order is time order: newest-first search walks the full-text index by descending rowid and stops after
/// LIMIT rows, and a date range is a rowid range the FTS5 index applies directly. Timestamps before 1970
/// are clamped to 0. Ids are stable but not dense.
///
/// # Message time
/// `timestamp` is the server's `<delay/>` stamp when present, else the receipt time; `received_at` is always
/// the receipt time. Both are UTC milliseconds.
///
/// # Deduplication (the same stanza seen as live message, carbon, resend or MAM result is stored once)
/// 1. A *trusted* stanza-id (XEP-0359 `<stanza-id by=account bare JID>` from a server that advertises
///    `urn:xmpp:sid:0` or MAM; the caller decides and sets `stanzaIdTrusted`) is unique per account:
///    partial unique index `messages_trusted_stanza_id` on (account, stanza_id) WHERE stanza_id_trusted.
/// 2. Every message also gets a fallback `dedup_key`, the first that applies:
///    - `o|conversation|direction|origin-id` when it has an XEP-0359 origin-id (for groupchat the sender's
///      full JID is appended, so one occupant cannot suppress another's message by reusing an origin-id);
///    - `m|conversation|from full JID|message id|body hash` when it has a stanza `id`;
///    - `t|conversation|from full JID|timestamp in whole seconds|body hash` otherwise.
///    (conversation compared case-insensitively; body hash = FNV-1a 64 of the UTF-8 body, hex.)
///    Since `SchemaV13` an origin-id key is stored as the marker `o` and rebuilt from its row (`DedupKey`).
/// 3. A message with a trusted stanza-id is a duplicate when that id is stored; else, when a row with the same
///    fallback key exists *without* a trusted stanza-id, it is the same message seen before its stanza-id was
///    known: the row adopts the stanza-id and the insert is a duplicate. Rows with different trusted ids are
///    different messages even when their fallback keys agree (the server says so).
/// 4. A message without a trusted stanza-id is a duplicate when any row has the same fallback key.
/// 5. A private message with a room's occupant (conversation `room@service/nick`) is one message whatever its trusted
///    stanza-ids: when the user is in the room from several clients under one nick, the room delivers one copy to
///    each session, and the user's server archives each copy under an id of its own (Prosody and ejabberd do). So
///    for these rows the fallback key decides even between different trusted ids, live and in a catch-up alike:
///    a copy whose id is unknown is a duplicate of any row with its key (the first copy's id is kept).
///
/// # Corrections (XEP-0308)
/// A message whose `replaces` names the `id` (or origin-id) of an earlier message in the same account and
/// conversation, sent by the same sender (same full JID in groupchat, same bare JID otherwise), becomes a
/// revision: `message_revisions` keeps revision 0 = the original text and one row per correction, the
/// `messages` row shows the latest text (`edited` counts the corrections) and the full-text index follows it
/// (search sees the latest text only). A correction from anyone else, or whose target is unknown, is stored
/// as an ordinary new message and never edits anything.
///
/// # Full text
/// `message_fts` is an FTS5 external-content table over the view `message_fts_content`, whose columns are
/// the derived search text (see `SearchText`): body, subject, sender display name, and the hidden `cjk`
/// column. Triggers keep it in step when a message is updated (corrections) or deleted; since v14 the writer's
/// updates reach it at the end of their batch (`SchemaV14`). New rows are indexed
/// by the writer itself at the end of each batch, in the same transaction (`Ingestor.flushIndex`), not by an AFTER INSERT
/// trigger: a statement that fires a trigger opens a savepoint, at which FTS5 flushes its pending terms, so
/// per-row trigger indexing writes one tiny segment per message and ingests about 4× slower.
/// `INSERT INTO message_fts(message_fts) VALUES('rebuild')` regenerates the index (on a connection where the
/// archive's SQL functions are registered).
enum SchemaV1 {
    static let sql = """
    CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        jid TEXT NOT NULL UNIQUE COLLATE NOCASE,
        created_at INTEGER NOT NULL
    );

    CREATE TABLE contacts (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        jid TEXT NOT NULL COLLATE NOCASE,
        in_roster INTEGER NOT NULL DEFAULT 0,
        name TEXT,
        groups TEXT NOT NULL DEFAULT '[]',
        subscription TEXT,
        ask TEXT,
        roster_updated_at INTEGER,
        nickname TEXT,
        fullname TEXT,
        photo_hash TEXT,
        photo_path TEXT,
        vcard_raw TEXT,
        vcard_fetched_at INTEGER,
        UNIQUE (account_id, jid)
    );

    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL COLLATE NOCASE,
        direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
        type TEXT NOT NULL CHECK (type IN ('chat', 'normal', 'groupchat', 'headline')),
        from_jid TEXT NOT NULL,
        from_bare TEXT NOT NULL COLLATE NOCASE,
        to_jid TEXT NOT NULL,
        to_bare TEXT NOT NULL COLLATE NOCASE,
        sender_name TEXT,
        body TEXT,
        subject TEXT,
        thread TEXT,
        timestamp INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        stanza_id TEXT,
        stanza_id_by TEXT,
        stanza_id_trusted INTEGER NOT NULL DEFAULT 0,
        origin_id TEXT,
        message_id TEXT,
        replaces TEXT,
        edited INTEGER NOT NULL DEFAULT 0,
        retracted INTEGER NOT NULL DEFAULT 0,
        is_carbon INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL CHECK (source IN ('live', 'carbon', 'mam', 'import')),
        dedup_key TEXT NOT NULL,
        raw TEXT
    );
    CREATE UNIQUE INDEX messages_trusted_stanza_id ON messages(account_id, stanza_id) WHERE stanza_id_trusted = 1;
    CREATE INDEX messages_dedup ON messages(account_id, dedup_key);
    CREATE INDEX messages_conversation ON messages(conversation);
    CREATE INDEX messages_from ON messages(from_bare);

    CREATE TABLE message_revisions (
        id INTEGER PRIMARY KEY,
        message_row INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        body TEXT,
        from_jid TEXT NOT NULL,
        timestamp INTEGER NOT NULL,
        received_at INTEGER NOT NULL,
        stanza_id TEXT,
        stanza_id_trusted INTEGER NOT NULL DEFAULT 0,
        origin_id TEXT,
        message_id TEXT,
        dedup_key TEXT NOT NULL,
        source TEXT NOT NULL,
        raw TEXT,
        UNIQUE (message_row, revision)
    );
    CREATE INDEX message_revisions_dedup ON message_revisions(message_row, dedup_key);

    CREATE TABLE attachments (
        id INTEGER PRIMARY KEY,
        message_row INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        url TEXT NOT NULL,
        local_path TEXT,
        mime TEXT,
        size INTEGER
    );
    CREATE INDEX attachments_message ON attachments(message_row);

    CREATE TABLE chat_states (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        conversation TEXT NOT NULL COLLATE NOCASE,
        from_jid TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('active', 'composing', 'paused', 'inactive', 'gone')),
        timestamp INTEGER NOT NULL,
        UNIQUE (account_id, conversation, from_jid, state, timestamp)
    );

    CREATE TABLE presence_log (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        contact TEXT NOT NULL COLLATE NOCASE,
        resource TEXT,
        type TEXT NOT NULL CHECK (type IN ('available', 'unavailable')),
        show TEXT,
        status TEXT,
        priority INTEGER,
        timestamp INTEGER NOT NULL
    );
    CREATE INDEX presence_log_contact ON presence_log(account_id, contact, timestamp);

    CREATE TABLE subscription_requests (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        jid TEXT NOT NULL COLLATE NOCASE,
        direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
        kind TEXT NOT NULL CHECK (kind IN ('subscribe', 'subscribed', 'unsubscribe', 'unsubscribed')),
        status TEXT CHECK (status IN ('pending', 'accepted', 'denied')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        message TEXT
    );
    CREATE INDEX subscription_requests_jid ON subscription_requests(account_id, jid);

    CREATE TABLE sync_state (
        account_id INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
        last_stanza_id TEXT,
        last_timestamp INTEGER,
        sm_id TEXT,
        sm_h INTEGER,
        completed_ranges TEXT NOT NULL DEFAULT '[]',
        updated_at INTEGER NOT NULL
    );

    CREATE VIEW message_fts_content AS
        SELECT id,
               roost_fts_text(body) AS body,
               roost_fts_text(subject) AS subject,
               roost_fts_text(sender_name) AS sender,
               roost_fts_cjk(body, subject, sender_name) AS cjk
        FROM messages;

    CREATE VIRTUAL TABLE message_fts USING fts5(
        body, subject, sender, cjk,
        content = 'message_fts_content',
        content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2'
    );

    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO message_fts (message_fts, rowid, body, subject, sender, cjk)
        VALUES ('delete', old.id, roost_fts_text(old.body), roost_fts_text(old.subject), roost_fts_text(old.sender_name),
                roost_fts_cjk(old.body, old.subject, old.sender_name));
    END;

    CREATE TRIGGER messages_fts_update AFTER UPDATE OF body, subject, sender_name ON messages BEGIN
        INSERT INTO message_fts (message_fts, rowid, body, subject, sender, cjk)
        VALUES ('delete', old.id, roost_fts_text(old.body), roost_fts_text(old.subject), roost_fts_text(old.sender_name),
                roost_fts_cjk(old.body, old.subject, old.sender_name));
        INSERT INTO message_fts (rowid, body, subject, sender, cjk)
        VALUES (new.id, roost_fts_text(new.body), roost_fts_text(new.subject), roost_fts_text(new.sender_name),
                roost_fts_cjk(new.body, new.subject, new.sender_name));
    END;
    """
}
