internal import CSQLite

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The fallback deduplication key of a message (see the rules at the top of `SchemaV1`):
/// - `o|conversation|direction|origin-id` (+ `|from` for groupchat) when an origin-id exists;
/// - `m|conversation|from|message id|body hash` when a stanza id exists;
/// - `t|conversation|from|timestamp seconds|body hash` otherwise.
///
/// How it is stored (`SchemaV13`): an origin-id key is made only of columns of its own row that never change
/// after the insert (conversation, direction, type, from_jid, origin_id), so such a row stores the one-letter
/// `storedOriginMarker` in `messages.dedup_key` instead of the ~60-byte key, and `messages_dedup` (partial)
/// indexes only the other rows; the origin-id rows are found through `messages_origin`. The SQL function
/// `roost_dedup_key(dedup_key, conversation, direction, type, from_jid, origin_id)` (registered on every
/// connection by `Database`) gives a row's full key whichever form it holds: every query comparing keys goes
/// through it (`DedupKey.fullKeySQL`, `DedupKey.lookupSQL`). The message-id and timestamp keys keep the body's
/// hash, and a correction changes the body, so they stay stored in full.
enum DedupKey {
    static func make(for record: MessageRecord) -> String {
        if let originId = record.originId, !originId.isEmpty {
            return origin(conversation: record.conversation, direction: record.direction.rawValue, type: record.kind.rawValue,
                          from: record.from, originId: originId)
        }
        let conversation = record.conversation.lowercased()
        let bodyHash = BodyHash.hex(record.body)
        if let messageId = record.messageId, !messageId.isEmpty {
            return "m|\(conversation)|\(record.from)|\(messageId)|\(bodyHash)"
        }
        let seconds = record.timestamp >= 0 ? record.timestamp / 1000 : (record.timestamp - 999) / 1000
        return "t|\(conversation)|\(record.from)|\(seconds)|\(bodyHash)"
    }

    /// Whether a conversation is a private one with a room's occupant (`room@service/nick`; every other conversation
    /// is a bare JID): its copies are one message whatever their trusted stanza-ids (`SchemaV1`, rule 5).
    static func isRoomPrivate(_ conversation: String) -> Bool {
        conversation.utf8.contains(UInt8(ascii: "/"))
    }

    /// The condition `isRoomPrivate` as SQL, on the conversation column `column`.
    static func roomPrivateSQL(_ column: String) -> String { "instr(\(column), '/') > 0" }

    /// The origin-id key from the columns of a row (or a record's fields).
    static func origin(conversation: String, direction: String, type: String, from: String, originId: String) -> String {
        var key = "o|\(conversation.lowercased())|\(direction)|\(originId)"
        if type == MessageKind.groupchat.rawValue { key += "|\(from)" }
        return key
    }

    /// What `messages.dedup_key` holds for an origin-id key (`SchemaV13`; the SQL below and the migration's spell it
    /// out, as the index definition must never change).
    static let storedOriginMarker = "o"

    /// What `messages.dedup_key` stores for a new row of `record` whose key is `key`.
    static func stored(_ key: String, for record: MessageRecord) -> String {
        originID(of: record) == nil ? key : storedOriginMarker
    }

    /// The record's origin-id when its key is an origin-id key (the `?3` of `lookupSQL`), else nil.
    static func originID(of record: MessageRecord) -> String? {
        guard let originId = record.originId, !originId.isEmpty else { return nil }
        return originId
    }

    /// The full key of a `messages` row, as SQL; `alias` is the table's alias in the query (`m.`), or empty.
    static func fullKeySQL(_ alias: String = "") -> String {
        "roost_dedup_key(\(alias)dedup_key, \(alias)conversation, \(alias)direction, \(alias)type, \(alias)from_jid, \(alias)origin_id)"
    }

    /// The condition of the partial index `messages_dedup`, repeated verbatim by the queries that use it.
    static let indexedCondition = "dedup_key <> 'o'"

    /// The ids of the rows of account `?1` whose full key is `?2` (`?3` the key's origin-id, NULL for another
    /// kind), plus `extra` (a condition on `messages`), smallest first: the origin-id rows through
    /// `messages_origin`, the others through `messages_dedup`. Exactly the rows `dedup_key = ?2` found before v13.
    static func lookupSQL(extra: String = "1") -> String {
        switch extra {
        case "1": lookupAny
        case "stanza_id_trusted = 0": lookupUntrusted
        default: makeLookupSQL(extra: extra)
        }
    }

    /// The two forms every live message asks for, built once (the text is also the statement cache's key).
    private static let lookupAny = makeLookupSQL(extra: "1")
    private static let lookupUntrusted = makeLookupSQL(extra: "stanza_id_trusted = 0")

    private static func makeLookupSQL(extra: String) -> String {
        """
        SELECT id FROM messages WHERE id IN (
            SELECT id FROM messages WHERE account_id = ?1 AND origin_id = ?3 AND +dedup_key = 'o' AND \(fullKeySQL()) = ?2
            UNION ALL
            SELECT id FROM messages WHERE account_id = ?1 AND dedup_key = ?2 AND \(indexedCondition))
        AND \(extra) ORDER BY id LIMIT 1
        """
    }

    static func register(on database: Database) throws(SQLiteError) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let rc = sqlite3_create_function_v2(database.handle, "roost_dedup_key", 6, flags, nil, { context, _, arguments in
            guard let context, let arguments else { return }
            DedupKey.fullKey(context: context, arguments: arguments)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw database.error(code: rc, sql: nil) }
    }

    private static func text(_ value: OpaquePointer?) -> String? {
        guard let value, sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    fileprivate static func fullKey(context: OpaquePointer, arguments: UnsafeMutablePointer<OpaquePointer?>) {
        guard let stored = text(arguments[0]), stored == storedOriginMarker else { return sqlite3_result_value(context, arguments[0]) }
        guard let conversation = text(arguments[1]), let direction = text(arguments[2]), let type = text(arguments[3]),
              let from = text(arguments[4]), let originId = text(arguments[5]) else {
            return sqlite3_result_error(context, "roost_dedup_key: a row marked as an origin-id key lacks one of its columns", -1)
        }
        var key = origin(conversation: conversation, direction: direction, type: type, from: from, originId: originId)
        key.withUTF8 { out in
            sqlite3_result_text(context, UnsafeRawPointer(out.baseAddress!).assumingMemoryBound(to: CChar.self),
                                Int32(out.count), transientDestructor)
        }
    }
}
