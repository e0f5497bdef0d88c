public import Foundation

extension ArchiveReader {
    /// The ids of every message matching `query` (the language of `roost search`), oldest first: what `roost forget`
    /// hands to `ArchiveWriter.forget` once confirmed. Read in one snapshot; a message archived after it is not among
    /// them.
    public func messageIDs(matching query: String, account: String? = nil, now: Date = Date(),
                           timeZone: TimeZone = .current) throws(ArchiveError) -> [Int64] {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        let (sql, parameters) = MessageStatement(compiled).select("m.id", order: .oldestFirst)
        return try withDatabase { database throws(SQLiteError) -> [Int64] in
            var ids: [Int64] = []
            try database.read { () throws(SQLiteError) in
                try database.prepare(sql).forEachRow(parameters) { row in
                    ids.append(row.int(0))
                    return true
                }
            }
            return ids
        }
    }
}

extension ArchiveReader {
    /// What a retention rule removes (`[retention]`): the messages older than `cutoff` (UTC ms), of `conversation` only
    /// (a bare JID, exactly; its private conversations with a room's occupants too), or of every conversation but
    /// `excluding` when nil. Oldest first, with the number of conversations they are in.
    public func messageIDs(before cutoff: Int64, conversation: String?, excluding: [String] = []) throws(ArchiveError)
        -> (ids: [Int64], conversations: Int) {
        var sql = "SELECT id, conversation FROM messages WHERE timestamp < ?1"
        var parameters: [SQLValue] = [.integer(cutoff)]
        if let conversation {
            sql += " AND (conversation = ?2 OR conversation LIKE ?3 ESCAPE '\\')"
            parameters += [.text(conversation), .text(QueryCompiler.likePattern(conversation) + "/%")]
        } else {
            for jid in excluding {
                let n = parameters.count
                sql += " AND conversation <> ?\(n + 1) AND conversation NOT LIKE ?\(n + 2) ESCAPE '\\'"
                parameters += [.text(jid), .text(QueryCompiler.likePattern(jid) + "/%")]
            }
        }
        sql += " ORDER BY id"
        return try withDatabase { database throws(SQLiteError) -> (ids: [Int64], conversations: Int) in
            var ids: [Int64] = []
            var conversations = Set<String>()
            try database.read { () throws(SQLiteError) in
                try database.prepare(sql).forEachRow(parameters) { row in
                    ids.append(row.int(0))
                    conversations.insert(row.text(1).lowercased())
                    return true
                }
            }
            return (ids, conversations.count)
        }
    }
}
