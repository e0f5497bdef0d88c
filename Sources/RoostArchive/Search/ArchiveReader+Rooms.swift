/// Group chats as the archive knows them: rooms, occupants, invitations (see `SchemaV6`).
extension ArchiveReader {
    /// Every room of the account (all accounts when nil), by JID.
    public func rooms(account: String?) throws(ArchiveError) -> [RoomRow] {
        let sql = """
            SELECT a.jid, r.jid, coalesce(r.name, r.disco_name), r.nick, r.bookmarked, r.bookmark_nick, r.autojoin, r.joined_by_user, r.password_source,
                r.password_command, r.joined, r.joined_at, r.last_error, r.mam, r.non_anonymous, r.occupant_id, r.subject,
                r.catch_up_id, r.catch_up_timestamp,
                (SELECT count(*) FROM room_occupants o WHERE o.account_id = r.account_id AND o.room = r.jid),
                (SELECT count(*) FROM messages m WHERE m.account_id = r.account_id AND m.conversation = r.jid),
                (SELECT max(m.timestamp) FROM messages m WHERE m.account_id = r.account_id AND m.conversation = r.jid)
            FROM rooms r JOIN accounts a ON a.id = r.account_id
            WHERE ?1 IS NULL OR a.jid = ?1
            ORDER BY a.jid, r.jid
            """
        var rows: [RoomRow] = []
        try withDatabase { database throws(SQLiteError) in
            try database.prepare(sql).forEachRow([SQLValue(account)]) { row in
                rows.append(RoomRow(account: row.text(0), jid: row.text(1), name: row.optionalText(2), nick: row.optionalText(3),
                                    bookmarked: row.bool(4), bookmarkNick: row.optionalText(5), autojoin: row.bool(6),
                                    joinedByUser: row.bool(7), passwordSource: row.optionalText(8), passwordCommand: row.optionalText(9),
                                    joined: row.bool(10), joinedAt: row.optionalInt(11), lastError: row.optionalText(12),
                                    mam: row.optionalInt(13).map { $0 != 0 }, nonAnonymous: row.optionalInt(14).map { $0 != 0 },
                                    occupantId: row.optionalText(15), subject: row.optionalText(16), catchUpId: row.optionalText(17),
                                    catchUpTimestamp: row.optionalInt(18), occupants: Int(row.int(19)), messages: Int(row.int(20)),
                                    lastActivity: row.optionalInt(21)))
                return true
            }
        }
        return rows
    }

    /// Invitations of the account, newest first; only pending ones unless `all`.
    public func invitations(account: String?, all: Bool = false) throws(ArchiveError) -> [InvitationRow] {
        let sql = """
            SELECT a.jid, i.room, i.inviter, i.kind, i.reason, i.password IS NOT NULL, i.from_contact, i.status, i.created_at, i.updated_at
            FROM room_invitations i JOIN accounts a ON a.id = i.account_id
            WHERE (?1 IS NULL OR a.jid = ?1) AND (?2 OR i.status = 'pending')
            ORDER BY i.updated_at DESC, i.id DESC
            """
        var rows: [InvitationRow] = []
        try withDatabase { database throws(SQLiteError) in
            try database.prepare(sql).forEachRow([SQLValue(account), SQLValue(all)]) { row in
                rows.append(InvitationRow(account: row.text(0), room: row.text(1), inviter: row.optionalText(2),
                                          kind: InvitationRecord.Kind(rawValue: row.text(3)) ?? .direct, reason: row.optionalText(4),
                                          hasPassword: row.bool(5), fromContact: row.bool(6),
                                          status: InvitationStatus(rawValue: row.text(7)) ?? .pending, createdAt: row.int(8),
                                          updatedAt: row.int(9)))
                return true
            }
        }
        return rows
    }

    /// The password a pending invitation to `room` carried (used once, to join from the invitation).
    public func invitationPassword(account: String, room: String) throws(ArchiveError) -> String? {
        var password: String?
        try withDatabase { database throws(SQLiteError) in
            try database.prepare("""
                SELECT i.password FROM room_invitations i JOIN accounts a ON a.id = i.account_id
                WHERE a.jid = ? AND i.room = ? AND i.status = 'pending' AND i.password IS NOT NULL ORDER BY i.id DESC LIMIT 1
                """).forEachRow([.text(account), .text(room)]) { row in
                password = row.optionalText(0)
                return false
            }
        }
        return password
    }

    /// Who is in the room, as the agent last saw it.
    public func occupants(account: String, room: String) throws(ArchiveError) -> [OccupantRow] {
        var rows: [OccupantRow] = []
        try withDatabase { database throws(SQLiteError) in
            try database.prepare("""
                SELECT o.nick, o.occupant_id, o.real_jid, o.role, o.affiliation, o.show, o.status, o.since
                FROM room_occupants o JOIN accounts a ON a.id = o.account_id WHERE a.jid = ? AND o.room = ? ORDER BY o.nick
                """).forEachRow([.text(account), .text(room)]) { row in
                rows.append(OccupantRow(nick: row.text(0), occupantId: row.optionalText(1), realJid: row.optionalText(2),
                                        role: row.optionalText(3), affiliation: row.optionalText(4), show: row.optionalText(5),
                                        status: row.optionalText(6), since: row.int(7)))
                return true
            }
        }
        return rows
    }
}

extension ArchiveReader {
    /// The newest message time of a conversation (a room), UTC milliseconds.
    public func newestMessageTime(account: String, conversation: String) throws(ArchiveError) -> Int64? {
        var newest: Int64?
        try withDatabase { database throws(SQLiteError) in
            try database.prepare("""
                SELECT max(m.timestamp) FROM messages m JOIN accounts a ON a.id = m.account_id WHERE a.jid = ? AND m.conversation = ?
                """).forEachRow([.text(account), .text(conversation)]) { row in
                newest = row.optionalInt(0)
                return false
            }
        }
        return newest
    }
}
