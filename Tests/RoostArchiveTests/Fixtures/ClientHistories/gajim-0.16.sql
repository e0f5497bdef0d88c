-- Gajim 0.16 logs.db (PRAGMA user_version 0): create_log_db() in src/common/check_paths.py (tag gajim-0.16.9).
-- `time` is whole UTC seconds; there is no account column (one history for all accounts).
CREATE TABLE jids(
        jid_id INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
        jid TEXT UNIQUE,
        type INTEGER
);
CREATE TABLE unread_messages(
        message_id INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
        jid_id INTEGER,
        shown BOOLEAN default 0
);
CREATE INDEX idx_unread_messages_jid_id ON unread_messages (jid_id);
CREATE TABLE logs(
        log_line_id INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
        jid_id INTEGER,
        contact_name TEXT,
        time INTEGER,
        kind INTEGER,
        show INTEGER,
        message TEXT,
        subject TEXT
);
CREATE INDEX idx_logs_jid_id_time ON logs (jid_id, time DESC);
