/// Schema version 10: lookups and counters that stay fast at ten million messages (issue 15).
///
/// - `messages_account_message_id` lets a correction (XEP-0308) find its target by message id in one index seek; with
///   `messages_origin` (origin-ids, `SchemaV2`) the lookup of `Ingestor.correctionTarget` is O(log n) instead of
///   a walk through the conversation (1.6 s per miss at 10M, for every correction, live and imported).
/// - `conversation_counts`, `room_senders` and `row_counts` are what `roost stats` shows, kept by triggers in
///   the transaction that changes the rows, so they are exact whatever writes (the agent, an import, a
///   migration) and whenever it stops (a kill -9 rolls back the counters with the rows). `roost stats` reads
///   them instead of grouping every message (126 s at 10M). First and last times are kept as min/max on insert;
///   messages are never deleted one by one, but an account removal (cascade) recomputes them.
enum SchemaV10 {
    static let sql = """
    CREATE INDEX messages_account_message_id ON messages(account_id, conversation, message_id) WHERE message_id IS NOT NULL;

    CREATE TABLE conversation_counts (
        account_id INTEGER NOT NULL,
        conversation TEXT NOT NULL COLLATE NOCASE,
        messages INTEGER NOT NULL,
        incoming INTEGER NOT NULL,
        outgoing INTEGER NOT NULL,
        groupchat INTEGER NOT NULL,
        first_timestamp INTEGER NOT NULL,
        last_timestamp INTEGER NOT NULL,
        PRIMARY KEY (account_id, conversation)
    ) WITHOUT ROWID;

    -- Messages with a body per room occupant (occupant id, else full JID): the count of a room's writers.
    CREATE TABLE room_senders (
        account_id INTEGER NOT NULL,
        conversation TEXT NOT NULL COLLATE NOCASE,
        sender TEXT NOT NULL,
        messages INTEGER NOT NULL,
        PRIMARY KEY (account_id, conversation, sender)
    ) WITHOUT ROWID;

    CREATE TABLE row_counts (
        name TEXT PRIMARY KEY,
        rows INTEGER NOT NULL
    ) WITHOUT ROWID;

    INSERT INTO conversation_counts
    SELECT account_id, conversation, count(*), sum(direction = 'in'), sum(direction = 'out'), sum(type = 'groupchat'),
           min(timestamp), max(timestamp)
    FROM messages GROUP BY account_id, conversation;

    INSERT INTO room_senders
    SELECT account_id, conversation, coalesce(occupant_id, from_jid), count(*)
    FROM messages WHERE type = 'groupchat' AND body IS NOT NULL GROUP BY 1, 2, 3;

    INSERT INTO row_counts VALUES
        ('chat_states', (SELECT count(*) FROM chat_states)),
        ('presence_log', (SELECT count(*) FROM presence_log)),
        ('subscription_requests', (SELECT count(*) FROM subscription_requests));

    CREATE TRIGGER messages_count_insert AFTER INSERT ON messages BEGIN
        INSERT INTO conversation_counts VALUES (new.account_id, new.conversation, 1, new.direction = 'in', new.direction = 'out',
            new.type = 'groupchat', new.timestamp, new.timestamp)
        ON CONFLICT DO UPDATE SET messages = messages + 1, incoming = incoming + (new.direction = 'in'),
            outgoing = outgoing + (new.direction = 'out'), groupchat = groupchat + (new.type = 'groupchat'),
            first_timestamp = min(first_timestamp, new.timestamp), last_timestamp = max(last_timestamp, new.timestamp);
        INSERT INTO room_senders SELECT new.account_id, new.conversation, coalesce(new.occupant_id, new.from_jid), 1
            WHERE new.type = 'groupchat' AND new.body IS NOT NULL
        ON CONFLICT DO UPDATE SET messages = messages + 1;
    END;

    CREATE TRIGGER messages_count_delete AFTER DELETE ON messages BEGIN
        UPDATE conversation_counts SET messages = messages - 1, incoming = incoming - (old.direction = 'in'),
            outgoing = outgoing - (old.direction = 'out'), groupchat = groupchat - (old.type = 'groupchat'),
            first_timestamp = coalesce((SELECT min(timestamp) FROM messages
                WHERE account_id = old.account_id AND conversation = old.conversation), first_timestamp),
            last_timestamp = coalesce((SELECT max(timestamp) FROM messages
                WHERE account_id = old.account_id AND conversation = old.conversation), last_timestamp)
        WHERE account_id = old.account_id AND conversation = old.conversation;
        DELETE FROM conversation_counts WHERE account_id = old.account_id AND conversation = old.conversation AND messages <= 0;
        UPDATE room_senders SET messages = messages - 1
        WHERE old.type = 'groupchat' AND old.body IS NOT NULL AND account_id = old.account_id
            AND conversation = old.conversation AND sender = coalesce(old.occupant_id, old.from_jid);
        DELETE FROM room_senders WHERE account_id = old.account_id AND conversation = old.conversation AND messages <= 0;
    END;

    -- A late decryption gives a body to a row that had none (a correction never takes one away, but is counted too).
    CREATE TRIGGER messages_count_body AFTER UPDATE OF body ON messages
    WHEN new.type = 'groupchat' AND (old.body IS NULL) != (new.body IS NULL) BEGIN
        INSERT INTO room_senders SELECT new.account_id, new.conversation, coalesce(new.occupant_id, new.from_jid), 1
            WHERE new.body IS NOT NULL
        ON CONFLICT DO UPDATE SET messages = messages + 1;
        UPDATE room_senders SET messages = messages - 1
        WHERE new.body IS NULL AND account_id = old.account_id AND conversation = old.conversation
            AND sender = coalesce(old.occupant_id, old.from_jid);
        DELETE FROM room_senders WHERE account_id = old.account_id AND conversation = old.conversation AND messages <= 0;
    END;

    CREATE TRIGGER chat_states_count_insert AFTER INSERT ON chat_states BEGIN
        UPDATE row_counts SET rows = rows + 1 WHERE name = 'chat_states';
    END;
    CREATE TRIGGER chat_states_count_delete AFTER DELETE ON chat_states BEGIN
        UPDATE row_counts SET rows = rows - 1 WHERE name = 'chat_states';
    END;
    CREATE TRIGGER presence_log_count_insert AFTER INSERT ON presence_log BEGIN
        UPDATE row_counts SET rows = rows + 1 WHERE name = 'presence_log';
    END;
    CREATE TRIGGER presence_log_count_delete AFTER DELETE ON presence_log BEGIN
        UPDATE row_counts SET rows = rows - 1 WHERE name = 'presence_log';
    END;
    CREATE TRIGGER subscription_requests_count_insert AFTER INSERT ON subscription_requests BEGIN
        UPDATE row_counts SET rows = rows + 1 WHERE name = 'subscription_requests';
    END;
    CREATE TRIGGER subscription_requests_count_delete AFTER DELETE ON subscription_requests BEGIN
        UPDATE row_counts SET rows = rows - 1 WHERE name = 'subscription_requests';
    END;
    """
}
