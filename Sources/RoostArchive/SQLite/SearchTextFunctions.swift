internal import CSQLite

private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Registers the SQL functions the schema's FTS triggers and content view call:
/// `roost_fts_text(x)` (CJK runs → bigrams), `roost_fts_cjk(a, b, ...)` (distinct CJK characters) and
/// `roost_fts_deferring()` (this connection's `Database.defersFullTextUpdates`: see `SchemaV14`).
/// They must exist on every connection that writes messages or rebuilds the index, which is why
/// `Database` registers them on open; a foreign tool writing to `messages` fails loudly instead of
/// leaving the index out of step.
enum SearchTextFunctions {
    static func register(on database: Database) throws(SQLiteError) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        var rc = sqlite3_create_function_v2(database.handle, "roost_fts_text", 1, flags, nil, { context, _, arguments in
            guard let context, let argument = arguments?[0] else { return }
            SearchTextFunctions.ftsText(context: context, value: argument)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw database.error(code: rc, sql: nil) }
        rc = sqlite3_create_function_v2(database.handle, "roost_fts_cjk", -1, flags, nil, { context, count, arguments in
            guard let context, let arguments else { return }
            SearchTextFunctions.ftsCJK(context: context, count: Int(count), arguments: arguments)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw database.error(code: rc, sql: nil) }
        // The connection outlives its functions (closing it drops them), so an unretained pointer is safe.
        rc = sqlite3_create_function_v2(database.handle, "roost_fts_deferring", 0, SQLITE_UTF8 | SQLITE_INNOCUOUS,
                                        Unmanaged.passUnretained(database).toOpaque(), { context, _, _ in
            guard let context, let owner = sqlite3_user_data(context) else { return }
            let database = Unmanaged<Database>.fromOpaque(owner).takeUnretainedValue()
            sqlite3_result_int(context, database.defersFullTextUpdates ? 1 : 0)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw database.error(code: rc, sql: nil) }
    }

    private static func utf8(of value: OpaquePointer) -> UnsafeBufferPointer<UInt8>? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
        return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value)))
    }

    fileprivate static func ftsText(context: OpaquePointer, value: OpaquePointer) {
        guard let bytes = utf8(of: value) else { return sqlite3_result_null(context) }
        guard SearchText.mayContainCJK(bytes) else { return sqlite3_result_value(context, value) }
        var result = SearchText.indexed(String(decoding: bytes, as: UTF8.self))
        result.withUTF8 { out in
            sqlite3_result_text(context, UnsafeRawPointer(out.baseAddress!).assumingMemoryBound(to: CChar.self),
                                Int32(out.count), transientDestructor)
        }
    }

    fileprivate static func ftsCJK(context: OpaquePointer, count: Int, arguments: UnsafeMutablePointer<OpaquePointer?>) {
        var texts: [String] = []
        for index in 0..<count {
            guard let value = arguments[index], let bytes = utf8(of: value), SearchText.mayContainCJK(bytes) else { continue }
            texts.append(String(decoding: bytes, as: UTF8.self))
        }
        guard !texts.isEmpty else { return sqlite3_result_null(context) }
        var result = SearchText.singles(texts)
        if result.isEmpty { return sqlite3_result_null(context) }
        result.withUTF8 { out in
            sqlite3_result_text(context, UnsafeRawPointer(out.baseAddress!).assumingMemoryBound(to: CChar.self),
                                Int32(out.count), transientDestructor)
        }
    }
}
