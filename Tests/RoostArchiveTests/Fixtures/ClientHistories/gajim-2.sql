-- Gajim 1.9 – 2.5 logs.db (PRAGMA user_version 19 as of Gajim 2.4/2.5): the tables SQLAlchemy creates from the
-- models in gajim/common/storage/archive/models.py (tag 2.5.0), written out as DDL (str → TEXT, int → INTEGER,
-- float and EpochTimestampType → FLOAT = UTC seconds, JIDType/JSONType → TEXT; Optional columns nullable).
-- Gajim 1.9.0 created user_version 11 (no occupant.blocked, retraction/opengraph/contact came in 1.9.x – 2.x;
-- reaction is there from 1.9.0 on); the columns the importer reads are the same in all of them.
CREATE TABLE account (pk INTEGER NOT NULL, jid TEXT NOT NULL, PRIMARY KEY (pk));
CREATE UNIQUE INDEX idx_account ON account (jid);
CREATE TABLE remote (pk INTEGER NOT NULL, jid TEXT NOT NULL, PRIMARY KEY (pk));
CREATE UNIQUE INDEX idx_remote ON remote (jid);
CREATE TABLE thread (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, id TEXT NOT NULL,
    PRIMARY KEY (pk), FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE,
    FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_thread ON thread (id, fk_remote_pk, fk_account_pk);
CREATE TABLE occupant (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, id TEXT NOT NULL,
    fk_real_remote_pk TEXT, nickname TEXT, avatar_sha TEXT, blocked BOOLEAN NOT NULL DEFAULT (0), updated_at FLOAT NOT NULL,
    PRIMARY KEY (pk), FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE,
    FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk), FOREIGN KEY(fk_real_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_occupant ON occupant (id, fk_remote_pk, fk_account_pk);
CREATE INDEX idx_occupant_real_remote ON occupant (fk_real_remote_pk, fk_remote_pk, fk_account_pk);
CREATE TABLE encryption (pk INTEGER NOT NULL, protocol TEXT NOT NULL, "key" TEXT NOT NULL, trust INTEGER NOT NULL, PRIMARY KEY (pk));
CREATE UNIQUE INDEX idx_encryption ON encryption ("key", trust, protocol);
CREATE TABLE securitylabel (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, label_hash TEXT NOT NULL,
    displaymarking TEXT NOT NULL, fgcolor TEXT NOT NULL, bgcolor TEXT NOT NULL, updated_at FLOAT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_security_label ON securitylabel (label_hash, fk_remote_pk, fk_account_pk);
CREATE TABLE message (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, resource TEXT, type INTEGER NOT NULL,
    direction INTEGER NOT NULL, timestamp FLOAT NOT NULL, state INTEGER NOT NULL, id TEXT, stanza_id TEXT, text TEXT,
    markup_type INTEGER, markup TEXT, user_delay_ts FLOAT, fk_thread_pk INTEGER, fk_occupant_pk INTEGER,
    fk_encryption_pk INTEGER, fk_security_label_pk INTEGER, correction_id TEXT, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk),
    FOREIGN KEY(fk_thread_pk) REFERENCES thread (pk), FOREIGN KEY(fk_occupant_pk) REFERENCES occupant (pk),
    FOREIGN KEY(fk_encryption_pk) REFERENCES encryption (pk), FOREIGN KEY(fk_security_label_pk) REFERENCES securitylabel (pk));
CREATE INDEX idx_message ON message (fk_remote_pk, fk_account_pk, timestamp DESC);
CREATE INDEX idx_message_corrections ON message (correction_id, fk_remote_pk, fk_account_pk, timestamp ASC);
CREATE INDEX idx_message_id ON message (id, fk_remote_pk, fk_account_pk);
CREATE INDEX idx_stanza_id ON message (stanza_id, fk_remote_pk, fk_account_pk);
CREATE TABLE oob (
    pk INTEGER NOT NULL, fk_message_pk INTEGER NOT NULL, url TEXT NOT NULL, description TEXT, PRIMARY KEY (pk),
    FOREIGN KEY(fk_message_pk) REFERENCES message (pk) ON DELETE CASCADE);
CREATE INDEX idx_oob_message_pk ON oob (fk_message_pk);
CREATE TABLE opengraph (
    pk INTEGER NOT NULL, fk_message_pk INTEGER NOT NULL, about TEXT NOT NULL, title TEXT NOT NULL, description TEXT,
    image_type TEXT, image_bytes BLOB, PRIMARY KEY (pk), FOREIGN KEY(fk_message_pk) REFERENCES message (pk) ON DELETE CASCADE);
CREATE INDEX idx_opengraph_message_pk ON opengraph (fk_message_pk);
CREATE TABLE reply (
    fk_message_pk INTEGER NOT NULL, id TEXT NOT NULL, "to" TEXT, PRIMARY KEY (fk_message_pk),
    FOREIGN KEY(fk_message_pk) REFERENCES message (pk) ON DELETE CASCADE);
CREATE TABLE call (
    fk_message_pk INTEGER NOT NULL, sid TEXT NOT NULL, end_ts FLOAT, state INTEGER NOT NULL, PRIMARY KEY (fk_message_pk),
    FOREIGN KEY(fk_message_pk) REFERENCES message (pk) ON DELETE CASCADE);
CREATE TABLE error (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, message_id TEXT NOT NULL, "by" TEXT,
    type TEXT NOT NULL, text TEXT, condition TEXT NOT NULL, condition_text TEXT, timestamp FLOAT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_error ON error (message_id, fk_remote_pk, fk_account_pk);
CREATE TABLE moderation (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, fk_occupant_pk INTEGER,
    stanza_id TEXT NOT NULL, "by" TEXT, reason TEXT, timestamp FLOAT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk),
    FOREIGN KEY(fk_occupant_pk) REFERENCES occupant (pk));
CREATE UNIQUE INDEX idx_moderation ON moderation (stanza_id, fk_remote_pk, fk_account_pk);
CREATE TABLE displayed_marker (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, fk_occupant_pk INTEGER,
    id TEXT NOT NULL, timestamp FLOAT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk),
    FOREIGN KEY(fk_occupant_pk) REFERENCES occupant (pk));
CREATE TABLE receipt (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, id TEXT NOT NULL,
    timestamp FLOAT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_receipt ON receipt (id, fk_remote_pk, fk_account_pk);
CREATE TABLE mam_archive_state (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, from_stanza_id TEXT,
    from_stanza_ts FLOAT, to_stanza_id TEXT, to_stanza_ts FLOAT, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_mam_archive_state ON mam_archive_state (fk_remote_pk, fk_account_pk);
CREATE TABLE filetransfer (
    pk INTEGER NOT NULL, fk_message_pk INTEGER NOT NULL, date FLOAT, "desc" TEXT, hash TEXT, hash_algo TEXT, height INTEGER,
    length INTEGER, media_type TEXT, name TEXT, size INTEGER, width INTEGER, state INTEGER, path TEXT, PRIMARY KEY (pk),
    FOREIGN KEY(fk_message_pk) REFERENCES message (pk) ON DELETE CASCADE);
CREATE TABLE ft_source (
    pk INTEGER NOT NULL, fk_filetransfer_pk INTEGER NOT NULL, type TEXT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_filetransfer_pk) REFERENCES filetransfer (pk) ON DELETE CASCADE);
CREATE TABLE ft_source_urldata (
    fk_ft_source_pk INTEGER NOT NULL, target TEXT NOT NULL, scheme_data TEXT, PRIMARY KEY (fk_ft_source_pk),
    FOREIGN KEY(fk_ft_source_pk) REFERENCES ft_source (pk) ON DELETE CASCADE);
CREATE TABLE reaction (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, fk_occupant_pk INTEGER,
    id TEXT NOT NULL, direction INTEGER NOT NULL, emojis TEXT NOT NULL, timestamp FLOAT NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk),
    FOREIGN KEY(fk_occupant_pk) REFERENCES occupant (pk));
CREATE INDEX idx_reaction ON reaction (id, fk_remote_pk, fk_account_pk);
CREATE UNIQUE INDEX idx_reaction_id ON reaction (id, fk_remote_pk, fk_account_pk, direction) WHERE fk_occupant_pk IS NULL;
CREATE UNIQUE INDEX idx_reaction_id_gc ON reaction (id, fk_remote_pk, fk_occupant_pk, fk_account_pk, direction) WHERE fk_occupant_pk IS NOT NULL;
CREATE TABLE retraction (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, fk_occupant_pk INTEGER,
    id TEXT NOT NULL, direction INTEGER NOT NULL, timestamp FLOAT NOT NULL, state INTEGER NOT NULL, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk),
    FOREIGN KEY(fk_occupant_pk) REFERENCES occupant (pk));
CREATE INDEX idx_retraction ON retraction (id, fk_remote_pk, fk_account_pk, direction);
CREATE TABLE contact (
    pk INTEGER NOT NULL, fk_account_pk INTEGER NOT NULL, fk_remote_pk INTEGER NOT NULL, timestamp FLOAT NOT NULL,
    custom_name TEXT, remote_name TEXT, fallback_name TEXT, draft TEXT, avatar_sha TEXT, last_read_id TEXT, PRIMARY KEY (pk),
    FOREIGN KEY(fk_account_pk) REFERENCES account (pk) ON DELETE CASCADE, FOREIGN KEY(fk_remote_pk) REFERENCES remote (pk));
CREATE UNIQUE INDEX idx_contact ON contact (fk_remote_pk, fk_account_pk);
PRAGMA user_version=19;
