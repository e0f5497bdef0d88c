import RoostCore
import Foundation

/// Applies archive events to the writer connection. Every method runs inside the caller's transaction.
final class Ingestor {
    let database: Database
    private var accountIDs: [String: Int64] = [:]
    /// The last account looked up, as it was spelt (`accountID`).
    private var lastAccount: (jid: String, id: Int64)?

    /// A row's texts for the full-text index: a new row's as its record gave them, a changed row's as SQLite holds
    /// them (read as blobs, so that bytes a foreign tool stored reach the index exactly as the trigger would pass them).
    private struct PendingIndexEntry {
        let id: Int64
        let body: SQLValue
        let subject: SQLValue
        let sender: SQLValue
    }

    /// New messages not yet in the full-text index, indexed at the end of the batch with the rows whose text the
    /// batch changed (`flushIndex`): FTS5 writes its pending terms as a new segment at every savepoint (any statement
    /// that fires a trigger or checks a constraint opens one) and whenever a row id is lower than the last, so
    /// indexing row by row between the batch's statements would write one tiny segment per message. See
    /// "Full text" in `SchemaV1` and `SchemaV14`.
    private var pendingIndex: [PendingIndexEntry] = []

    /// What the current import pass took of stored rows (see `CrossSourceMatch`): every text of a row it stored,
    /// the texts it matched of others. Empty outside imports.
    var importClaims: [Int64: ImportClaim] = [:]
    /// The fallback keys of the imported messages this pass found stored under another source, and the row each
    /// matched: the same line logged twice by a client (poezio logs a room's history again at every join) is one
    /// message, as it is when imported into an empty archive, where the second copy meets the first by its key.
    var importMatchedKeys: [String: Int64] = [:]

    /// Whether the archive holds imported rows, asked once per batch (an import may run beside the agent):
    /// live messages are compared with imported rows only when there are some.
    var importedRowsExist: Bool?
    /// Whether the archive may hold reactions or retractions waiting for their message, asked once per batch
    /// (`pendingAnnotationsMayExist`).
    var pendingAnnotationsExist: Bool?
    /// Whether the archive holds tombstones of forgotten messages (`SchemaV17`), asked once per batch (`roost forget`
    /// may run beside the agent): a new message is looked up among them only when there are some.
    var forgottenExist: Bool?
    /// Attachment rows the event being applied added that wait for the download worker (`ArchiveWriter.Committed`).
    var newPendingAttachments: [Int64] = []
    /// During a bulk load (`DeferredIndexes`), the keys of the rows written, in place of the dropped indexes.
    var bulkKeys: BulkKeys?
    /// `PRAGMA data_version` when the bulk load began: another writer's commit changes it.
    var bulkDataVersion: Int64 = 0
    /// Between `beginBulkLoad` and `endBulkLoad`: the write-ahead log is left at its size between batches.
    var bulkLoading = false
    /// `PRAGMA secure_delete` before the bulk load (which sets it to `FAST`), restored by `endBulkLoad`.
    var secureDelete: Int64 = 1

    init(database: Database) {
        self.database = database
    }

    /// Forget cached account ids (after a rollback they may name rows that no longer exist).
    func discardCaches() {
        accountIDs.removeAll()
        lastAccount = nil
        pendingIndex.removeAll()
        importedRowsExist = nil
        pendingAnnotationsExist = nil
        forgottenExist = nil
        newPendingAttachments.removeAll()
    }

    /// Starts a new import pass: rows stored or matched by earlier passes may be matched again.
    func beginImportPass() {
        importClaims.removeAll()
        importMatchedKeys.removeAll()
    }

    /// Indexes the batch's new messages and re-indexes the rows whose text it changed (noted in `fts_pending` while
    /// `Database.defersFullTextUpdates` is set: `SchemaV14`), all in ascending row id, so that FTS5 keeps them in one
    /// segment; must run before COMMIT.
    func flushIndex() throws(SQLiteError) {
        importedRowsExist = nil
        pendingAnnotationsExist = nil
        forgottenExist = nil
        // Each changed row: the text the index holds, and the row's text now.
        var changed: [Int64: (indexed: PendingIndexEntry, now: PendingIndexEntry)] = [:]
        var noted = false
        try database.cached("""
            SELECT p.id, CAST(p.body AS BLOB), CAST(p.subject AS BLOB), CAST(p.sender_name AS BLOB),
                CAST(m.body AS BLOB), CAST(m.subject AS BLOB), CAST(m.sender_name AS BLOB), m.id
            FROM fts_pending p LEFT JOIN messages m ON m.id = p.id
            """).forEachRow { row in
            noted = true
            // No batch deletes a message (`SchemaV14`): a row gone is left to the delete trigger.
            guard !row.isNull(7) else { return true }
            func value(_ column: Int32) -> SQLValue { row.optionalBlob(column).map(SQLValue.blob) ?? .null }
            let id = row.int(0)
            changed[id] = (PendingIndexEntry(id: id, body: value(1), subject: value(2), sender: value(3)),
                           PendingIndexEntry(id: id, body: value(4), subject: value(5), sender: value(6)))
            return true
        }
        if noted { try database.cached("DELETE FROM fts_pending").run() }
        guard !pendingIndex.isEmpty || !changed.isEmpty else { return }
        var entries = pendingIndex
        pendingIndex.removeAll(keepingCapacity: true)
        if !changed.isEmpty {
            // A new row changed within the batch is indexed once, with its text now; the others leave the index first.
            for index in entries.indices {
                if let change = changed.removeValue(forKey: entries[index].id) { entries[index] = change.now }
            }
            entries += changed.values.map(\.now)
        }
        if !zip(entries, entries.dropFirst()).allSatisfy({ $0.id < $1.id }) { entries.sort { $0.id < $1.id } }
        // A blob becomes text of the same bytes (as the triggers pass a stored value); text and NULL stay as they are.
        // One row per statement (`VALUES`): a statement that may write several rows opens a savepoint, and FTS5 flushes.
        let texts = "roost_fts_text(CAST(?2 AS TEXT)), roost_fts_text(CAST(?3 AS TEXT)), roost_fts_text(CAST(?4 AS TEXT)), "
            + "roost_fts_cjk(CAST(?2 AS TEXT), CAST(?3 AS TEXT), CAST(?4 AS TEXT))"
        let remove = try database.cached("INSERT INTO message_fts (message_fts, rowid, body, subject, sender, cjk) VALUES ('delete', ?1, \(texts))")
        let add = try database.cached("INSERT INTO message_fts (rowid, body, subject, sender, cjk) VALUES (?1, \(texts))")
        for entry in entries {
            if let indexed = changed[entry.id]?.indexed {
                try remove.run([.integer(entry.id), indexed.body, indexed.subject, indexed.sender])
            }
            try add.run([.integer(entry.id), entry.body, entry.subject, entry.sender])
        }
    }

    func apply(_ event: ArchiveEvent) throws(SQLiteError) -> InsertOutcome {
        switch event {
        case .message(let record): return try insert(record)
        case .chatState(let record): return try insert(record)
        case .presence(let record): return try insert(record)
        case .subscription(let record): return try insert(record)
        case .rosterItem(let record): return try upsert(record)
        case .rosterRemoval(let account, let jid, let timestamp): return try removeFromRoster(account: account, jid: jid, timestamp: timestamp)
        case .vCard(let record): return try upsert(record)
        case .syncState(let record): return try update(record)
        case .delivery(let account, let ids, let state): return try updateDelivery(account: account, originIDs: ids, state: state)
        case .outbox(let account, let id, let queued, let timestamp): return try updateOutbox(account: account, originID: id, queued: queued, at: timestamp)
        case .messageDecrypted(let decryption): return try apply(decryption)
        case .room(let update): return try apply(update)
        case .roomPresence(let record): return try insert(record)
        case .invitation(let record): return try insert(record)
        case .invitationAnswered(let account, let room, let status, let timestamp):
            return try answerInvitations(account: account, room: room, status: status, timestamp: timestamp)
        case .annotation(let annotation): return try apply(annotation)
        case .conversationRead(let account, let conversation, let timestamp, let upTo):
            return try markRead(account: account, conversation: conversation, at: timestamp, upTo: upTo)
        }
    }

    func accountID(_ jid: String, now: Int64) throws(SQLiteError) -> Int64 {
        // Every event of a live batch names the same account, spelt the same: no case folding for those.
        if let last = lastAccount, last.jid == jid { return last.id }
        let key = jid.lowercased()
        if let id = accountIDs[key] {
            lastAccount = (jid, id)
            return id
        }
        try database.run("INSERT INTO accounts (jid, created_at) VALUES (?, ?) ON CONFLICT (jid) DO NOTHING", [.text(jid), .integer(now)])
        guard let id = try database.cached("SELECT id FROM accounts WHERE jid = ?").scalarInt([.text(jid)]) else {
            throw SQLiteError(code: 1, message: "account row for \(jid) vanished")
        }
        accountIDs[key] = id
        lastAccount = (jid, id)
        return id
    }

    // MARK: Messages

    private func insert(_ record: MessageRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.receivedAt)
        let key = DedupKey.make(for: record)
        if let duplicate = try existingCopy(of: record, account: account, key: key) {
            if record.direction == .outgoing, record.source != .live || record.kind == .groupchat {
                // The server has it (its archive or a carbon handed it back, or the room echoed it): it was delivered.
                try database.cached("UPDATE messages SET delivery = 'sent' WHERE id = ? AND delivery IN ('pending', 'failed')")
                    .run([.integer(duplicate)])
            }
            if record.source == .import { importClaims[duplicate, default: .texts([])].add(CrossSourceMatch.matchText(record)) }
            try applyImportedRetraction(record, to: duplicate)
            return .duplicate(existingId: duplicate)
        }
        if record.source == .import, let earlier = importMatchedKeys[key] { return .duplicate(existingId: earlier) }
        if let stored = try storedCopyOfRetracted(record, account: account) {
            try applyImportedRetraction(record, to: stored)
            return .duplicate(existingId: stored)
        }
        // Forgotten (`roost forget`): a copy from the server's archive, a resend or a carbon does not bring it back.
        if try isForgotten(record, account: account, key: key) { return .duplicate(existingId: nil) }
        if let replaces = record.replaces, let target = try correctionTarget(of: record, replaces: replaces, account: account) {
            return try applyCorrection(record, to: target, key: key)
        }
        if try mayMatchAcrossSources(record), let duplicate = try crossSourceCopy(of: record, account: account) {
            if record.source == .import { importMatchedKeys[key] = duplicate }
            return .duplicate(existingId: duplicate)
        }
        let id = try allocateID(timestamp: record.timestamp)
        if record.source == .import {
            importClaims[id] = .whole
            importedRowsExist = true
        }
        let trusted = record.stanzaIdTrusted && record.stanzaId != nil
        bulkKeys?.recordRow(id: id, account: account, message: record, dedupKey: key, trusted: trusted)
        try database.run("""
            INSERT INTO messages (id, account_id, conversation, direction, type, from_jid, from_bare, to_jid, to_bare,
                sender_name, body, subject, thread, timestamp, received_at, stanza_id, stanza_id_by, stanza_id_trusted,
                origin_id, message_id, replaces, is_carbon, source, dedup_key, raw, delivery, occupant_id, real_jid, claimed_at,
                reply_to, reply_to_jid)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, roost_stanza_pack(?), ?, ?, ?, ?, ?, ?)
            """, [
                .integer(id), .integer(account), .text(record.conversation), .text(record.direction.rawValue),
                .text(record.kind.rawValue), .text(record.from), .text(JIDText.bare(record.from)), .text(record.to),
                .text(JIDText.bare(record.to)), SQLValue(record.senderName), SQLValue(record.body), SQLValue(record.subject),
                SQLValue(record.thread), .integer(record.timestamp), .integer(record.receivedAt), SQLValue(record.stanzaId),
                SQLValue(record.stanzaIdBy ?? (trusted ? record.account : nil)), SQLValue(trusted), SQLValue(record.originId),
                SQLValue(record.messageId), SQLValue(record.replaces), SQLValue(record.isCarbon), .text(record.source.rawValue),
                .text(DedupKey.stored(key, for: record)), SQLValue(record.rawStanza), SQLValue(record.delivery?.rawValue),
                SQLValue(record.occupantId), SQLValue(try realJID(of: record, account: account)), SQLValue(record.claimedAt),
                SQLValue(record.replyTo), SQLValue(record.replyToJid),
            ])
        pendingIndex.append(PendingIndexEntry(id: id, body: SQLValue(record.body), subject: SQLValue(record.subject),
                                              sender: SQLValue(record.senderName)))
        try attachAnnotations(to: id, record: record, account: account)
        if let encryption = record.encryption { try store(encryption, of: id) }
        for attachment in record.attachments {
            try insert(attachment, messageRow: id, now: record.receivedAt)
        }
        return .inserted(id: id)
    }

    private func insert(_ attachment: AttachmentRecord, messageRow: Int64, now: Int64) throws(SQLiteError) {
        try database.run("""
            INSERT INTO attachments (message_row, url, local_path, mime, size, name, description, width, height, hashes, sha256,
                state, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [
                .integer(messageRow), .text(attachment.url), attachment.sha256 == nil ? SQLValue(attachment.localPath) : .null,
                SQLValue(attachment.mime), SQLValue(attachment.size), SQLValue(attachment.name), SQLValue(attachment.description),
                SQLValue(attachment.width.map { Int64($0) }), SQLValue(attachment.height.map { Int64($0) }),
                SQLValue(FileHash.column(attachment.hashes)), SQLValue(attachment.sha256), .text(attachment.state.rawValue),
                .integer(now),
            ])
        if attachment.state == .pending { newPendingAttachments.append(database.lastInsertRowID) }
    }

    /// The dedup rules of `SchemaV1`, steps 3 to 5.
    private func existingCopy(of record: MessageRecord, account: Int64, key: String) throws(SQLiteError) -> Int64? {
        if record.stanzaIdTrusted, let stanzaId = record.stanzaId {
            // Ids are unique per archive that assigned them (the account's, each room's).
            let by = record.stanzaIdBy ?? record.account
            if let id = try bulkOrSQL(.trusted, account: account, by, stanzaId, sql: """
                SELECT id FROM messages WHERE account_id = ?1 AND stanza_id_by = ?2 AND stanza_id = ?3 AND stanza_id_trusted = 1
                """) {
                return id
            }
            let untrusted = try bulkOrSQL(.untrusted, account: account, key, extra: SQLValue(DedupKey.originID(of: record)),
                                          sql: DedupKey.lookupSQL(extra: "stanza_id_trusted = 0"))
            if let id = untrusted {
                try database.run("UPDATE messages SET stanza_id = ?, stanza_id_by = ?, stanza_id_trusted = 1 WHERE id = ?",
                                 [.text(stanzaId), .text(by), .integer(id)])
                bulkKeys?.recordTrusted(id: id, account: account, by: by, stanzaId: stanzaId, conversation: record.conversation)
                return id
            }
            if DedupKey.isRoomPrivate(record.conversation) {
                // The room handed one copy to each of the user's sessions under the nick, and the user's server gave
                // each its own id: the fallback key, not the id, tells the message (`SchemaV1`, rule 5).
                return try bulkOrSQL(.dedup, account: account, key, extra: SQLValue(DedupKey.originID(of: record)), sql: DedupKey.lookupSQL())
            }
            return nil
        }
        return try bulkOrSQL(.dedup, account: account, key, extra: SQLValue(DedupKey.originID(of: record)), sql: DedupKey.lookupSQL())
    }

    /// A lookup by one key: from `bulkKeys` during a bulk load, else (or when it does not know) by `sql`
    /// (?1 the account, ?2 and ?3 the key's texts, or ?3 `extra` when given: a value the SQL needs, not part of
    /// the key), which without the index scans the table.
    func bulkOrSQL(_ kind: BulkKeys.Kind, account: Int64, _ first: String, _ second: String? = nil, extra: SQLValue? = nil,
                   sql: String) throws(SQLiteError) -> Int64? {
        if let bulkKeys {
            switch try bulkKeys.lookup(kind, account: account, first, second) {
            case .none: return nil
            case .row(let id): return id
            case .unknown: break
            }
        }
        var values: [SQLValue] = [.integer(account), .text(first)]
        if let second { values.append(.text(second)) }
        if let extra { values.append(extra) }
        return try database.cached(sql).scalarInt(values)
    }

    /// The largest of the rows the three by-id lookups of a correction or annotation target name, during a bulk
    /// load; `nil` when `bulkKeys` does not know one of them (then the caller asks SQLite).
    func bulkTarget(account: Int64, conversation: String, id: String, kinds: [BulkKeys.Kind]) throws(SQLiteError) -> BulkKeys.Answer? {
        guard let bulkKeys else { return nil }
        var best: Int64?
        for kind in kinds {
            switch try bulkKeys.lookup(kind, account: account, conversation, id) {
            case .none: continue
            case .unknown: return nil
            case .row(let row): best = max(best ?? row, row)
            }
        }
        return best.map { .row($0) } ?? BulkKeys.Answer.none
    }

    private struct CorrectionTarget {
        let id: Int64
        let edited: Int64
        let imported: Bool
    }

    /// The newest message of the conversation whose id or origin-id is `replaces`, if sent by the same sender:
    /// in groupchat the same occupant id (XEP-0421) when both have one, else the same nick (full JID); the same
    /// bare JID otherwise. Two index seeks (`SchemaV10`), whatever the size of the conversation.
    private func correctionTarget(of record: MessageRecord, replaces: String, account: Int64) throws(SQLiteError) -> CorrectionTarget? {
        var found: (id: Int64, from: String, edited: Int64, imported: Bool, occupantId: String?)?
        var sql = """
            SELECT id, from_jid, edited, source = 'import', occupant_id FROM messages
            WHERE id IN (SELECT id FROM messages INDEXED BY messages_account_message_id
                             WHERE account_id = ?2 AND conversation = ?1 AND message_id = ?3
                         UNION ALL
                         SELECT id FROM messages INDEXED BY messages_origin
                             WHERE account_id = ?2 AND origin_id = ?3 AND conversation = ?1)
            ORDER BY id DESC LIMIT 1
            """
        var values: [SQLValue] = [.text(record.conversation), .integer(account), .text(replaces)]
        switch try bulkTarget(account: account, conversation: record.conversation, id: replaces, kinds: [.messageID, .originID]) {
        case .none?: return nil
        case .row(let id)?:
            sql = "SELECT id, from_jid, edited, source = 'import', occupant_id FROM messages WHERE id = ?"
            values = [.integer(id)]
        case .unknown?:
            // A bulk load without the indexes, and a hash collision: a scan, exact.
            sql = """
                SELECT id, from_jid, edited, source = 'import', occupant_id FROM messages
                WHERE account_id = ?2 AND conversation = ?1 AND (message_id = ?3 OR origin_id = ?3) ORDER BY id DESC LIMIT 1
                """
        case nil: break
        }
        try database.cached(sql).forEachRow(values) { row in
            found = (row.int(0), row.text(1), row.int(2), row.bool(3), row.optionalText(4))
            return false
        }
        guard let found else { return nil }
        let sameSender: Bool
        if record.kind == .groupchat {
            if let original = found.occupantId, let correcting = record.occupantId {
                sameSender = original == correcting
            } else {
                sameSender = found.occupantId == nil && record.occupantId == nil && found.from == record.from
            }
        } else {
            sameSender = JIDText.bare(found.from).lowercased() == JIDText.bare(record.from).lowercased()
        }
        return sameSender ? CorrectionTarget(id: found.id, edited: found.edited, imported: found.imported) : nil
    }

    private func applyCorrection(_ record: MessageRecord, to target: CorrectionTarget, key: String) throws(SQLiteError) -> InsertOutcome {
        let seen = try database.cached("""
            SELECT 1 FROM message_revisions
            WHERE message_row = ?1 AND (dedup_key = ?2 OR (?3 IS NOT NULL AND stanza_id = ?3 AND stanza_id_trusted = 1))
            """).scalarInt([.integer(target.id), .text(key), record.stanzaIdTrusted ? SQLValue(record.stanzaId) : .null])
        if seen != nil { return .duplicate(existingId: target.id) }
        if (record.source == .import || target.imported), try sameTextSeen(record.body, revisionsOf: target) {
            // The same edit recorded by two sources (an imported client history and the server archive) carries
            // different ids; the text it produced is what identifies it (see `CrossSourceMatch`).
            return .duplicate(existingId: target.id)
        }
        if target.edited == 0 {
            try database.run("""
                INSERT INTO message_revisions (message_row, revision, body, from_jid, timestamp, received_at, stanza_id,
                    stanza_id_trusted, origin_id, message_id, dedup_key, source, raw)
                SELECT id, 0, body, from_jid, timestamp, received_at, stanza_id, stanza_id_trusted, origin_id, message_id,
                    \(DedupKey.fullKeySQL()), source, raw
                FROM messages WHERE id = ?
                """, [.integer(target.id)])
        }
        let revision = target.edited + 1
        try database.run("""
            INSERT INTO message_revisions (message_row, revision, body, from_jid, timestamp, received_at, stanza_id,
                stanza_id_trusted, origin_id, message_id, dedup_key, source, raw)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, roost_stanza_pack(?))
            """, [
                .integer(target.id), .integer(revision), SQLValue(record.body), .text(record.from), .integer(record.timestamp),
                .integer(record.receivedAt), SQLValue(record.stanzaId), SQLValue(record.stanzaIdTrusted && record.stanzaId != nil),
                SQLValue(record.originId), SQLValue(record.messageId), .text(key), .text(record.source.rawValue),
                SQLValue(record.rawStanza),
            ])
        try database.run("UPDATE messages SET body = ?, edited = ? WHERE id = ?",
                         [SQLValue(record.body), .integer(revision), .integer(target.id)])
        return .corrected(id: target.id, revision: Int(revision))
    }

    private func store(_ encryption: MessageEncryption, of id: Int64) throws(SQLiteError) {
        try database.run("""
            UPDATE messages SET encryption = ?, e2e_namespace = ?, e2e_device = ?, e2e_fingerprint = ?, e2e_trust = ?, e2e_failure = ?
            WHERE id = ?
            """, [.text(encryption.scheme), SQLValue(encryption.protocolNamespace), SQLValue(encryption.senderDevice),
                  SQLValue(encryption.fingerprint), SQLValue(encryption.trust), SQLValue(encryption.failure), .integer(id)])
    }

    /// A late decryption fills in the body of a row still marked undecryptable (the index follows at the batch's end).
    private func apply(_ decryption: MessageDecryption) throws(SQLiteError) -> InsertOutcome {
        try database.run("UPDATE messages SET body = ? WHERE id = ? AND e2e_failure IS NOT NULL",
                         [.text(decryption.body), .integer(decryption.messageID)])
        guard database.changes > 0 else { return .duplicate(existingId: decryption.messageID) }
        try store(decryption.encryption, of: decryption.messageID)
        return .stored
    }

    /// Whether `body` already is the text of the message or of one of its revisions.
    private func sameTextSeen(_ body: String?, revisionsOf target: CorrectionTarget) throws(SQLiteError) -> Bool {
        let text = CrossSourceMatch.comparableText(body)
        var seen = false
        try database.cached("""
            SELECT body FROM messages WHERE id = ?1 UNION ALL SELECT body FROM message_revisions WHERE message_row = ?1
            """).forEachRow([.integer(target.id)]) { row in
            seen = CrossSourceMatch.comparableText(row.optionalText(0)) == text
            return !seen
        }
        return seen
    }

    private func allocateID(timestamp: Int64) throws(SQLiteError) -> Int64 {
        let base = MessageID.base(forTimestamp: timestamp)
        let highest = try database.cached("SELECT max(id) FROM messages WHERE id >= ? AND id < ?")
            .scalarInt([.integer(base), .integer(base + MessageID.slotSize)])
        guard let highest else { return base }
        if highest + 1 < base + MessageID.slotSize { return highest + 1 }
        // A million messages in one millisecond: give up exact ordering rather than fail.
        return (try database.cached("SELECT max(id) FROM messages").scalarInt() ?? base) + 1
    }

    // MARK: Other events

    private func insert(_ record: ChatStateRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.timestamp)
        try database.run("""
            INSERT INTO chat_states (account_id, conversation, from_jid, state, timestamp, message_id) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """, [.integer(account), .text(record.conversation), .text(record.from), .text(record.state.rawValue), .integer(record.timestamp),
                  SQLValue(record.messageId)])
        return database.changes == 0 ? .duplicate(existingId: nil) : .stored
    }

    private func insert(_ record: PresenceRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.timestamp)
        let room = record.room
        try database.run("""
            INSERT INTO presence_log (account_id, contact, resource, type, show, status, priority, timestamp, \(RoomPresenceDetail.columns()))
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.integer(account), .text(record.contact), SQLValue(record.resource), .text(record.availability.rawValue),
                  SQLValue(record.show), SQLValue(record.status), SQLValue(record.priority), .integer(record.timestamp),
                  SQLValue(room?.event.rawValue), SQLValue(room?.occupantId), SQLValue(room?.realJid), SQLValue(room?.role),
                  SQLValue(room?.affiliation), SQLValue(room?.newNick), SQLValue(room?.reason)])
        return .stored
    }

    private func insert(_ record: SubscriptionRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.timestamp)
        let status: SubscriptionStatus? = record.restored.map(\.status) ?? (record.kind == .subscribe ? .pending : nil)
        try database.run("""
            INSERT INTO subscription_requests (account_id, jid, direction, kind, status, created_at, updated_at, message)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.integer(account), .text(record.jid), .text(record.direction.rawValue), .text(record.kind.rawValue),
                  SQLValue(status?.rawValue), .integer(record.timestamp), .integer(record.restored?.updatedAt ?? record.timestamp),
                  SQLValue(record.message)])
        if record.restored != nil { return .stored }
        // An answer settles the pending requests that went the other way.
        let answer: SubscriptionStatus? = switch record.kind {
        case .subscribed: .accepted
        case .unsubscribed: .denied
        default: nil
        }
        if let answer {
            let requestDirection: MessageDirection = record.direction == .incoming ? .outgoing : .incoming
            try database.run("""
                UPDATE subscription_requests SET status = ?, updated_at = ?
                WHERE account_id = ? AND jid = ? AND direction = ? AND kind = 'subscribe' AND status = 'pending'
                """, [.text(answer.rawValue), .integer(record.timestamp), .integer(account), .text(record.jid),
                      .text(requestDirection.rawValue)])
        }
        return .stored
    }

    private func upsert(_ record: RosterItemRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.timestamp)
        let groupsJSON = (try? JSONEncoder().encode(record.groups)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
        try database.run("""
            INSERT INTO contacts (account_id, jid, in_roster, name, groups, subscription, ask, roster_updated_at)
            VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (account_id, jid) DO UPDATE SET in_roster = 1, name = ?3, groups = ?4, subscription = ?5, ask = ?6,
                roster_updated_at = ?7
            """, [.integer(account), .text(record.jid), SQLValue(record.name), .text(groupsJSON), .text(record.subscription),
                  SQLValue(record.ask), .integer(record.timestamp)])
        return .stored
    }

    private func removeFromRoster(account jid: String, jid contact: String, timestamp: Int64) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(jid, now: timestamp)
        try database.run("""
            UPDATE contacts SET in_roster = 0, subscription = 'remove', ask = NULL, roster_updated_at = ?
            WHERE account_id = ? AND jid = ?
            """, [.integer(timestamp), .integer(account), .text(contact)])
        return .stored
    }

    private func upsert(_ record: VCardRecord) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(record.account, now: record.fetchedAt)
        try database.run("""
            INSERT INTO contacts (account_id, jid, nickname, fullname, photo_hash, photo_path, vcard_raw, vcard_fetched_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT (account_id, jid) DO UPDATE SET nickname = ?3, fullname = ?4, photo_hash = ?5, photo_path = ?6,
                vcard_raw = ?7, vcard_fetched_at = ?8
            """, [.integer(account), .text(record.jid), SQLValue(record.nickname), SQLValue(record.fullName),
                  SQLValue(record.photoHash), SQLValue(record.photoPath), SQLValue(record.raw), .integer(record.fetchedAt)])
        return .stored
    }

    private func update(_ record: SyncStateRecord) throws(SQLiteError) -> InsertOutcome {
        let now = Timestamp.now()
        let account = try accountID(record.account, now: now)
        try database.run("INSERT INTO sync_state (account_id, updated_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                         [.integer(account), .integer(now)])
        try database.run("""
            UPDATE sync_state SET
                last_stanza_id = coalesce(?2, last_stanza_id),
                last_timestamp = coalesce(?3, last_timestamp),
                sm_id = CASE WHEN ?4 THEN NULL ELSE coalesce(?5, sm_id) END,
                sm_h = CASE WHEN ?4 THEN NULL ELSE coalesce(?6, sm_h) END,
                completed_ranges = coalesce(?7, completed_ranges),
                updated_at = ?8
            WHERE account_id = ?1
            """, [.integer(account), SQLValue(record.lastStanzaId), SQLValue(record.lastTimestamp),
                  SQLValue(record.clearStreamManagement), SQLValue(record.streamManagementId),
                  SQLValue(record.streamManagementH.map { Int64($0) }), SQLValue(record.completedRangesJSON), .integer(now)])
        return .stored
    }

    private func updateDelivery(account jid: String, originIDs: [String], state: DeliveryState) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(jid, now: Timestamp.now())
        // A message the server confirmed stays sent; only a pending or failed one moves.
        let statement = try database.cached("""
            UPDATE messages SET delivery = ?1
            WHERE account_id = ?2 AND origin_id = ?3 AND direction = 'out' AND delivery IS NOT NULL AND delivery != 'sent'
            """)
        for id in originIDs { try statement.run([.text(state.rawValue), .integer(account), .text(id)]) }
        return .stored
    }

    private func updateOutbox(account jid: String, originID: String, queued: Bool, at timestamp: Int64) throws(SQLiteError) -> InsertOutcome {
        let account = try accountID(jid, now: timestamp)
        if queued {
            try database.cached("INSERT INTO outbox (account_id, origin_id, queued_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
                .run([.integer(account), .text(originID), .integer(timestamp)])
        } else {
            try database.cached("DELETE FROM outbox WHERE account_id = ? AND origin_id = ?").run([.integer(account), .text(originID)])
        }
        return .stored
    }

    func syncState(account: String) throws(SQLiteError) -> SyncState? {
        var state: SyncState?
        try database.cached("""
            SELECT a.jid, s.last_stanza_id, s.last_timestamp, s.sm_id, s.sm_h, s.completed_ranges, s.updated_at
            FROM sync_state s JOIN accounts a ON a.id = s.account_id WHERE a.jid = ?
            """).forEachRow([.text(account)]) { row in
            state = SyncState(account: row.text(0), lastStanzaId: row.optionalText(1), lastTimestamp: row.optionalInt(2),
                              streamManagementId: row.optionalText(3), streamManagementH: row.optionalInt(4).map { UInt32(truncatingIfNeeded: $0) },
                              completedRangesJSON: row.text(5), updatedAt: row.int(6))
            return false
        }
        return state
    }
}
