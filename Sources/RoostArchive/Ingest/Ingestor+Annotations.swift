import Foundation

/// Reactions, retractions and moderation, receipts and chat markers, and the read state (see `SchemaV8`).
extension Ingestor {
    struct AnnotationTarget {
        let id: Int64
        let from: String
        let occupantId: String?
    }

    func apply(_ annotation: MessageAnnotation) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(annotation.account, now: annotation.timestamp)
        let target = try annotationTarget(account: account, conversation: annotation.conversation, id: annotation.target,
                                          groupchat: annotation.groupchat)
        switch annotation.kind {
        case .reactions(let emojis):
            return try storeReactions(annotation, emojis: emojis, account: account, target: target)
        case .retraction, .moderation:
            return try storeRetraction(annotation, account: account, target: target)
        case .received, .displayed:
            return try storeMarker(annotation, account: account, target: target)
        }
    }

    /// The messages of account ?1 and conversation ?2 whose message id, origin-id or stanza-id is ?3: three index
    /// seeks, named so that the planner never walks the conversation instead (`SchemaV11`).
    static let annotationTargetSQL = """
        SELECT id, from_jid, occupant_id FROM messages
        WHERE id IN (SELECT id FROM messages INDEXED BY messages_account_message_id
                         WHERE account_id = ?1 AND conversation = ?2 AND message_id = ?3
                     UNION ALL
                     SELECT id FROM messages INDEXED BY messages_origin WHERE account_id = ?1 AND origin_id = ?3 AND conversation = ?2
                     UNION ALL
                     SELECT id FROM messages INDEXED BY messages_stanza_id WHERE conversation = ?2 AND stanza_id = ?3 AND account_id = ?1)
        ORDER BY (?4 AND stanza_id = ?3 AND stanza_id_by = ?2 COLLATE NOCASE) DESC, id DESC LIMIT 1
        """

    /// The newest message of the conversation that the id names; in a room the room's own stanza-id comes first.
    func annotationTarget(account: Int64, conversation: String, id: String, groupchat: Bool) throws(SQLiteError) -> AnnotationTarget? {
        var found: AnnotationTarget?
        var sql = Self.annotationTargetSQL
        var values: [SQLValue] = [.integer(account), .text(conversation), .text(id), SQLValue(groupchat)]
        // During a bulk load (no indexes): a room's own stanza-id first, else the newest of the three.
        var answer: BulkKeys.Answer? = groupchat ? try bulkTarget(account: account, conversation: conversation, id: id, kinds: [.roomStanzaID]) : nil
        if answer == nil || answer == BulkKeys.Answer.none { answer = try bulkTarget(account: account, conversation: conversation, id: id, kinds: [.messageID, .originID, .stanzaID]) }
        switch answer {
        case .none?: return nil
        case .row(let row)?:
            sql = "SELECT id, from_jid, occupant_id FROM messages WHERE id = ?"
            values = [.integer(row)]
        case .unknown?:
            sql = """
                SELECT id, from_jid, occupant_id FROM messages
                WHERE account_id = ?1 AND conversation = ?2 AND (message_id = ?3 OR origin_id = ?3 OR stanza_id = ?3)
                ORDER BY (?4 AND stanza_id = ?3 AND stanza_id_by = ?2 COLLATE NOCASE) DESC, id DESC LIMIT 1
                """
        case nil: break
        }
        try database.cached(sql).forEachRow(values) { row in
            found = AnnotationTarget(id: row.int(0), from: row.text(1), occupantId: row.optionalText(2))
            return false
        }
        return found
    }

    // MARK: Reactions

    private func storeReactions(_ annotation: MessageAnnotation, emojis: [String], account: Int64,
                                target: AnnotationTarget?) throws(SQLiteError) -> InsertOutcome {
        if annotation.source == .import,
           try reactorState(of: annotation, account: account, target: target, upTo: annotation.timestamp + CrossSourceMatch.contentWindow)
            == Set(emojis) {
            return .duplicate(existingId: target?.id)
        }
        let json = (try? JSONEncoder().encode(emojis)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        try database.run("""
            INSERT INTO reactions (account_id, conversation, target, message_row, reactor, reactor_name, direction, emojis, timestamp,
                source, dedup_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """, [.integer(account), .text(annotation.conversation), .text(annotation.target), SQLValue(target?.id),
                  .text(annotation.actor), SQLValue(annotation.senderName), .text(annotation.direction.rawValue), .text(json),
                  .integer(annotation.timestamp), .text(annotation.source.rawValue), .text(annotation.dedupKey)])
        if target == nil { pendingAnnotationsExist = true }
        return database.changes == 0 ? .duplicate(existingId: target?.id) : .stored
    }

    /// The reactor's set on the target as the archive knows it at `time` (its newest update until then; empty when
    /// none). Another client's history keeps only a reactor's last set, without the stanza's id, stamped with that
    /// client's clock: it adds nothing when the archive already shows that set at that time (received live, from
    /// the server archive, or imported before), whatever its own stamp within the window; a set that differs is
    /// an update the archive missed, and the newest update of a reactor is the current one (XEP-0444).
    private func reactorState(of annotation: MessageAnnotation, account: Int64, target: AnnotationTarget?,
                              upTo time: Int64) throws(SQLiteError) -> Set<String> {
        var newest: String?
        let found: (Statement.Row) -> Bool = { row in
            newest = row.text(0)
            return false
        }
        if let target {
            try database.cached("""
                SELECT emojis FROM reactions WHERE message_row = ?1 AND reactor = ?2 AND account_id = ?3 AND timestamp <= ?4
                ORDER BY timestamp DESC, id DESC LIMIT 1
                """).forEachRow([.integer(target.id), .text(annotation.actor), .integer(account), .integer(time)], found)
        } else {
            // Not archived yet: by the id the reaction names.
            try database.cached("""
                SELECT emojis FROM reactions
                WHERE conversation = ?1 AND target = ?2 AND message_row IS NULL AND reactor = ?3 AND account_id = ?4 AND timestamp <= ?5
                ORDER BY timestamp DESC, id DESC LIMIT 1
                """).forEachRow([.text(annotation.conversation), .text(annotation.target), .text(annotation.actor), .integer(account),
                                 .integer(time)], found)
        }
        guard let newest, let emojis = try? JSONDecoder().decode([String].self, from: Data(newest.utf8)) else { return [] }
        return Set(emojis)
    }

    // MARK: Retractions

    private func storeRetraction(_ annotation: MessageAnnotation, account: Int64, target: AnnotationTarget?) throws(SQLiteError) -> InsertOutcome {
        var moderated = false
        var moderator: String?
        var reason: String?
        if case .moderation(let by, let why) = annotation.kind {
            // Only the room itself speaks for its moderators.
            guard annotation.groupchat, JIDText.resource(annotation.from) == nil,
                  JIDText.bare(annotation.from).lowercased() == annotation.conversation.lowercased() else {
                return .refused("moderation of \(annotation.target) in \(annotation.conversation) not sent by the room (from \(annotation.from))")
            }
            moderated = true
            moderator = by
            reason = why
        }
        let allowed = target.map { mayRetract($0, from: annotation.from, occupantId: annotation.occupantId, groupchat: annotation.groupchat,
                                             moderated: moderated) }
        let status = switch allowed {
        case .none: "pending"
        case .some(true): "applied"
        case .some(false): "refused"
        }
        try database.run("""
            INSERT INTO retractions (account_id, conversation, target, message_row, from_jid, occupant_id, moderated, moderator, reason,
                keep_text, status, timestamp, source, dedup_key)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
            """, [.integer(account), .text(annotation.conversation), .text(annotation.target), SQLValue(target?.id),
                  .text(annotation.from), SQLValue(annotation.occupantId), SQLValue(moderated), SQLValue(moderator), SQLValue(reason),
                  SQLValue(annotation.keepRetractedText), .text(status), .integer(annotation.timestamp), .text(annotation.source.rawValue),
                  .text(annotation.dedupKey)])
        if target == nil { pendingAnnotationsExist = true }
        if database.changes == 0 { return .duplicate(existingId: target?.id) }
        guard let target, let allowed else { return .stored }
        guard allowed else {
            return .refused("retraction of \(annotation.target) in \(annotation.conversation) by \(annotation.from), who did not send it")
        }
        try retract(target.id, by: moderator ?? (moderated ? annotation.conversation : annotation.from), at: annotation.timestamp,
                    reason: reason, keepText: annotation.keepRetractedText)
        return .stored
    }

    /// The sender retracts their own message (same bare JID in a chat; same occupant id in a room, or the same nick
    /// where the room gives no ids); the room may remove any message of its own.
    private func mayRetract(_ target: AnnotationTarget, from: String, occupantId: String?, groupchat: Bool, moderated: Bool) -> Bool {
        if moderated { return true }
        if groupchat {
            if let original = target.occupantId, let retracting = occupantId { return original == retracting }
            return target.occupantId == nil && occupantId == nil && target.from == from
        }
        return JIDText.bare(target.from).lowercased() == JIDText.bare(from).lowercased()
    }

    private func retract(_ row: Int64, by: String, at: Int64, reason: String?, keepText: Bool) throws(SQLiteError) {
        try database.run("UPDATE messages SET retracted = 1, retracted_by = ?, retracted_at = ?, retraction_reason = ? WHERE id = ?",
                         [.text(by), .integer(at), SQLValue(reason), .integer(row)])
        guard !keepText else { return }
        try database.run("UPDATE messages SET body = NULL, raw = NULL WHERE id = ?", [.integer(row)])
        try database.run("UPDATE message_revisions SET body = NULL, raw = NULL WHERE message_row = ?", [.integer(row)])
    }

    /// An imported copy of a stored message that says it was retracted since (`roost export --since-last` after the
    /// retraction, imported after the export that had it whole): the stored row is retracted as the export says,
    /// its text erased when the export's is.
    func applyImportedRetraction(_ record: MessageRecord, to row: Int64) throws(SQLiteError) {
        guard let retraction = record.imported?.retraction,
              try database.cached("SELECT retracted FROM messages WHERE id = ?").scalarInt([.integer(row)]) == 0 else { return }
        try retract(row, by: retraction.by, at: retraction.at, reason: retraction.reason, keepText: record.body != nil)
    }

    /// The stored copy of an imported message that says it was retracted with its text erased: its key hashes the
    /// text it no longer has, so it is found by sender, time and ids instead (a copy not retracted yet).
    func storedCopyOfRetracted(_ record: MessageRecord, account: Int64) throws(SQLiteError) -> Int64? {
        guard record.imported?.retraction != nil, record.body == nil else { return nil }
        return try database.cached("""
            SELECT id FROM messages WHERE account_id = ? AND conversation = ? AND from_jid = ? AND timestamp = ?
                AND message_id IS ? AND origin_id IS ? AND retracted = 0 LIMIT 1
            """).scalarInt([.integer(account), .text(record.conversation), .text(record.from), .integer(record.timestamp),
                            SQLValue(record.messageId), SQLValue(record.originId)])
    }

    /// Whether the archive may hold a reaction or retraction still waiting for its message (stored before it): when it
    /// holds none, a new message has nothing to pick up and its two lookups are skipped. Asked once per batch (another
    /// writer may have stored some between two), and set as soon as this batch stores one.
    private func pendingAnnotationsMayExist() throws(SQLiteError) -> Bool {
        if let known = pendingAnnotationsExist { return known }
        let exists = try database.cached("""
            SELECT EXISTS (SELECT 1 FROM reactions WHERE message_row IS NULL) OR EXISTS (SELECT 1 FROM retractions WHERE status = 'pending')
            """).scalarInt() == 1
        pendingAnnotationsExist = exists
        return exists
    }

    // MARK: Receipts, markers, read state

    private func storeMarker(_ annotation: MessageAnnotation, account: Int64, target: AnnotationTarget?) throws(SQLiteError) -> InsertOutcome {
        // A marker counts up to its target; one whose target is not archived, up to its own time.
        let row = target?.id ?? (MessageID.base(forTimestamp: annotation.timestamp) + MessageID.slotSize - 1)
        let displayed = annotation.kind == .displayed
        switch annotation.direction {
        case .outgoing:
            // One of the user's clients showed the conversation.
            guard displayed else { return .duplicate(existingId: target?.id) }
            try moveReadState(account: account, conversation: annotation.conversation, read: row, at: annotation.timestamp)
        case .incoming:
            // Markers of other occupants in a room say nothing about the user's messages.
            guard !annotation.groupchat else { return .duplicate(existingId: target?.id) }
            try moveReadState(account: account, conversation: annotation.conversation, peerReceived: row, peerDisplayed: displayed ? row : 0,
                              at: annotation.timestamp)
        }
        return .stored
    }

    func moveReadState(account: Int64, conversation: String, read: Int64 = 0, peerReceived: Int64 = 0, peerDisplayed: Int64 = 0,
                       at: Int64) throws(SQLiteError) {
        try database.cached("""
            INSERT INTO read_state (account_id, conversation, read_row, read_at, peer_received_row, peer_displayed_row, updated_at)
            VALUES (?1, ?2, ?3, CASE WHEN ?3 > 0 THEN ?6 END, ?4, ?5, ?6)
            ON CONFLICT (account_id, conversation) DO UPDATE SET
                read_at = CASE WHEN excluded.read_row > read_row THEN excluded.read_at ELSE read_at END,
                read_row = max(read_row, excluded.read_row),
                peer_received_row = max(peer_received_row, excluded.peer_received_row),
                peer_displayed_row = max(peer_displayed_row, excluded.peer_displayed_row),
                updated_at = excluded.updated_at
            """).run([.integer(account), .text(conversation), .integer(read), .integer(max(peerReceived, peerDisplayed)),
                      .integer(peerDisplayed), .integer(at)])
    }

    /// `roost read`: everything archived in the conversation so far counts as read (or up to the row `upTo`).
    func markRead(account jid: String, conversation: String, at: Int64, upTo: Int64? = nil) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(jid, now: at)
        let newest = try database.cached("SELECT max(id) FROM messages WHERE account_id = ? AND conversation = ? AND id <= ?")
            .scalarInt([.integer(account), .text(conversation), .integer(upTo ?? .max)])
        guard let newest else { return .duplicate(existingId: nil) }
        try moveReadState(account: account, conversation: conversation, read: newest, at: at)
        return .stored
    }

    /// After a message row is stored: reactions and retractions that arrived before it now find it, and a message
    /// the user wrote marks the conversation read up to it.
    func attachAnnotations(to id: Int64, record: MessageRecord, account: Int64) throws(SQLiteError) {
        // Whether the conversation's read state row exists now (each statement less is ~1 µs of an import's ~50 µs).
        var readStateWritten = false
        if record.direction == .outgoing {
            try moveReadState(account: account, conversation: record.conversation, read: id, at: record.receivedAt)
            readStateWritten = true
        }
        if let imported = record.imported {
            if let retraction = imported.retraction {
                // The export already left out what the retraction erased.
                try retract(id, by: retraction.by, at: retraction.at, reason: retraction.reason, keepText: true)
            }
            if let progress = imported.peerProgress {
                try moveReadState(account: account, conversation: record.conversation, peerReceived: id,
                                  peerDisplayed: progress == .read ? id : 0, at: record.receivedAt)
                readStateWritten = true
            }
            // An export marks unread messages only; a retracted one is never unread, so it says nothing of the read
            // mark: taking it as read would mark every message before it read (found by issue 28's round trip).
            if record.direction == .incoming, !imported.unread, imported.retraction == nil {
                try moveReadState(account: account, conversation: record.conversation, read: id, at: record.receivedAt)
                readStateWritten = true
            }
        }
        if record.direction == .incoming, !readStateWritten {
            // Every conversation has a read state, so counting unread messages walks conversations, not messages.
            try database.cached("""
                INSERT INTO read_state (account_id, conversation, updated_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING
                """).run([.integer(account), .text(record.conversation), .integer(record.receivedAt)])
        }
        guard record.messageId != nil || record.originId != nil || record.stanzaId != nil, try pendingAnnotationsMayExist() else { return }
        // One statement text for every message (the statement cache is keyed by it): absent ids are NULL.
        let values: [SQLValue] = [.integer(account), .text(record.conversation), SQLValue(record.messageId), SQLValue(record.originId),
                                  SQLValue(record.stanzaId), .integer(id)]
        try database.run("""
            UPDATE reactions SET message_row = ?6
            WHERE account_id = ?1 AND conversation = ?2 AND message_row IS NULL AND target IN (?3, ?4, ?5)
            """, values)
        var pending: [(id: Int64, from: String, occupantId: String?, moderated: Bool, moderator: String?, reason: String?,
                       keep: Bool, at: Int64)] = []
        try database.cached("""
            SELECT id, from_jid, occupant_id, moderated, moderator, reason, keep_text, timestamp FROM retractions
            WHERE account_id = ?1 AND conversation = ?2 AND status = 'pending' AND target IN (?3, ?4, ?5) ORDER BY id
            """).forEachRow(Array(values.prefix(5))) { row in
            pending.append((row.int(0), row.text(1), row.optionalText(2), row.bool(3), row.optionalText(4), row.optionalText(5),
                            row.bool(6), row.int(7)))
            return true
        }
        let target = AnnotationTarget(id: id, from: record.from, occupantId: record.occupantId)
        for retraction in pending {
            let allowed = mayRetract(target, from: retraction.from, occupantId: retraction.occupantId, groupchat: record.kind == .groupchat,
                                     moderated: retraction.moderated)
            try database.run("UPDATE retractions SET status = ?, message_row = ? WHERE id = ?",
                             [.text(allowed ? "applied" : "refused"), .integer(id), .integer(retraction.id)])
            if allowed {
                try retract(id, by: retraction.moderator ?? (retraction.moderated ? record.conversation : retraction.from), at: retraction.at,
                            reason: retraction.reason, keepText: retraction.keep)
            }
        }
    }
}
