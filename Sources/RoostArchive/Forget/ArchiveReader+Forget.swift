public import Foundation

extension ArchiveReader {
    /// The ids of every message matching `query` (the language of `roost search`), oldest first: what `roost forget`
    /// hands to `ArchiveWriter.forget` once confirmed. Read in one snapshot; a message archived after it is not among
    /// them.
    public func messageIDs(matching query: String, account: String? = nil, now: Date = Date(),
                           timeZone: TimeZone = .current) throws(ArchiveError) -> [Int64] {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        let (sql, parameters) = Self.searchSQL(compiled, order: .oldestFirst, limit: -1, offset: 0, columns: "m.id")
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
