import RoostArchive

/// How `roost search --json` and `roost log --json` show reactions, replies, retractions, receipts and read state.
extension MessageSemantics {
    /// The fields added to a message's JSON object (documented in README and roost(1)).
    var jsonMembers: [(String, JSONValue)] {
        [
            ("reactions", .array(reactions.map { .object(["emoji": .string($0.emoji), "from": .string($0.own ? "me" : $0.from),
                                                          "own": .bool($0.own)]) })),
            ("reply_to", reply.map { reply in
                .object(["id": .string(reply.id), "author": .string(reply.author),
                         "archive_id": reply.messageRow.map { .int($0) } ?? .null, "from": .string(reply.sender),
                         "body": .string(reply.text)])
            } ?? .null),
            ("retracted", retraction.map { .object(["by": .string($0.by), "at": .string(TimeText.utc($0.at)),
                                                    "reason": .string($0.reason)]) } ?? .null),
            ("receipt", .string(peerProgress?.rawValue)),
            ("unread", .bool(unread)),
        ]
    }
}
