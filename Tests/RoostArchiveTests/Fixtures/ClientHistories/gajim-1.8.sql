-- Gajim 1.8 logs.db (history schema, PRAGMA user_version 7), as created by Gajim 1.8.4:
-- ARCHIVE_SQL_STATEMENT in gajim/common/storage/archive.py (tag 1.8.4). Gajim 1.0 – 1.8 write this shape;
-- Gajim 0.16 wrote `logs` without account_id, stanza_id, additional_data, message_id, error, real_jid,
-- occupant_id (version 0), which gajim-0.16.sql covers.
CREATE TABLE jids(
        jid_id INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
        jid TEXT UNIQUE,
        type INTEGER
);
CREATE TABLE logs(
        log_line_id INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
        account_id INTEGER,
        jid_id INTEGER,
        contact_name TEXT,
        occupant_id TEXT,
        real_jid TEXT,
        time INTEGER,
        kind INTEGER,
        show INTEGER,
        message TEXT,
        error TEXT,
        subject TEXT,
        additional_data TEXT,
        stanza_id TEXT,
        message_id TEXT,
        encryption TEXT,
        encryption_state TEXT,
        marker INTEGER
);
CREATE TABLE last_archive_message(
        jid_id INTEGER PRIMARY KEY UNIQUE,
        last_mam_id TEXT,
        oldest_mam_timestamp TEXT,
        last_muc_timestamp TEXT
);
CREATE INDEX idx_logs_jid_id_time ON logs (jid_id, time DESC);
CREATE INDEX idx_logs_stanza_id ON logs (stanza_id);
CREATE INDEX idx_logs_message_id ON logs (message_id);
PRAGMA user_version=7;
