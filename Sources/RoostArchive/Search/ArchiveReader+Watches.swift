public import Foundation

/// Watch queries (`[watch NAME]`, `highlight_words`), compiled by the search's own parser and compiler
/// (`ArchiveReader.compile`) for one account. Compiled again after `lifetime`: relative dates (`date:1d..`) and the
/// names a query resolves (`from:boss`) follow the clock and the roster.
public struct WatchQueries: Sendable {
    fileprivate let compiled: [CompiledQuery]
    fileprivate let prefilters: [WatchPrefilter]
    public let account: String?
    public let compiledAt: Date
    public static let lifetime: TimeInterval = 60

    public var count: Int { compiled.count }

    public func isStale(now: Date = Date()) -> Bool { now.timeIntervalSince(compiledAt) >= Self.lifetime }
}

extension ArchiveReader {
    /// Compiles each of `queries` as `roost search` would for `account` (nil: every account's messages).
    public func compileWatches(_ queries: [String], account: String?, now: Date = Date(),
                               timeZone: TimeZone = .current) throws(ArchiveError) -> WatchQueries {
        var compiled: [CompiledQuery] = []
        var prefilters: [WatchPrefilter] = []
        for query in queries {
            compiled.append(try compile(query, now: now, timeZone: timeZone, account: account))
            prefilters.append((try? QueryParser.parse(query)).map(WatchPrefilter.init) ?? .any)
        }
        return WatchQueries(compiled: compiled, prefilters: prefilters, account: account, compiledAt: now)
    }

    /// For each of `ids` (messages just archived) that some watch selects, the indexes of those watches. One
    /// statement for the whole batch: each watch's search statement restricted to the batch's rows it may select,
    /// the watches joined by `UNION ALL` (with words, the full-text index is probed by rowid for these rows only).
    /// `texts`: each message's body, subject and sender name, which rule out the watches whose words a message lacks
    /// (`WatchPrefilter`) before any statement runs; none left, none runs.
    public func watchMatches(_ watches: WatchQueries, ids: [Int64], texts: [Int64: String] = [:]) throws(ArchiveError) -> [Int64: [Int]] {
        guard !ids.isEmpty, !watches.compiled.isEmpty else { return [:] }
        let folded = ids.map { texts[$0].map(WatchPrefilter.fold) }
        let candidates = watches.prefilters.map { prefilter in
            zip(ids, folded).compactMap { id, text in text.map(prefilter.admits) ?? true ? id : nil }
        }
        guard candidates.contains(where: { !$0.isEmpty }) else { return [:] }
        var parts: [String] = []
        var parameters: [SQLValue] = []
        for (index, query) in watches.compiled.enumerated() {
            let list = SQLValue.text("[" + candidates[index].map(String.init).joined(separator: ",") + "]")
            let (sql, values) = MessageStatement(query).select("\(index), m.id", among: list)
            parts.append(sql)
            parameters += values
        }
        let sql = parts.joined(separator: " UNION ALL ")
        return try withDatabase { database throws(SQLiteError) -> [Int64: [Int]] in
            var matches: [Int64: [Int]] = [:]
            // The SQL is the same from batch to batch (the rows travel as a parameter): prepared once per compilation.
            try database.cached(sql).forEachRow(parameters) { row in
                matches[row.int(1), default: []].append(Int(row.int(0)))
                return true
            }
            return matches
        }
    }

    /// What a watch on `query` would have notified: the incoming messages it selects since `since` (milliseconds),
    /// oldest first, as `roost watch test` lists them.
    public func watchHistory(query: String, account: String?, since: Int64, now: Date = Date(), timeZone: TimeZone = .current,
                             _ body: (MessageRow) -> Bool) throws(ArchiveError) {
        let compiled = try compile(query, now: now, timeZone: timeZone, account: account)
        var statement = MessageStatement(compiled)
        statement.restrict("\(statement.idColumn) >= ?", [.integer(MessageID.base(forTimestamp: since))])
        statement.restrict("m.direction = 'in'")
        let (sql, parameters) = statement.select(MessageRowReading.columns, order: .oldestFirst)
        let highlighter = Highlighter(terms: compiled.highlightTerms)
        try withDatabase { database throws(SQLiteError) in
            try database.read { () throws(SQLiteError) in
                let reading = try MessageRowReading(database)
                try database.prepare(sql).forEachRow(parameters) { row throws(SQLiteError) in body(try reading.row(row, highlighter: highlighter)) }
            }
        }
    }
}

/// What a message's words must hold for a query to possibly select it, read from the parsed query: each word of a
/// text term (AND within a term and under AND, any under OR); filters and negations tell nothing. Never rules out a
/// message the statement would select — a term's words, folded, are substrings of the folded text wherever the
/// full-text index finds them — so only words of ASCII letters and digits are used (a term with others, Chinese,
/// Japanese, Korean or accents, tells nothing): their folding agrees with `unicode61 remove_diacritics 2`.
enum WatchPrefilter: Sendable {
    case any
    /// Lowercase ASCII.
    case words([[UInt8]])
    indirect case all([WatchPrefilter])
    indirect case either([WatchPrefilter])

    init(_ node: QueryNode) {
        switch node {
        case .all, .filter, .not:
            self = .any
        case .text(let term):
            self = Self.words(term.text).map { .words($0) } ?? .any
        case .and(let children):
            let parts = children.map(WatchPrefilter.init).filter { if case .any = $0 { false } else { true } }
            self = parts.isEmpty ? .any : .all(parts)
        case .or(let children):
            let parts = children.map(WatchPrefilter.init)
            self = parts.contains { if case .any = $0 { true } else { false } } ? .any : .either(parts)
        }
    }

    func admits(_ folded: [UInt8]) -> Bool {
        switch self {
        case .any: true
        case .words(let words): words.allSatisfy { Self.contains(folded, $0) }
        case .all(let parts): parts.allSatisfy { $0.admits(folded) }
        case .either(let parts): parts.contains { $0.admits(folded) }
        }
    }

    /// The text as lowercase bytes: ASCII lowercased byte by byte (a live flood's messages, mostly), anything else
    /// folded by Foundation first (case and diacritics: `Café` holds `cafe`).
    static func fold(_ text: String) -> [UInt8] {
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        let folded = ascii ? text : text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        return folded.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
    }

    private static func contains(_ text: [UInt8], _ word: [UInt8]) -> Bool {
        guard let first = word.first, text.count >= word.count else { return word.isEmpty }
        var start = 0
        while start <= text.count - word.count {
            if text[start] == first, text[start..<(start + word.count)].elementsEqual(word) { return true }
            start += 1
        }
        return false
    }

    /// The words of a term made only of ASCII; nil for any other (or one without letters or digits).
    private static func words(_ text: String) -> [[UInt8]]? {
        guard text.unicodeScalars.allSatisfy(\.isASCII) else { return nil }
        let words = text.lowercased().split { !($0.isLetter || $0.isNumber) }.map { Array($0.utf8) }
        return words.isEmpty ? nil : words
    }
}
