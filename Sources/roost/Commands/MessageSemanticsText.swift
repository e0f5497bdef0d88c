import RoostArchive

/// How `roost search`, `roost log` (and `--json`) show reactions, replies, retractions, receipts and read state.
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

    /// `message retracted (by bob@example.org, at 2026-11-30 14:02)`.
    var tombstone: String? {
        retraction.map { "message retracted (by \($0.by), at \(TimeText.local($0.at))\($0.reason.map { ": \($0)" } ?? ""))" }
    }

    /// `↪ bob: the first line of what bob wrote…` above a reply.
    var replyContext: String? {
        guard let reply else { return nil }
        let who = reply.sender ?? reply.author ?? "?"
        guard reply.messageRow != nil else { return "↪ (a message not in the archive)" }
        guard let text = reply.text else { return "↪ \(who): (retracted)" }
        let line = text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        return "↪ \(who): " + (line.count > 60 ? line.prefix(59) + "…" : line)
    }

    /// ` ✓` delivered, ` ✓✓` read.
    var tick: String {
        switch peerProgress {
        case .delivered: " ✓"
        case .read: " ✓✓"
        case nil: ""
        }
    }
}
