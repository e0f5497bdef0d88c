/// Schema version 18: the change feed (issue 33). Every change to what an export writes for a message — a new
/// message, a correction, a retraction, a late decryption, a delivery state, a reaction attached, an attachment
/// stored, a forget — gives the message's row the next number in `message_changes.seq`, by triggers in the
/// transaction that changes the row, whoever writes (the agent, an import, `roost forget`, retention). One row per
/// message: its latest change (a deleted message keeps its row, so readers learn that it is gone). `seq` only
/// grows: rows are never deleted, and a change takes `max(seq) + 1` (one seek in `message_changes_seq`).
///
/// `export_cursors` holds named positions in the feed: `roost export --since-last NAME` and the live mail mirror
/// (`mirror`), each advanced only once what it wrote up to there is on disk. See docs/mirror.md.
///
/// Read state (`read_state`) is not a change of a message: an export's `unread` flag follows it, the feed does not.
/// Messages archived before this version have no row; a reader without a cursor reads everything.
enum SchemaV18 {
    static let sql = """
    CREATE TABLE message_changes (
        message_row INTEGER PRIMARY KEY,
        seq INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX message_changes_seq ON message_changes(seq);

    CREATE TABLE export_cursors (
        name TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID;

    CREATE TRIGGER messages_change_insert AFTER INSERT ON messages BEGIN
        INSERT INTO message_changes (message_row, seq) VALUES (new.id, coalesce((SELECT max(seq) FROM message_changes), 0) + 1)
        ON CONFLICT (message_row) DO UPDATE SET seq = excluded.seq;
    END;

    CREATE TRIGGER messages_change_update AFTER UPDATE ON messages BEGIN
        INSERT INTO message_changes (message_row, seq) VALUES (new.id, coalesce((SELECT max(seq) FROM message_changes), 0) + 1)
        ON CONFLICT (message_row) DO UPDATE SET seq = excluded.seq;
    END;

    CREATE TRIGGER messages_change_delete AFTER DELETE ON messages BEGIN
        INSERT INTO message_changes (message_row, seq) VALUES (old.id, coalesce((SELECT max(seq) FROM message_changes), 0) + 1)
        ON CONFLICT (message_row) DO UPDATE SET seq = excluded.seq;
    END;

    CREATE TRIGGER reactions_change_insert AFTER INSERT ON reactions WHEN new.message_row IS NOT NULL BEGIN
        INSERT INTO message_changes (message_row, seq)
        VALUES (new.message_row, coalesce((SELECT max(seq) FROM message_changes), 0) + 1)
        ON CONFLICT (message_row) DO UPDATE SET seq = excluded.seq;
    END;

    CREATE TRIGGER reactions_change_attach AFTER UPDATE OF message_row ON reactions WHEN new.message_row IS NOT NULL BEGIN
        INSERT INTO message_changes (message_row, seq)
        VALUES (new.message_row, coalesce((SELECT max(seq) FROM message_changes), 0) + 1)
        ON CONFLICT (message_row) DO UPDATE SET seq = excluded.seq;
    END;

    CREATE TRIGGER attachments_change_stored AFTER UPDATE OF state, sha256, local_path ON attachments
    WHEN new.state IS NOT old.state OR new.sha256 IS NOT old.sha256 OR new.local_path IS NOT old.local_path BEGIN
        INSERT INTO message_changes (message_row, seq)
        VALUES (new.message_row, coalesce((SELECT max(seq) FROM message_changes), 0) + 1)
        ON CONFLICT (message_row) DO UPDATE SET seq = excluded.seq;
    END;
    """
}
