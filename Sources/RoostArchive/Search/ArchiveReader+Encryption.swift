/// Lookups the OMEMO layer needs: "is this message archived already?" before decrypting it, and the rows
/// still waiting to be decrypted.
extension ArchiveReader {
    /// Whether a message with this trusted stanza-id, or this origin-id in this conversation and direction
    /// (the archive's dedup rules, see `SchemaV1`), is stored for `account`.
    public func containsMessage(account: String, conversation: String, direction: MessageDirection, trustedStanzaID: String?,
                                originID: String?) throws(ArchiveError) -> Bool {
        var found = false
        try withDatabase { database throws(SQLiteError) in
            guard let accountID = try database.cached("SELECT id FROM accounts WHERE jid = ?").scalarInt([.text(account)]) else { return }
            if let trustedStanzaID {
                found = try database.cached("SELECT 1 FROM messages WHERE account_id = ? AND stanza_id = ? AND stanza_id_trusted = 1")
                    .scalarInt([.integer(accountID), .text(trustedStanzaID)]) != nil
            }
            if !found, let originID, !originID.isEmpty {
                let probe = MessageRecord(account: account, conversation: conversation, direction: direction, from: "", to: "",
                                          body: nil, timestamp: 0, originId: originID)
                found = try database.cached(DedupKey.lookupSQL())
                    .scalarInt([.integer(accountID), .text(DedupKey.make(for: probe)), .text(originID)]) != nil
            }
        }
        return found
    }

    /// A message stored as undecryptable: its id and the stanza as received.
    public struct UndecryptableMessage: Sendable {
        public var id: Int64
        public var conversation: String
        public var direction: MessageDirection
        public var rawStanza: String
        /// A room message's sender's real bare JID, where the room showed it.
        public var realJid: String?
    }

    /// The account's messages that could not be decrypted, oldest first.
    public func undecryptableMessages(account: String, limit: Int = 10_000) throws(ArchiveError) -> [UndecryptableMessage] {
        var rows: [UndecryptableMessage] = []
        try withDatabase { database throws(SQLiteError) in
            try database.cached("""
                SELECT m.id, m.conversation, m.direction, roost_stanza(m.raw), m.real_jid FROM messages m JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ? AND m.e2e_failure IS NOT NULL AND m.raw IS NOT NULL ORDER BY m.id LIMIT ?
                """).forEachRow([.text(account), .integer(Int64(limit))]) { row in
                rows.append(UndecryptableMessage(id: row.int(0), conversation: row.text(1),
                                                 direction: MessageDirection(rawValue: row.text(2)) ?? .incoming, rawStanza: row.text(3),
                                                 realJid: row.optionalText(4)))
                return true
            }
        }
        return rows
    }
}

extension ArchiveReader {
    /// How the newest message of a conversation was encrypted: nil when there is no message, `.some(nil)` when
    /// it was plaintext. `roost send` keeps an encrypted conversation encrypted.
    public func lastMessageEncryption(account: String, conversation: String) throws(ArchiveError) -> MessageEncryption?? {
        var result: MessageEncryption??
        try withDatabase { database throws(SQLiteError) in
            try database.cached("""
                SELECT \(MessageRowReading.encryptionColumns) FROM messages m JOIN accounts a ON a.id = m.account_id
                WHERE a.jid = ? AND m.conversation = ? ORDER BY m.id DESC LIMIT 1
                """).forEachRow([.text(account), .text(conversation)]) { row in
                result = .some(MessageRowReading.encryption(row, at: 0))
                return false
            }
        }
        return result
    }
}
