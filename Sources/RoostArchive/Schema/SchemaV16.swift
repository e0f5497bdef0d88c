/// Schema version 16: the outbox (issue 30, 8). A message `roost send` gives the agent while its account is not
/// online is archived at once as an outgoing message, `delivery = 'pending'` (`SchemaV2`), and listed here: written
/// to no stream yet. When the account is online again the agent sends the outbox in order (`id`), each entry
/// removed (committed) just before its message is written to the stream; from then on it is an ordinary pending
/// message, settled by the server's acknowledgement or its archive copy, and sent again at most once when neither
/// came (`AccountSession.settleUnconfirmedSends`) — the exactly-once rules of every outgoing message.
/// The agent keeps at most 1000 entries per account.
enum SchemaV16 {
    static let sql = """
    CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        origin_id TEXT NOT NULL,
        queued_at INTEGER NOT NULL,
        UNIQUE (account_id, origin_id)
    );
    """
}
