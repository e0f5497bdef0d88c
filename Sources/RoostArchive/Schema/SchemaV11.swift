/// Schema version 11: two indexes fewer on every message (issue 15, archive size and import cost).
///
/// `messages_message_id (conversation, message_id)` and `messages_origin_id (conversation, origin_id)` (`SchemaV8`)
/// served the lookups by a message's own ids (corrections, reactions, replies, markers). Every such lookup also
/// names the account, and `messages_account_message_id (account_id, conversation, message_id)` (`SchemaV10`) and
/// `messages_origin (account_id, origin_id)` (`SchemaV2`) answer it with one seek each; the queries now name those
/// indexes (`Ingestor.annotationTargetSQL`, `MessageSemantics.columns`). Each of the two held a random key per
/// message: ~8 % of a 20k-message archive, and pages that every import batch dirtied all over the file.
enum SchemaV11 {
    static let sql = """
    DROP INDEX IF EXISTS messages_message_id;
    DROP INDEX IF EXISTS messages_origin_id;
    """
}
