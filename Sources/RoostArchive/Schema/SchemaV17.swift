/// Schema version 17: what `roost forget` removed (issue 34, 3). A forgotten message leaves no text behind, only its
/// tombstones here: one per id that could bring it back — `s|by|stanza-id` for a trusted stanza-id (lowercased
/// `by`: the account's archive or the room's), and the origin-id key (`o|conversation|direction|origin-id`, as
/// `DedupKey` makes it) — for the message and each of its earlier versions. The ingest path refuses a message whose
/// key is here (`Ingestor.isForgotten`): a catch-up that re-reads the server archive, a resend after a stream
/// resumption or a carbon does not archive it again. Keys that hash the text (`m|`, `t|`) are not kept: they would
/// let a guess of the forgotten text be confirmed. See docs/forget.md.
enum SchemaV17 {
    static let sql = """
    CREATE TABLE forgotten_messages (
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        forgotten_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, key)
    ) WITHOUT ROWID;
    """
}
