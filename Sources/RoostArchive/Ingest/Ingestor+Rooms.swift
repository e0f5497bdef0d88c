/// Group chat events (see `SchemaV6`): rooms, the occupant list and its timeline, invitations.
extension Ingestor {
    /// The room row, created on first mention.
    private func roomRow(account: Int64, room: String, now: Int64) throws(SQLiteError) {
        try database.cached("INSERT INTO rooms (account_id, jid, updated_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            .run([.integer(account), .text(room), .integer(now)])
    }

    func apply(_ update: RoomUpdate) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(update.account, now: update.timestamp)
        try roomRow(account: account, room: update.room, now: update.timestamp)
        let key: [SQLValue] = [.integer(account), .text(update.room), .integer(update.timestamp)]
        func set(_ assignments: String, _ values: [SQLValue] = []) throws(SQLiteError) {
            try database.run("UPDATE rooms SET \(assignments), updated_at = ?3 WHERE account_id = ?1 AND jid = ?2", key + values)
        }
        switch update.change {
        case .bookmark(let present, let name, let nick, let autojoin, let hasPassword):
            if present {
                try set("bookmarked = 1, name = ?4, bookmark_nick = ?5, autojoin = ?6, password_source = CASE WHEN ?7 THEN 'bookmark' "
                        + "WHEN password_source = 'bookmark' THEN NULL ELSE password_source END",
                        [SQLValue(name), SQLValue(nick), SQLValue(autojoin), SQLValue(hasPassword)])
            } else {
                try set("bookmarked = 0, autojoin = 0, password_source = CASE WHEN password_source = 'bookmark' THEN NULL ELSE password_source END")
            }
        case .joinedByUser(let command):
            try set("joined_by_user = 1, password_command = ?4, password_source = CASE WHEN ?4 IS NOT NULL THEN 'command' "
                    + "WHEN password_source = 'command' THEN NULL ELSE password_source END", [SQLValue(command)])
        case .leftByUser:
            try set("joined_by_user = 0, password_command = NULL, password_source = CASE WHEN password_source = 'command' THEN NULL "
                    + "ELSE password_source END")
        case .joining(let nick, let source):
            try set("nick = ?4, password_source = coalesce(?5, password_source)", [.text(nick), SQLValue(source)])
            try database.cached("DELETE FROM room_occupants WHERE account_id = ? AND room = ?").run([.integer(account), .text(update.room)])
        case .joined(let nick, let occupantID, let mam, let nonAnonymous, let discoName):
            try set("joined = 1, joined_at = ?3, nick = ?4, occupant_id = ?5, mam = ?6, non_anonymous = ?7, last_error = NULL, "
                    + "disco_name = coalesce(?8, disco_name)",
                    [.text(nick), SQLValue(occupantID), SQLValue(mam), SQLValue(nonAnonymous), SQLValue(discoName)])
        case .left(let error):
            try set("joined = 0, left_at = ?3, last_error = ?4", [SQLValue(error)])
            try database.cached("DELETE FROM room_occupants WHERE account_id = ? AND room = ?").run([.integer(account), .text(update.room)])
        case .joinFailed(let error):
            try set("joined = 0, last_error = ?4", [.text(error)])
        case .subject(let subject, let by):
            try set("subject = ?4, subject_by = ?5, subject_at = ?3", [SQLValue(subject), SQLValue(by)])
        case .mark(let id, let timestamp):
            try set("catch_up_id = ?4, catch_up_timestamp = max(coalesce(catch_up_timestamp, ?5), coalesce(?5, catch_up_timestamp))",
                    [.text(id), SQLValue(timestamp)])
        }
        return .stored
    }

    /// Keeps the occupant list and writes the timeline event the presence means, if any.
    func insert(_ record: RoomPresenceRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.timestamp)
        var previous: (role: String?, affiliation: String?)?
        try database.cached("SELECT role, affiliation FROM room_occupants WHERE account_id = ? AND room = ? AND nick = ?")
            .forEachRow([.integer(account), .text(record.room), .text(record.nick)]) { row in
                previous = (row.optionalText(0), row.optionalText(1))
                return false
            }
        var events: [RoomEvent] = []
        if record.available {
            try database.cached("""
                INSERT INTO room_occupants (account_id, room, nick, occupant_id, real_jid, role, affiliation, show, status, since)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                ON CONFLICT (account_id, room, nick) DO UPDATE SET occupant_id = coalesce(?4, occupant_id), real_jid = coalesce(?5, real_jid),
                    role = ?6, affiliation = ?7, show = ?8, status = ?9
                """).run([.integer(account), .text(record.room), .text(record.nick), SQLValue(record.occupantId), SQLValue(record.realJid),
                          SQLValue(record.role), SQLValue(record.affiliation), SQLValue(record.show), SQLValue(record.status),
                          .integer(record.timestamp)])
            if let previous {
                if previous.affiliation != record.affiliation { events.append(.affiliation) }
                if previous.role != record.role { events.append(.role) }
            } else if !record.initial {
                events.append(.join)
            }
        } else {
            try database.cached("DELETE FROM room_occupants WHERE account_id = ? AND room = ? AND nick = ?")
                .run([.integer(account), .text(record.room), .text(record.nick)])
            let codes = Set(record.statusCodes)
            if codes.contains(303), let newNick = record.newNick {
                // The same occupant under its next nick: its presence under that nick follows, and is no join.
                try database.cached("""
                    INSERT INTO room_occupants (account_id, room, nick, occupant_id, real_jid, role, affiliation, since)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                    """).run([.integer(account), .text(record.room), .text(newNick), SQLValue(record.occupantId), SQLValue(record.realJid),
                              SQLValue(previous?.role ?? record.role), SQLValue(previous?.affiliation ?? record.affiliation),
                              .integer(record.timestamp)])
                events.append(.nick)
            } else if codes.contains(301) {
                events.append(.ban)
            } else if codes.contains(307) {
                events.append(.kick)
            } else if record.destroyed {
                events.append(.destroyed)
            } else {
                events.append(.leave)
            }
        }
        let statement = try database.cached("""
            INSERT INTO presence_log (account_id, contact, resource, type, show, status, timestamp, room_event, occupant_id, real_jid,
                role, affiliation, new_nick, reason)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for event in events {
            try statement.run([.integer(account), .text(record.room), .text(record.nick), .text(record.available ? "available" : "unavailable"),
                               SQLValue(record.show), SQLValue(record.status), .integer(record.timestamp), .text(event.rawValue),
                               SQLValue(record.occupantId), SQLValue(record.realJid), SQLValue(record.role), SQLValue(record.affiliation),
                               SQLValue(event == .nick ? record.newNick : nil), SQLValue(record.reason)])
        }
        return .stored
    }

    /// A new invitation is `.stored`; the same room and inviter again while pending refreshes it (`.duplicate`).
    func insert(_ record: InvitationRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.timestamp)
        let inviterBare = record.inviter.map(JIDText.bare)
        if let messageId = record.messageId, try database.cached("""
            SELECT 1 FROM room_invitations WHERE account_id = ? AND room = ? AND message_id = ? AND coalesce(inviter_bare, '') = coalesce(?, '')
            """).scalarInt([.integer(account), .text(record.room), .text(messageId), SQLValue(inviterBare)]) != nil {
            return .duplicate(existingId: nil)
        }
        try database.cached("""
            UPDATE room_invitations SET reason = ?4, password = coalesce(?5, password), updated_at = ?6, kind = ?7,
                from_contact = max(from_contact, ?8), message_id = coalesce(?9, message_id)
            WHERE account_id = ?1 AND room = ?2 AND coalesce(inviter_bare, '') = coalesce(?3, '') AND status = 'pending'
            """).run([.integer(account), .text(record.room), SQLValue(inviterBare), SQLValue(record.reason), SQLValue(record.password),
                      .integer(record.timestamp), .text(record.kind.rawValue), SQLValue(record.fromContact), SQLValue(record.messageId)])
        if database.changes > 0 { return .duplicate(existingId: nil) }
        try database.cached("""
            INSERT INTO room_invitations (account_id, room, inviter, inviter_bare, kind, reason, password, from_contact, status,
                message_id, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)
            """).run([.integer(account), .text(record.room), SQLValue(record.inviter), SQLValue(inviterBare), .text(record.kind.rawValue),
                      SQLValue(record.reason), SQLValue(record.password), SQLValue(record.fromContact), SQLValue(record.messageId),
                      .integer(record.timestamp), .integer(record.timestamp)])
        return .stored
    }

    func answerInvitations(account jid: String, room: String, status: InvitationStatus, timestamp: Int64) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(jid, now: timestamp)
        try database.cached("UPDATE room_invitations SET status = ?, updated_at = ? WHERE account_id = ? AND room = ? AND status = 'pending'")
            .run([.text(status.rawValue), .integer(timestamp), .integer(account), .text(room)])
        return .stored
    }

    /// A live group chat message's sender's real JID: from the stanza when the room put it there, else from the
    /// occupant list (by occupant id, else nick). Archive results are not looked up: the nick may be someone else's now.
    func realJID(of record: MessageRecord, account: Int64) throws(SQLiteError) -> String? {
        if let realJid = record.realJid { return realJid }
        guard record.kind == .groupchat, record.source == .live, let slash = record.from.firstIndex(of: "/") else { return nil }
        let nick = String(record.from[record.from.index(after: slash)...])
        var found: String?
        try database.cached("""
            SELECT real_jid FROM room_occupants WHERE account_id = ?1 AND room = ?2
                AND (occupant_id = ?3 OR (?3 IS NULL AND nick = ?4)) AND real_jid IS NOT NULL LIMIT 1
            """).forEachRow([.integer(account), .text(record.conversation), SQLValue(record.occupantId), .text(nick)]) { row in
                found = row.optionalText(0)
                return false
            }
        return found
    }
}
