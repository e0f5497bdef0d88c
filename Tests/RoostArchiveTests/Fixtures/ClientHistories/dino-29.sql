-- Dino 0.5 dino.db (database version 29): the tables Qlite creates from libdino/src/service/database.vala (tag v0.5.0)
-- for the tables the import reads and their neighbours (entity, body_meta, reply, avatars, caps, MAM and
-- MUC state, sfs_sources, file_hashes/thumbnails, account_settings, conversation_settings are left out).
-- Column order, types and constraints as Qlite's Column.to_column_definition() writes them.
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
CREATE TABLE IF NOT EXISTS message_correction ( id INTEGER PRIMARY KEY AUTOINCREMENT, message_id INTEGER UNIQUE, to_stanza_id TEXT);
CREATE  INDEX IF NOT EXISTS message_correction_to_stanza_id_idx ON message_correction (to_stanza_id);
CREATE TABLE IF NOT EXISTS real_jid ( message_id INTEGER PRIMARY KEY, real_jid TEXT);
CREATE TABLE IF NOT EXISTS occupant_id ( id INTEGER PRIMARY KEY, account_id INTEGER NOT NULL, last_nick TEXT, jid_id INTEGER, occupant_id TEXT, UNIQUE (account_id, jid_id, occupant_id) ON CONFLICT REPLACE);
CREATE TABLE IF NOT EXISTS undecrypted ( message_id INTEGER, type INTEGER, data TEXT);
CREATE TABLE IF NOT EXISTS file_transfer ( id INTEGER PRIMARY KEY AUTOINCREMENT, file_sharing_id TEXT, account_id INTEGER NOT NULL, counterpart_id INTEGER NOT NULL, counterpart_resource TEXT, our_resource TEXT, direction INTEGER NOT NULL, time INTEGER, local_time INTEGER, encryption INTEGER, file_name TEXT, path TEXT, mime_type TEXT, size INTEGER, state INTEGER, provider INTEGER, info TEXT, modification_date INTEGER DEFAULT -1, width INTEGER DEFAULT -1, height INTEGER DEFAULT -1, length INTEGER DEFAULT -1);
CREATE TABLE IF NOT EXISTS call ( id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL, counterpart_id INTEGER NOT NULL, counterpart_resource TEXT, our_resource TEXT, direction INTEGER NOT NULL, time INTEGER NOT NULL, local_time INTEGER NOT NULL, end_time INTEGER, encryption INTEGER, state INTEGER);
CREATE TABLE IF NOT EXISTS conversation ( id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL, jid_id INTEGER NOT NULL, resource TEXT, active INTEGER, active_last_changed INTEGER NOT NULL DEFAULT 0, last_active INTEGER, type INTEGER, encryption INTEGER, read_up_to INTEGER, read_up_to_item INTEGER NOT NULL DEFAULT -1, notification INTEGER, send_typing INTEGER, send_marker INTEGER, pinned INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS reaction ( id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER NOT NULL, occupant_id INTEGER, content_item_id INTEGER NOT NULL, time INTEGER NOT NULL, jid_id INTEGER, emojis TEXT, UNIQUE (account_id, content_item_id, jid_id) ON CONFLICT REPLACE, UNIQUE (account_id, content_item_id, occupant_id) ON CONFLICT REPLACE);
CREATE TABLE IF NOT EXISTS roster ( account_id INTEGER, jid TEXT, name TEXT, subscription TEXT, ask TEXT, UNIQUE (account_id, jid) ON CONFLICT IGNORE);
CREATE TABLE IF NOT EXISTS settings ( id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, value TEXT);
INSERT INTO _meta (name, int_val) VALUES ('version', 29);
