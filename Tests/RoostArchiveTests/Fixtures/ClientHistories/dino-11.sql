-- Dino 0.1 dino.db (database version 11): as dino-29.sql but as Dino 0.1 (tag v0.1.0) created it: no message_correction
-- (Dino 0.2), no call (0.3), no reaction (0.4), no file_transfer sharing columns (version 28, Dino 0.5).
CREATE TABLE IF NOT EXISTS _meta ( name TEXT PRIMARY KEY, int_val INTEGER, text_val TEXT);
CREATE TABLE IF NOT EXISTS account ( id INTEGER PRIMARY KEY AUTOINCREMENT, bare_jid TEXT NOT NULL UNIQUE, resourcepart TEXT, password TEXT, alias TEXT, enabled INTEGER, roster_version TEXT, mam_earliest_synced INTEGER);
CREATE TABLE IF NOT EXISTS jid ( id INTEGER PRIMARY KEY AUTOINCREMENT, bare_jid TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS content_item ( id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL, time INTEGER NOT NULL, local_time INTEGER NOT NULL, content_type INTEGER NOT NULL, foreign_id INTEGER NOT NULL, hide INTEGER NOT NULL DEFAULT 0, UNIQUE (content_type, foreign_id) ON CONFLICT IGNORE);
CREATE  INDEX IF NOT EXISTS contentitem_conversation_hide_time_idx ON content_item (conversation_id, hide, time);
CREATE TABLE IF NOT EXISTS message ( id INTEGER PRIMARY KEY AUTOINCREMENT, stanza_id TEXT, server_id TEXT, account_id INTEGER NOT NULL, counterpart_id INTEGER NOT NULL, our_resource TEXT, counterpart_resource TEXT, direction INTEGER NOT NULL, type INTEGER, time INTEGER, local_time INTEGER, body TEXT, encryption INTEGER, marked INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS _fts_message USING fts4(tokenize=unicode61, content="message", body TEXT);
CREATE  INDEX IF NOT EXISTS message_account_counterpart_time_idx ON message (account_id, counterpart_id, time);
CREATE  INDEX IF NOT EXISTS message_account_counterpart_stanzaid_idx ON message (account_id, counterpart_id, stanza_id);
CREATE  INDEX IF NOT EXISTS message_account_counterpart_serverid_idx ON message (account_id, counterpart_id, server_id);
CREATE  INDEX IF NOT EXISTS message_account_marked_idx ON message (account_id, marked);
CREATE TRIGGER IF NOT EXISTS _fts_bu_message BEFORE UPDATE ON message BEGIN DELETE FROM _fts_message WHERE docid=old.rowid; END;
CREATE TRIGGER IF NOT EXISTS _fts_bd_message BEFORE DELETE ON message BEGIN DELETE FROM _fts_message WHERE docid=old.rowid; END;
CREATE TRIGGER IF NOT EXISTS _fts_au_message AFTER UPDATE ON message BEGIN INSERT INTO _fts_message(docid, body) VALUES(new.rowid, new.body); END;
CREATE TRIGGER IF NOT EXISTS _fts_ai_message AFTER INSERT ON message BEGIN INSERT INTO _fts_message(docid, body) VALUES(new.rowid, new.body); END;
CREATE TABLE IF NOT EXISTS real_jid ( message_id INTEGER PRIMARY KEY, real_jid TEXT);
CREATE TABLE IF NOT EXISTS undecrypted ( message_id INTEGER, type INTEGER, data TEXT);
CREATE TABLE IF NOT EXISTS file_transfer ( id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL, counterpart_id INTEGER NOT NULL, counterpart_resource TEXT, our_resource TEXT, direction INTEGER NOT NULL, time INTEGER, local_time INTEGER, encryption INTEGER, file_name TEXT, path TEXT, mime_type TEXT, size INTEGER, state INTEGER, provider INTEGER, info TEXT);
CREATE TABLE IF NOT EXISTS conversation ( id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL, jid_id INTEGER NOT NULL, resource TEXT, active INTEGER, last_active INTEGER, type INTEGER, encryption INTEGER, read_up_to INTEGER, notification INTEGER, send_typing INTEGER, send_marker INTEGER);
CREATE TABLE IF NOT EXISTS roster ( account_id INTEGER, jid TEXT, name TEXT, subscription TEXT, UNIQUE (account_id, jid) ON CONFLICT IGNORE);
CREATE TABLE IF NOT EXISTS settings ( id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, value TEXT);
INSERT INTO _meta (name, int_val) VALUES ('version', 11);
