/// Schema version 14: full-text updates of a batch indexed at its end, in row order (issue 15, bytes written).
///
/// FTS5 writes its pending terms as a new segment at every savepoint (each following statement of the batch that
/// fires a trigger or checks a constraint opens one) and whenever a row id is lower than the one before. The update
/// trigger of v1 put each correction's, retraction's or late decryption's text change into the index at once, and
/// the writer indexed the batch's new rows before it so that the trigger's delete found them: every such update
/// cost two small segments — ~1,000 in each 50,000-message batch of a history with 1 % corrections. With that, no
/// setting of FTS5 could make a batch one segment (`BulkFullTextSettings`); with both, a 10M import writes 2.36× the
/// archive instead of 3.16× (docs/performance-history.md, "Bytes written at 10M").
///
/// Now, while the writer's connection says so (`roost_fts_deferring()`, set by `ArchiveWriter.commit` for the span
/// of one batch), the update trigger only notes the row's text as the index holds it in `fts_pending` (the first
/// such text of the batch is kept); `Ingestor.flushIndex` then takes each noted row out of the index with that text
/// and puts its current text in, together with the batch's new rows, all in ascending row id: one segment per batch
/// (or per `hashsize` of terms). Elsewhere — a connection that never sets the flag — the trigger updates the index
/// at once, as before. `fts_pending` is empty between transactions: the same transaction that fills it empties it.
/// No batch deletes a message, so the delete trigger stays as v1 wrote it.
///
/// The immediate trigger's body is v1's, repeated rather than shared: each migration's SQL stays as it shipped.
enum SchemaV14 {
    static let sql = """
    CREATE TABLE fts_pending (
        id INTEGER PRIMARY KEY,
        body TEXT,
        subject TEXT,
        sender_name TEXT
    );

    DROP TRIGGER messages_fts_update;

    CREATE TRIGGER messages_fts_update AFTER UPDATE OF body, subject, sender_name ON messages
    WHEN NOT roost_fts_deferring() BEGIN
        INSERT INTO message_fts (message_fts, rowid, body, subject, sender, cjk)
        VALUES ('delete', old.id, roost_fts_text(old.body), roost_fts_text(old.subject), roost_fts_text(old.sender_name),
                roost_fts_cjk(old.body, old.subject, old.sender_name));
        INSERT INTO message_fts (rowid, body, subject, sender, cjk)
        VALUES (new.id, roost_fts_text(new.body), roost_fts_text(new.subject), roost_fts_text(new.sender_name),
                roost_fts_cjk(new.body, new.subject, new.sender_name));
    END;

    CREATE TRIGGER messages_fts_update_deferred AFTER UPDATE OF body, subject, sender_name ON messages
    WHEN roost_fts_deferring() BEGIN
        INSERT OR IGNORE INTO fts_pending (id, body, subject, sender_name)
        VALUES (old.id, old.body, old.subject, old.sender_name);
    END;
    """
}
