import Foundation
@testable import RoostArchive

/// Target `query`: the search language (`QueryParser` → `QueryCompiler` → SQL), run against a real, empty archive.
///
/// Properties:
/// - any text is either a query, a `QueryError` naming a position inside the text, or a name that matches no
///   contact (or several), never a crash;
/// - a query runs: SQLite accepts the SQL with exactly its parameters (a malformed query is never an SQL error);
/// - the compiler never emits SQL outside its parameters: with string literals removed, every word of the
///   SQL is one the compiler itself writes (`identifiers`), and its only literals are its own.
enum QueryFuzz {
    /// One empty archive per process, made on first use.
    static let archive: Result<ArchiveReader, any Error> = Result { try openArchive() }

    static let identifiers: Set<String> = [
        "SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "IN", "IS", "NULL", "LIKE", "ESCAPE", "EXISTS", "MATCH", "COLLATE",
        "NOCASE", "coalesce", "instr", "lower", "m", "f", "a", "id", "rowid", "message_fts", "messages", "accounts", "attachments",
        "jid", "account_id", "conversation", "from_bare", "from_jid", "to_bare", "to_jid", "direction", "type", "edited",
        "timestamp", "body", "subject", "sender_name", "message_row", "name", "url", "mime",
        // `from:NAME` in rooms: the nick after the `/` of the sender's address, the rooms listed by their counters.
        "substr", "conversation_counts", "groupchat",
    ]
    static let literals: Set<String> = ["'\\'", "''", "'groupchat'", "'in'", "'/'"]

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let reader: ArchiveReader
        do { reader = try archive.get() } catch { return "cannot create the archive: \(error)" }
        let now = Date(timeIntervalSince1970: 1_768_478_400)
        let compiled: CompiledQuery
        do {
            compiled = try reader.compile(text, now: now, timeZone: TimeZone(identifier: "Europe/Berlin")!)
        } catch {
            // A name that matches no contact (or several) is the user's mistake, said in words (`roost search with:bob`).
            if case .names = error { return nil }
            guard case .query(let problem) = error else { return "compiling \(text.debugDescription) failed with \(error)" }
            guard problem.column >= 1, problem.column <= text.count + 1 else {
                return "\(text.debugDescription): error at column \(problem.column) outside the text"
            }
            return nil
        }
        if let stray = stray(in: compiled.whereSQL) { return "\(text.debugDescription) put \(stray) into the SQL: \(compiled.whereSQL)" }
        do {
            _ = try reader.search(query: text, limit: 1, now: now, timeZone: TimeZone(identifier: "Europe/Berlin")!)
            _ = try reader.search(query: text, order: .rank, limit: 1, now: now, timeZone: TimeZone(identifier: "UTC")!)
        } catch {
            return "\(text.debugDescription) compiled but did not run: \(error)"
        }
        return nil
    }

    /// A word or literal in `sql` the compiler does not write itself, or nil.
    static func stray(in sql: String) -> String? {
        var rest = Substring(sql)
        var words: [Substring] = []
        while let quote = rest.firstIndex(of: "'") {
            words.append(rest[..<quote])
            let afterQuote = rest.index(after: quote)
            guard let close = rest[afterQuote...].firstIndex(of: "'") else { return "an unclosed quote" }
            let literal = String(rest[quote...close])
            guard literals.contains(literal) else { return "the literal \(literal)" }
            rest = rest[rest.index(after: close)...]
        }
        words.append(rest)
        for part in words {
            for word in part.split(whereSeparator: { !($0.isLetter || $0 == "_") }) where !identifiers.contains(String(word)) {
                return "the word \(word)"
            }
        }
        return nil
    }

    static func openArchive() throws -> ArchiveReader {
        let path = NSTemporaryDirectory() + "roost-fuzz-query-\(getpid())/archive.sqlite"
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = try ArchiveWriter(path: path)
        return try ArchiveReader(path: path)
    }
}
