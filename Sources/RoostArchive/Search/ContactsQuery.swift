import Foundation

/// Reads contacts, subscription requests and the presence log (for `roost roster`, `requests`, `vcard`,
/// `presence`). Every function takes the account's bare JID; JIDs compare case-insensitively (COLLATE NOCASE).
enum ContactsQuery {
    private static let contactColumns = """
        a.jid, c.jid, c.in_roster, c.name, c.groups, c.subscription, c.ask, c.roster_updated_at,
        c.nickname, c.fullname, c.photo_hash, c.photo_path, c.vcard_raw, c.vcard_fetched_at
        """

    static func contacts(_ database: Database, account: String, rosterOnly: Bool) throws(SQLiteError) -> [ContactRow] {
        var rows: [ContactRow] = []
        try database.prepare("""
            SELECT \(contactColumns) FROM contacts c JOIN accounts a ON a.id = c.account_id
            WHERE a.jid = ? \(rosterOnly ? "AND c.in_roster = 1" : "") ORDER BY c.jid
            """).forEachRow([.text(account)]) { row in
            rows.append(contact(row))
            return true
        }
        return rows
    }

    static func contact(_ database: Database, account: String, jid: String) throws(SQLiteError) -> ContactRow? {
        var found: ContactRow?
        try database.prepare("""
            SELECT \(contactColumns) FROM contacts c JOIN accounts a ON a.id = c.account_id WHERE a.jid = ? AND c.jid = ?
            """).forEachRow([.text(account), .text(jid)]) { row in
            found = contact(row)
            return false
        }
        return found
    }

    private static func contact(_ row: Statement.Row) -> ContactRow {
        let groupsJSON = row.optionalText(4) ?? "[]"
        let groups = (try? JSONDecoder().decode([String].self, from: Data(groupsJSON.utf8))) ?? []
        return ContactRow(account: row.text(0), jid: row.text(1), inRoster: row.bool(2), name: row.optionalText(3), groups: groups,
                          subscription: row.optionalText(5), ask: row.optionalText(6), rosterUpdatedAt: row.optionalInt(7),
                          nickname: row.optionalText(8), fullName: row.optionalText(9), photoHash: row.optionalText(10),
                          photoPath: row.optionalText(11), vCardRaw: row.optionalText(12), vCardFetchedAt: row.optionalInt(13))
    }

    /// Subscription events, newest first; `pendingIncomingOnly` keeps the unanswered requests others sent.
    static func subscriptionEvents(_ database: Database, account: String, pendingIncomingOnly: Bool) throws(SQLiteError) -> [SubscriptionRequestRow] {
        var rows: [SubscriptionRequestRow] = []
        let filter = pendingIncomingOnly ? "AND s.direction = 'in' AND s.kind = 'subscribe' AND s.status = 'pending'" : ""
        try database.prepare("""
            SELECT a.jid, s.jid, s.direction, s.kind, s.status, s.message, s.created_at, s.updated_at
            FROM subscription_requests s JOIN accounts a ON a.id = s.account_id
            WHERE a.jid = ? \(filter) ORDER BY s.created_at DESC, s.id DESC
            """).forEachRow([.text(account)]) { row in
            rows.append(SubscriptionRequestRow(
                account: row.text(0), jid: row.text(1), direction: MessageDirection(rawValue: row.text(2)) ?? .incoming,
                kind: SubscriptionRecord.Kind(rawValue: row.text(3)) ?? .subscribe,
                status: row.optionalText(4).flatMap(SubscriptionStatus.init(rawValue:)), message: row.optionalText(5),
                createdAt: row.int(6), updatedAt: row.int(7)))
            return true
        }
        if pendingIncomingOnly {
            // A contact who asked twice is one request (the server repeats a pending request at every login):
            // shown once, dated when it first arrived, with the newest text sent with it.
            var merged: [String: SubscriptionRequestRow] = [:]
            var order: [String] = []
            for row in rows {
                let key = row.jid.lowercased()
                guard var kept = merged[key] else {
                    merged[key] = row
                    order.append(key)
                    continue
                }
                kept.createdAt = min(kept.createdAt, row.createdAt)
                if kept.message == nil { kept.message = row.message }
                merged[key] = kept
            }
            rows = order.compactMap { merged[$0] }.sorted { $0.createdAt > $1.createdAt }
        }
        return rows
    }

    /// The contact's presence changes, newest first (`limit` 0 = all).
    static func presenceHistory(_ database: Database, account: String, contact: String, limit: Int) throws(SQLiteError) -> [PresenceRow] {
        var rows: [PresenceRow] = []
        try database.prepare("""
            SELECT a.jid, p.contact, p.resource, p.type, p.show, p.status, p.priority, p.timestamp
            FROM presence_log p JOIN accounts a ON a.id = p.account_id
            WHERE a.jid = ? AND p.contact = ? ORDER BY p.timestamp DESC, p.id DESC LIMIT ?
            """).forEachRow([.text(account), .text(contact), .integer(limit > 0 ? Int64(limit) : -1)]) { row in
            rows.append(presence(row))
            return true
        }
        return rows
    }

    /// When each contact was last seen: the newest presence in which it was available, or in which it went
    /// offline right after having been seen available. The "offline" a server answers for a contact at each
    /// login, without the contact having been seen, is not a sighting: a contact that never shared its
    /// presence has no "last seen".
    static func lastSeen(_ database: Database, account: String) throws(SQLiteError) -> [String: Int64] {
        var seen: [String: Int64] = [:]
        try database.prepare("""
            SELECT contact, max(timestamp) FROM (
                SELECT p.contact, p.timestamp, p.type,
                       lag(p.type) OVER (PARTITION BY p.contact, p.resource ORDER BY p.timestamp, p.id) AS before
                FROM presence_log p JOIN accounts a ON a.id = p.account_id WHERE a.jid = ?1
            ) WHERE type = 'available' OR before = 'available' GROUP BY contact
            """).forEachRow([.text(account)]) { row in
            seen[row.text(0).lowercased()] = row.int(1)
            return true
        }
        return seen
    }

    /// The newest presence of every resource of every contact of the account.
    static func latestPresence(_ database: Database, account: String) throws(SQLiteError) -> [PresenceRow] {
        var rows: [PresenceRow] = []
        try database.prepare("""
            SELECT a.jid, p.contact, p.resource, p.type, p.show, p.status, p.priority, p.timestamp
            FROM presence_log p JOIN accounts a ON a.id = p.account_id
            WHERE a.jid = ?1 AND p.room_event IS NULL AND p.id = (
                SELECT q.id FROM presence_log q WHERE q.account_id = p.account_id AND q.contact = p.contact
                    AND q.resource IS p.resource AND q.room_event IS NULL ORDER BY q.timestamp DESC, q.id DESC LIMIT 1)
            ORDER BY p.contact, p.timestamp DESC
            """).forEachRow([.text(account)]) { row in
            rows.append(presence(row))
            return true
        }
        return rows
    }

    private static func presence(_ row: Statement.Row) -> PresenceRow {
        PresenceRow(account: row.text(0), contact: row.text(1), resource: row.optionalText(2),
                    availability: PresenceRecord.Availability(rawValue: row.text(3)) ?? .unavailable, show: row.optionalText(4),
                    status: row.optionalText(5), priority: row.optionalInt(6).map { Int($0) }, timestamp: row.int(7))
    }
}
