/// Schema version 3: end-to-end encryption (OMEMO) of messages.
///
/// `encryption` is `omemo` for a message that arrived encrypted (NULL for plaintext). A decrypted message has
/// its plaintext in `body` (indexed like any other), the sender's device id, identity fingerprint and trust at
/// the time. A message that could not be decrypted has a NULL body, the reason in `e2e_failure`, and its
/// encrypted payload in `raw`; `roost omemo retry` revisits those rows (partial index below).
enum SchemaV3 {
    static let sql = """
    ALTER TABLE messages ADD COLUMN encryption TEXT;
    ALTER TABLE messages ADD COLUMN e2e_namespace TEXT;
    ALTER TABLE messages ADD COLUMN e2e_device INTEGER;
    ALTER TABLE messages ADD COLUMN e2e_fingerprint TEXT;
    ALTER TABLE messages ADD COLUMN e2e_trust TEXT;
    ALTER TABLE messages ADD COLUMN e2e_failure TEXT;
    CREATE INDEX messages_undecryptable ON messages(account_id, id) WHERE e2e_failure IS NOT NULL;
    """
}
