-- Profanity chatlog.db, database version 3 (Profanity 0.18 and later, up to the development branch of July 2026):
-- log_database_init() and _migrate_to_v3() in src/database.c (commit 615ae65a6 of profanity-im/profanity). Version 2
-- (Profanity 0.15 – 0.17) is the same without UNIQUE on archive_id.
CREATE TABLE IF NOT EXISTS `ChatLogs` (`id` INTEGER PRIMARY KEY AUTOINCREMENT, `from_jid` TEXT NOT NULL, `to_jid` TEXT NOT NULL, `from_resource` TEXT, `to_resource` TEXT, `message` TEXT, `timestamp` TEXT, `type` TEXT, `stanza_id` TEXT, `archive_id` TEXT UNIQUE, `encryption` TEXT, `marked_read` INTEGER, `replace_id` TEXT, `replaces_db_id` INTEGER, `replaced_by_db_id` INTEGER);
CREATE TRIGGER IF NOT EXISTS update_corrected_message AFTER INSERT ON ChatLogs FOR EACH ROW WHEN NEW.replaces_db_id IS NOT NULL BEGIN UPDATE ChatLogs SET replaced_by_db_id = NEW.id WHERE id = NEW.replaces_db_id; END;
CREATE INDEX IF NOT EXISTS ChatLogs_timestamp_IDX ON `ChatLogs` (`timestamp`);
CREATE INDEX IF NOT EXISTS ChatLogs_to_from_jid_IDX ON `ChatLogs` (`to_jid`, `from_jid`);
CREATE TABLE IF NOT EXISTS `DbVersion` (`dv_id` INTEGER PRIMARY KEY, `version` INTEGER UNIQUE);
INSERT INTO `DbVersion` (`version`) VALUES (3) ON CONFLICT(`version`) DO NOTHING;
