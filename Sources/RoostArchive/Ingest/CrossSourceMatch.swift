/// Deduplication across sources that record the same message differently: a history imported from another
/// client against what the server archive (live, carbons, MAM) gave Roost, and the other way round. The exact
/// rules of `SchemaV1` (trusted stanza-id, then the fallback key) run first; this runs only when they found
/// nothing, and only when one side is an import. The rules (documented for users in docs/import.md):
///
/// 1. Candidates are the stored messages of the same account and conversation whose time lies within
///    `idWindow` of the new one. For a live message only imported rows without a trusted stanza-id are
///    candidates; for an imported message every row is, except those this import pass stored itself, and a
///    row's text matched once in a pass is not matched again in it (a stored message absorbs one imported copy
///    of each of its texts, so two identical "ok"s stay two). An imported copy with the same fallback key as one
///    this pass matched (a line the client logged twice) is that same message (`Ingestor.importMatchedKeys`).
/// 2. Ids first: the same stanza-id from the same archive, or the same origin-id / message id (compared
///    crosswise, since clients use one value for both) from the same sender, is the same message.
/// 3. Otherwise the same sender (chat: the same direction; group chat: the same nick) and the same text
///    (whitespace runs folded; for an edited message its text or any earlier one) within `contentWindow` is the
///    same message; the nearest in time wins. Ids that disagree veto this: two trusted stanza-ids, two
///    stanza-ids from the same archive, two origin-ids, or two message ids in a one-to-one chat. An imported
///    message the client could not decrypt (no text, only the mark) stands for "an encrypted message": it is the
///    same as an encrypted message (decrypted or not) of the same sender in the window.
///
/// Why windows and not equal times: clients store their own receipt or send time, in whole seconds (Dino,
/// Pidgin, Profanity's text logs) or floats (Gajim), while the server archive stamps its own arrival time;
/// the two differ by network delay, rounding and the client's clock error. Two minutes covers these; ids are
/// unambiguous, so they are trusted over a wider span.
enum CrossSourceMatch {
    static let contentWindow: Int64 = 120_000
    static let idWindow: Int64 = 600_000

    struct Candidate {
        let id: Int64
        let timestamp: Int64
        let direction: MessageDirection
        let kind: MessageKind
        let from: String
        /// The text, and for an edited message every earlier text too (a client that does not know corrections
        /// logs the original and the correction as two messages).
        var texts: [String]
        let stanzaId: String?
        let stanzaIdBy: String?
        let stanzaIdTrusted: Bool
        let originId: String?
        let messageId: String?
    }

    /// What an imported message without a text that was encrypted compares as: a stored encrypted message (one
    /// Roost decrypted, or could not) lists it among its texts.
    static let encryptedText = "\u{0}encrypted"

    /// The text `record` is compared by: its body, or `encryptedText` for an undecryptable message.
    static func matchText(_ record: MessageRecord) -> String {
        record.body == nil && record.encryption != nil ? encryptedText : comparableText(record.body)
    }

    /// The candidate that is the same message as `record`, if any.
    static func best(for record: MessageRecord, among candidates: [Candidate]) -> Candidate? {
        if let byID = candidates.filter({ sameByID(record, $0) }).min(by: { distance(record, $0) < distance(record, $1) }) {
            return byID
        }
        let text = matchText(record)
        return candidates
            .filter { distance(record, $0) <= contentWindow && !idsDisagree(record, $0) && sameSender(record, $0)
                && $0.texts.contains(text) }
            .min { distance(record, $0) < distance(record, $1) }
    }

    private static func distance(_ record: MessageRecord, _ candidate: Candidate) -> Int64 {
        abs(record.timestamp - candidate.timestamp)
    }

    private static func sameByID(_ record: MessageRecord, _ candidate: Candidate) -> Bool {
        if let id = record.stanzaId, id == candidate.stanzaId, sameArchive(record, candidate) { return true }
        let own = [record.originId, record.messageId].compactMap { $0 }.filter { !$0.isEmpty }
        let theirs = [candidate.originId, candidate.messageId].compactMap { $0 }
        return own.contains { theirs.contains($0) } && sameSender(record, candidate)
    }

    private static func sameArchive(_ record: MessageRecord, _ candidate: Candidate) -> Bool {
        guard let by = record.stanzaIdBy, let other = candidate.stanzaIdBy else { return true }
        return by.lowercased() == other.lowercased()
    }

    private static func idsDisagree(_ record: MessageRecord, _ candidate: Candidate) -> Bool {
        func differ(_ a: String?, _ b: String?) -> Bool { a != nil && b != nil && a != b }
        if differ(record.stanzaId, candidate.stanzaId) {
            if record.stanzaIdTrusted && candidate.stanzaIdTrusted { return true }
            if record.stanzaIdBy != nil && candidate.stanzaIdBy != nil && sameArchive(record, candidate) { return true }
        }
        if differ(record.originId, candidate.originId) { return true }
        return record.kind != .groupchat && candidate.kind != .groupchat && differ(record.messageId, candidate.messageId)
    }

    /// Group chat: the nick when both sides know it; otherwise (and in one-to-one chats) the direction.
    private static func sameSender(_ record: MessageRecord, _ candidate: Candidate) -> Bool {
        if record.kind == .groupchat || candidate.kind == .groupchat,
           let mine = nick(record.from, in: record.conversation), let theirs = nick(candidate.from, in: record.conversation) {
            return mine == theirs
        }
        return record.direction == candidate.direction
    }

    private static func nick(_ from: String, in room: String) -> String? {
        guard let slash = from.firstIndex(of: "/"), from[..<slash].lowercased() == room.lowercased() else { return nil }
        return String(from[from.index(after: slash)...])
    }

    /// Text as compared across sources: runs of whitespace (line breaks included) fold to one space, ends trimmed.
    static func comparableText(_ body: String?) -> String {
        guard let body else { return "" }
        var result = ""
        var pendingSpace = false
        for character in body {
            if character.isWhitespace {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }
}

/// How much of a stored row an import pass has taken.
enum ImportClaim: Equatable {
    /// The pass stored the row itself.
    case whole
    /// The pass matched these texts (comparable form) of the row.
    case texts(Set<String>)

    mutating func add(_ text: String) {
        if case .texts(let taken) = self { self = .texts(taken.union([text])) }
    }
}

extension Ingestor {
    /// Imported messages are always compared; others (copies from the server) only while the archive holds
    /// imported rows (one lookup in the partial index `messages_imported` per batch).
    func mayMatchAcrossSources(_ record: MessageRecord) throws(SQLiteError) -> Bool {
        if record.source == .import { return true }
        // A message Roost sends itself is new by definition, whatever an imported log holds.
        if record.delivery != nil { return false }
        if let known = importedRowsExist { return known }
        let exists = try database.cached("SELECT 1 FROM messages WHERE source = 'import' LIMIT 1").scalarInt() != nil
        importedRowsExist = exists
        return exists
    }

    /// Rule set of `CrossSourceMatch`: the stored copy of `record` from another source, if any. The stored row
    /// is handed the ids it lacked (a trusted stanza-id, origin-id, message id) so that later copies (a resend,
    /// a MAM page) are recognised by the exact rules and corrections find it.
    func crossSourceCopy(of record: MessageRecord, account: Int64) throws(SQLiteError) -> Int64? {
        let lower = MessageID.base(forTimestamp: record.timestamp - CrossSourceMatch.idWindow)
        let upper = MessageID.base(forTimestamp: record.timestamp + CrossSourceMatch.idWindow + 1)
        let imported = record.source == .import
        // The live side looks only at imported rows, through their partial index (SchemaV4): nothing to read
        // in an archive that never imported anything.
        let sql = """
            SELECT id, timestamp, direction, type, from_jid, body, stanza_id, stanza_id_by, stanza_id_trusted, origin_id,
                   message_id, edited, encryption IS NOT NULL
            FROM messages
            WHERE conversation = ?1 AND id >= ?2 AND id < ?3 AND account_id = ?4
            """ + (imported ? "" : " AND source = 'import' AND stanza_id_trusted = 0")
        var candidates: [CrossSourceMatch.Candidate] = []
        var edited: [Int] = []
        try database.cached(sql).forEachRow([.text(record.conversation), .integer(lower), .integer(upper), .integer(account)]) { row in
            let id = row.int(0)
            if imported && importClaims[id] == .whole { return true }
            if row.int(11) > 0 { edited.append(candidates.count) }
            candidates.append(CrossSourceMatch.Candidate(
                id: id, timestamp: row.int(1), direction: MessageDirection(rawValue: row.text(2)) ?? .incoming,
                kind: MessageKind(rawValue: row.text(3)) ?? .chat, from: row.text(4),
                texts: [CrossSourceMatch.comparableText(row.optionalText(5))] + (row.bool(12) ? [CrossSourceMatch.encryptedText] : []),
                stanzaId: row.optionalText(6), stanzaIdBy: row.optionalText(7), stanzaIdTrusted: row.bool(8),
                originId: row.optionalText(9), messageId: row.optionalText(10)))
            return true
        }
        for index in edited {
            try database.cached("SELECT body FROM message_revisions WHERE message_row = ?").forEachRow([.integer(candidates[index].id)]) { row in
                candidates[index].texts.append(CrossSourceMatch.comparableText(row.optionalText(0)))
                return true
            }
        }
        if imported {
            // A text of a row this pass already matched is taken: the next identical message is another one.
            for index in candidates.indices {
                if case .texts(let taken)? = importClaims[candidates[index].id] { candidates[index].texts.removeAll { taken.contains($0) } }
            }
        }
        guard let match = CrossSourceMatch.best(for: record, among: candidates) else { return nil }
        if imported { importClaims[match.id, default: .texts([])].add(CrossSourceMatch.matchText(record)) }
        let adoptStanzaID = record.stanzaIdTrusted && record.stanzaId != nil && !match.stanzaIdTrusted
        if adoptStanzaID || (match.originId == nil && record.originId != nil) || (match.messageId == nil && record.messageId != nil) {
            // The exact rules then see later copies of this message (a resend, a MAM page) as duplicates, and
            // corrections find it by id.
            try database.run("""
                UPDATE messages SET
                    stanza_id = CASE WHEN ?2 THEN ?3 ELSE stanza_id END,
                    stanza_id_by = CASE WHEN ?2 THEN ?4 ELSE stanza_id_by END,
                    stanza_id_trusted = CASE WHEN ?2 THEN 1 ELSE stanza_id_trusted END,
                    origin_id = coalesce(origin_id, ?5),
                    message_id = coalesce(message_id, ?6)
                WHERE id = ?1
                """, [.integer(match.id), SQLValue(adoptStanzaID), SQLValue(record.stanzaId), SQLValue(record.stanzaIdBy ?? record.account),
                      SQLValue(record.originId), SQLValue(record.messageId)])
            if let bulkKeys {
                if adoptStanzaID, let stanzaId = record.stanzaId {
                    bulkKeys.recordTrusted(id: match.id, account: account, by: record.stanzaIdBy ?? record.account, stanzaId: stanzaId,
                                           conversation: record.conversation)
                }
                if let originId = record.originId { bulkKeys.record(.originID, account: account, record.conversation, originId, id: match.id) }
                if let messageId = record.messageId { bulkKeys.record(.messageID, account: account, record.conversation, messageId, id: match.id) }
            }
        }
        return match.id
    }
}
