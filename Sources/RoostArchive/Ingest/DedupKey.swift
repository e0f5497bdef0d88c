/// The fallback deduplication key of a message (see the rules at the top of `SchemaV1`):
/// - `o|conversation|direction|origin-id` (+ `|from` for groupchat) when an origin-id exists;
/// - `m|conversation|from|message id|body hash` when a stanza id exists;
/// - `t|conversation|from|timestamp seconds|body hash` otherwise.
enum DedupKey {
    static func make(for record: MessageRecord) -> String {
        let conversation = record.conversation.lowercased()
        if let originId = record.originId, !originId.isEmpty {
            var key = "o|\(conversation)|\(record.direction.rawValue)|\(originId)"
            if record.kind == .groupchat { key += "|\(record.from)" }
            return key
        }
        let bodyHash = BodyHash.hex(record.body)
        if let messageId = record.messageId, !messageId.isEmpty {
            return "m|\(conversation)|\(record.from)|\(messageId)|\(bodyHash)"
        }
        let seconds = record.timestamp >= 0 ? record.timestamp / 1000 : (record.timestamp - 999) / 1000
        return "t|\(conversation)|\(record.from)|\(seconds)|\(bodyHash)"
    }
}
