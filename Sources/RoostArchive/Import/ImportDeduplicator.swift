/// The dedup the writer does not do by itself, checked against the archive as it was before the import:
/// presence changes (a plain log) and contact fields (upserts that must not roll back newer data).
/// A presence line is skipped while the archive already held as many identical rows as the file has had so
/// far, so re-importing a file adds nothing and a file with repeated identical rows still round-trips.
final class ImportDeduplicator {
    private let reader: ArchiveReader
    private let lastPresenceRowBefore: Int64
    private var seen: [String: Int] = [:]

    init(reader: ArchiveReader) throws(ArchiveError) {
        self.reader = reader
        lastPresenceRowBefore = try reader.withDatabase { database throws(SQLiteError) -> Int64 in
            try database.cached("SELECT coalesce(max(id), 0) FROM presence_log").scalarInt() ?? 0
        }
    }

    func isDuplicate(_ record: PresenceRecord) throws(ArchiveError) -> Bool {
        guard lastPresenceRowBefore > 0 else { return false }
        let existing = try reader.withDatabase { database throws(SQLiteError) -> Int64 in
            try database.cached("""
                SELECT count(*) FROM presence_log p JOIN accounts a ON a.id = p.account_id
                WHERE p.id <= ? AND a.jid = ? AND p.contact = ? AND p.timestamp = ? AND p.type = ?
                  AND p.resource IS ? AND p.show IS ? AND p.status IS ? AND p.priority IS ?
                """).scalarInt([
                    .integer(lastPresenceRowBefore), .text(record.account), .text(record.contact), .integer(record.timestamp),
                    .text(record.availability.rawValue), SQLValue(record.resource), SQLValue(record.show),
                    SQLValue(record.status), SQLValue(record.priority),
                ]) ?? 0
        }
        guard existing > 0 else { return false }
        let key = [record.account.lowercased(), record.contact.lowercased(), record.resource ?? "\u{1}", record.availability.rawValue,
                   record.show ?? "\u{1}", record.status ?? "\u{1}", record.priority.map(String.init) ?? "\u{1}",
                   String(record.timestamp)].joined(separator: "\u{0}")
        let count = seen[key, default: 0] + 1
        seen[key] = count
        return count <= existing
    }

    /// Whether the archive already has this friend request or answer (same account, JID, direction, kind and time).
    func isDuplicate(_ record: SubscriptionRecord) throws(ArchiveError) -> Bool {
        try reader.withDatabase { database throws(SQLiteError) -> Bool in
            try database.cached("""
                SELECT 1 FROM subscription_requests s JOIN accounts a ON a.id = s.account_id
                WHERE a.jid = ? AND s.jid = ? AND s.direction = ? AND s.kind = ? AND s.created_at = ?
                """).scalarInt([.text(record.account), .text(record.jid), .text(record.direction.rawValue), .text(record.kind.rawValue),
                                .integer(record.timestamp)]) != nil
        }
    }

    /// Whether the archive already has roster (or vCard) data at least as new as the file's.
    func hasNewer(account: String, jid: String, rosterUpdatedAt: Int64?, vCardFetchedAt: Int64?) throws(ArchiveError) -> (roster: Bool, vCard: Bool) {
        try reader.withDatabase { database throws(SQLiteError) -> (Bool, Bool) in
            var result = (false, false)
            try database.cached("""
                SELECT c.roster_updated_at, c.vcard_fetched_at FROM contacts c JOIN accounts a ON a.id = c.account_id
                WHERE a.jid = ? AND c.jid = ?
                """).forEachRow([.text(account), .text(jid)]) { row in
                if let stored = row.optionalInt(0), let imported = rosterUpdatedAt { result.0 = stored > imported }
                if let stored = row.optionalInt(1), let imported = vCardFetchedAt { result.1 = stored > imported }
                return false
            }
            return result
        }
    }
}
