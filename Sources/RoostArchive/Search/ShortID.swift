/// The short id text output shows for a message (`roost show ID`, `roost log --around ID`), like git's
/// abbreviated hashes: eight characters of base 32 (digits and lower-case letters without i, l, o, u).
///
/// Archive ids are time-ordered (`timestamp << 20 | n`), so their own digits would differ only at the end
/// and repeat every few minutes; the short id is taken from the id passed through a bijective mix (the
/// SplitMix64 finaliser), so nearby messages get unrelated short ids and 40 bits keep them apart (two of a
/// million messages share one about once). A prefix of four or more characters is accepted where it is
/// unique; `roost show` lists the messages when it is not. The full decimal id (`--json`'s `id`) always works.
public enum ShortID {
    public static let length = 8
    public static let minimumPrefix = 4
    static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")

    public static func text(for id: Int64) -> String {
        let mixed = mix(UInt64(bitPattern: id))
        // Eight ASCII bytes: written straight into a small string (one per printed line of log and search).
        return String(unsafeUninitializedCapacity: length) { buffer in
            for index in 0..<length {
                let shift = UInt64(64 - 5 * (index + 1))
                buffer[index] = alphabetBytes[Int((mixed >> shift) & 31)]
            }
            return length
        }
    }

    private static let alphabetBytes = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// What the user typed, normalised (lower case; `i`, `l` → 1, `o` → 0), or nil when it cannot be a short id.
    public static func normalised(_ typed: String) -> String? {
        let text = String(typed.lowercased().map { character -> Character in
            switch character {
            case "i", "l": "1"
            case "o": "0"
            default: character
            }
        })
        guard (minimumPrefix...length).contains(text.count), text.allSatisfy(alphabet.contains) else { return nil }
        return text
    }

    /// A full archive id typed in decimal (as `--json` prints it).
    public static func decimalID(_ typed: String) -> Int64? {
        guard typed.count >= 10, typed.allSatisfy(\.isNumber) else { return nil }
        return Int64(typed)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension ArchiveReader {
    /// The messages `typed` (a short id, a prefix of one, or a decimal id) names: none, one, or several when
    /// a prefix is not unique. Reads the ids from an index, not the messages.
    public func messages(withID typed: String) throws(ArchiveError) -> [MessageRow] {
        var ids: [Int64] = []
        if let id = ShortID.decimalID(typed) {
            ids = [id]
        } else if let prefix = ShortID.normalised(typed) {
            try withDatabase { database throws(SQLiteError) in
                try database.prepare("SELECT id FROM messages").forEachRow { row in
                    let id = row.int(0)
                    if ShortID.text(for: id).hasPrefix(prefix) { ids.append(id) }
                    return ids.count < 20
                }
            }
        } else {
            return []
        }
        guard !ids.isEmpty else { return [] }
        var rows: [MessageRow] = []
        try withDatabase { database throws(SQLiteError) in
            let reading = try MessageRowReading(database)
            let statement = try database.prepare("SELECT \(MessageRowReading.columns) FROM messages m WHERE m.id = ?")
            for id in ids {
                try statement.forEachRow([.integer(id)]) { row throws(SQLiteError) in
                    rows.append(try reading.row(row))
                    return false
                }
            }
        }
        return rows
    }

    /// Up to `before` messages of the same account and conversation before `row` and `after` after it, oldest
    /// first, with `row` among them.
    public func context(of row: MessageRow, before: Int, after: Int) throws(ArchiveError) -> [MessageRow] {
        var earlier: [MessageRow] = []
        var later: [MessageRow] = []
        try withDatabase { database throws(SQLiteError) in
            let reading = try MessageRowReading(database)
            let scope = "m.conversation = ?1 AND m.account_id = (SELECT id FROM accounts WHERE jid = ?2)"
            try database.prepare("SELECT \(MessageRowReading.columns) FROM messages m WHERE \(scope) AND m.id < ?3 ORDER BY m.id DESC LIMIT ?4")
                .forEachRow([.text(row.conversation), .text(row.account), .integer(row.id), .integer(Int64(before))]) { found throws(SQLiteError) in
                    earlier.append(try reading.row(found))
                    return true
                }
            try database.prepare("SELECT \(MessageRowReading.columns) FROM messages m WHERE \(scope) AND m.id > ?3 ORDER BY m.id ASC LIMIT ?4")
                .forEachRow([.text(row.conversation), .text(row.account), .integer(row.id), .integer(Int64(after))]) { found throws(SQLiteError) in
                    later.append(try reading.row(found))
                    return true
                }
        }
        return earlier.reversed() + [row] + later
    }
}
