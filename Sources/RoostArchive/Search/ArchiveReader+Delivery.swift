/// Outgoing messages whose delivery the server has not confirmed (see `SchemaV2`).
extension ArchiveReader {
    public struct UnconfirmedMessage: Sendable, Equatable {
        public var id: Int64
        public var originId: String
        public var to: String
        public var rawStanza: String?
        public var delivery: DeliveryState
        public var timestamp: Int64
    }

    /// The account's outgoing messages that are `pending` or `failed`, oldest first.
    public func unconfirmedMessages(account: String) throws(ArchiveError) -> [UnconfirmedMessage] {
        try withDatabase { database throws(SQLiteError) -> [UnconfirmedMessage] in
            var rows: [UnconfirmedMessage] = []
            // Not those still in the outbox: never sent, they are the outbox's to send (`outbox(account:)`).
            try database.cached("""
                SELECT m.id, m.origin_id, m.to_jid, roost_stanza(m.raw), m.delivery, m.timestamp FROM messages m JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ? AND m.delivery IN ('pending', 'failed') AND m.origin_id IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.account_id = m.account_id AND o.origin_id = m.origin_id)
                ORDER BY m.id
                """).forEachRow([.text(account)]) { row in
                rows.append(UnconfirmedMessage(id: row.int(0), originId: row.text(1), to: row.text(2), rawStanza: row.optionalText(3),
                                               delivery: DeliveryState(rawValue: row.text(4)) ?? .pending, timestamp: row.int(5)))
                return true
            }
            return rows
        }
    }

    /// The account's outbox (`SchemaV16`), oldest first: messages archived while it was offline, not sent yet.
    public func outbox(account: String) throws(ArchiveError) -> [UnconfirmedMessage] {
        try withDatabase { database throws(SQLiteError) -> [UnconfirmedMessage] in
            var rows: [UnconfirmedMessage] = []
            try database.cached("""
                SELECT m.id, m.origin_id, m.to_jid, roost_stanza(m.raw), m.delivery, m.timestamp
                FROM outbox o JOIN accounts a ON a.id = o.account_id
                JOIN messages m ON m.account_id = o.account_id AND m.origin_id = o.origin_id AND m.direction = 'out'
                WHERE a.jid = ? ORDER BY o.id
                """).forEachRow([.text(account)]) { row in
                rows.append(UnconfirmedMessage(id: row.int(0), originId: row.text(1), to: row.text(2), rawStanza: row.optionalText(3),
                                               delivery: DeliveryState(rawValue: row.text(4)) ?? .pending, timestamp: row.int(5)))
                return true
            }
            return rows
        }
    }

    /// How many messages wait in the account's outbox.
    public func outboxCount(account: String) throws(ArchiveError) -> Int {
        try withDatabase { database throws(SQLiteError) -> Int in
            Int(try database.cached("SELECT count(*) FROM outbox o JOIN accounts a ON a.id = o.account_id WHERE a.jid = ?")
                .scalarInt([.text(account)]) ?? 0)
        }
    }
}
