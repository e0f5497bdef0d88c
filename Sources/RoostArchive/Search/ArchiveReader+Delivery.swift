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
            try database.cached("""
                SELECT m.id, m.origin_id, m.to_jid, roost_stanza(m.raw), m.delivery, m.timestamp FROM messages m JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ? AND m.delivery IN ('pending', 'failed') AND m.origin_id IS NOT NULL ORDER BY m.id
                """).forEachRow([.text(account)]) { row in
                rows.append(UnconfirmedMessage(id: row.int(0), originId: row.text(1), to: row.text(2), rawStanza: row.optionalText(3),
                                               delivery: DeliveryState(rawValue: row.text(4)) ?? .pending, timestamp: row.int(5)))
                return true
            }
            return rows
        }
    }
}
