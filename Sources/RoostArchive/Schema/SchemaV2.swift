/// Schema version 2: the delivery state of outgoing messages.
///
/// # Delivery
/// `messages.delivery` is NULL for incoming messages and for outgoing ones learnt from elsewhere (carbons,
/// the server archive, imports, archives from before version 2): the server had them. A message Roost
/// sends itself is stored `pending` before it is written to the stream, becomes `sent` when the server
/// acknowledges it (XEP-0198) or when its copy comes back from the server archive (same origin-id), and
/// `failed` when the session it went out on ended unacknowledged and the server archive does not have it
/// either (Roost then sends it again once; see docs/zero-loss.md).
enum SchemaV2 {
    static let sql = """
    ALTER TABLE messages ADD COLUMN delivery TEXT CHECK (delivery IN ('pending', 'sent', 'failed'));
    CREATE INDEX messages_delivery ON messages(account_id, delivery) WHERE delivery IN ('pending', 'failed');
    CREATE INDEX messages_origin ON messages(account_id, origin_id) WHERE origin_id IS NOT NULL;
    """
}
