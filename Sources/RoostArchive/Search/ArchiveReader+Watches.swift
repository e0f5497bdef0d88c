public import Foundation

/// Watch queries (`[watch NAME]`, `highlight_words`), compiled by the search's own parser and compiler
/// (`ArchiveReader.compile`) for one account. Compiled again after `lifetime`: relative dates (`date:1d..`) and the
/// names a query resolves (`from:boss`) follow the clock and the roster.
public struct WatchQueries: Sendable {
    /// Nil for a query in `failures`.
    let compiled: [CompiledQuery?]
    /// The same parsed and resolved queries, evaluated on a new message's own fields.
    let tests: [WatchTest]
    /// The queries that could not be compiled, by index: a name that fits no conversation, or several (`with:alice`
    /// before Alice is known). They select nothing until compiled again; the others are not held back by them.
    public let failures: [Int: ArchiveError]
    public let account: String?
    public let compiledAt: Date
    public static let lifetime: TimeInterval = 60

    public var count: Int { compiled.count }

    public func isStale(now: Date = Date()) -> Bool { now.timeIntervalSince(compiledAt) >= Self.lifetime }
}

/// A message just archived as the watches read it before any statement: the values its row was given
/// (`Ingestor.insert`), and its text folded once for every watch. A class: every watch reads the same one.
public final class WatchMessage: Sendable {
    let id: Int64
    let account: String
    let conversation: String
    let direction: MessageDirection
    let kind: MessageKind
    let fromJID: String
    let fromBare: String
    let toJID: String
    let toBare: String
    let senderName: String?
    let body: String?
    let subject: String?
    let attachments: Int
    let isReply: Bool
    /// Body, subject and sender name (the full-text index's columns), folded (`WatchTest.fold`).
    let folded: [UInt8]
    /// The sender name alone, folded (`from:NAME` looks for it in the index's `sender` column).
    let foldedSender: [UInt8]

    /// `record`, stored as row `id`.
    public init(id: Int64, _ record: MessageRecord) {
        self.id = id
        account = record.account
        conversation = record.conversation
        direction = record.direction
        kind = record.kind
        fromJID = record.from
        fromBare = JIDText.bare(record.from)
        toJID = record.to
        toBare = JIDText.bare(record.to)
        senderName = record.senderName
        body = record.body
        subject = record.subject
        attachments = record.attachments.count
        isReply = record.replyTo != nil
        folded = WatchTest.fold([record.body, record.subject, record.senderName].compactMap { $0 }.joined(separator: "\n"))
        foldedSender = record.senderName.map(WatchTest.fold) ?? []
    }
}

extension ArchiveReader {
    /// Compiles each of `queries` as `roost search` would for `account` (nil: every account's messages). A query the
    /// search would refuse (`.query`, `.names`) is one of `failures`; any other error fails them all.
    public func compileWatches(_ queries: [String], account: String?, now: Date = Date(),
                               timeZone: TimeZone = .current) throws(ArchiveError) -> WatchQueries {
        var compiled: [CompiledQuery?] = []
        var tests: [WatchTest] = []
        var failures: [Int: ArchiveError] = [:]
        let dates = DateResolver(now: now, timeZone: timeZone)
        for (index, query) in queries.enumerated() {
            do throws(ArchiveError) {
                let (node, counted) = try resolve(query, account: account)
                compiled.append(QueryCompiler.compile(node, now: now, timeZone: timeZone, conversationsCounted: counted))
                tests.append(WatchTest(node, dates: dates))
            } catch {
                switch error {
                case .query, .names: break
                default: throw error
                }
                failures[index] = error
                compiled.append(nil)
                tests.append(.known(false))
            }
        }
        return WatchQueries(compiled: compiled, tests: tests, failures: failures, account: account, compiledAt: now)
    }

    /// For each of `ids` (messages just archived) that some watch selects, the indexes of those watches, in order.
    /// `messages`: what the batch stored under those ids, which decides most watches without SQL (`WatchTest`: the
    /// query on the message's own fields and words); for the rest one statement reads the whole batch: each watch's
    /// search statement restricted to the rows it is left to decide, the watches joined by `UNION ALL` (with words, the
    /// full-text index is probed by rowid for these rows only). Nothing left to decide, no statement runs.
    public func watchMatches(_ watches: WatchQueries, ids: [Int64], messages: [Int64: WatchMessage] = [:]) throws(ArchiveError) -> [Int64: [Int]] {
        guard !ids.isEmpty, !watches.compiled.isEmpty else { return [:] }
        var matches: [Int64: [Int]] = [:]
        var undecided = [[Int64]](repeating: [], count: watches.compiled.count)
        for id in ids {
            let message = messages[id]
            for (index, test) in watches.tests.enumerated() {
                switch message.flatMap(test.verdict) {
                case true?: matches[id, default: []].append(index)
                case false?: break
                case nil: undecided[index].append(id)
                }
            }
        }
        guard undecided.contains(where: { !$0.isEmpty }) else { return matches }
        var parts: [String] = []
        var parameters: [SQLValue] = []
        for (index, query) in watches.compiled.enumerated() {
            guard let query else { continue }
            let list = SQLValue.text("[" + undecided[index].map(String.init).joined(separator: ",") + "]")
            let (sql, values) = MessageStatement(query).select("\(index), m.id", among: list)
            parts.append(sql)
            parameters += values
        }
        let sql = parts.joined(separator: " UNION ALL ")
        let selected = try withDatabase { database throws(SQLiteError) -> [(Int64, Int)] in
            var selected: [(Int64, Int)] = []
            // The SQL is the same from batch to batch (the rows travel as a parameter): prepared once per compilation.
            try database.cached(sql).forEachRow(parameters) { row in
                selected.append((row.int(1), Int(row.int(0))))
                return true
            }
            return selected
        }
        for (id, index) in selected { matches[id, default: []].append(index) }
        return selected.isEmpty ? matches : matches.mapValues { $0.sorted() }
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

/// A watch's query (the search's parsed query, its names resolved: `ArchiveReader.resolve`) evaluated on a new
/// message's own fields, as `QueryCompiler`'s SQL would evaluate it on the message's row: true or false where those
/// fields decide it, nil where only the statement can (`watchMatches` then asks it). AND, OR and NOT combine the
/// three values as SQL's do (NOT of unknown is unknown), so a decided answer is the statement's answer.
///
/// Decided from the row's columns that no later event changes (each as the SQL compares it: `=` on the `NOCASE`
/// columns and `LIKE` ignore ASCII case only): `from:`, `to:`, `with:`, `in:`, `account:`, `date:`/`after:`/`before:`
/// (the id), `is:in|out|chat|normal|headline|muc|reply`, `has:file`, and any file filter of a message without
/// attachments. Left to the statement: `is:edited|unread|read|retracted`, reactions, and the type or name of an
/// attachment (a correction, a marker, a reaction, a retraction or a download may change them after the insert).
///
/// Words only rule a message out: each word of a term (AND within a term) must be in the message's folded text
/// for the full-text index to find the term, so a term whose word is missing is false, and else unknown. Only words
/// of ASCII letters and digits are used (a term with others — Chinese, Japanese, Korean, accents — is unknown):
/// their folding agrees with `unicode61 remove_diacritics 2`. A term of symbols alone (`🎉`), which the search finds
/// as a substring of the body or subject, is false without it. These read the text the message arrived with; a
/// correction committed before the watches run changes the row's text, not this.
indirect enum WatchTest: Sendable {
    case known(Bool?)
    /// False unless the folded text holds every word (lowercase ASCII).
    case words([[UInt8]])
    /// False unless the body or subject holds these bytes.
    case substring([UInt8])
    /// Like `words`, in the sender name alone.
    case senderWords([[UInt8]])
    case column(Column, Comparison)
    case kind(MessageKind)
    case direction(MessageDirection)
    /// The id from this one on (true) or before it (false).
    case id(atLeast: Int64)
    case hasFile
    case isReply
    case all([WatchTest])
    case any([WatchTest])
    case not(WatchTest)

    enum Column: Sendable {
        case fromJID, fromBare, toJID, toBare, conversation, account, senderName
        /// `substr(m.from_jid, instr(m.from_jid, '/') + 1)`: a room occupant's nick.
        case nick
    }

    enum Comparison: Sendable {
        /// `=` by bytes.
        case equal(String)
        /// `=` ignoring ASCII case (`COLLATE NOCASE`).
        case equalIgnoringCase(String)
        /// `LIKE 'value%'` with `value` escaped (ignoring ASCII case).
        case startsWith(String)
        /// `instr(…, value) > 0`.
        case contains(String)
    }

    init(_ node: QueryNode, dates: DateResolver) {
        switch node {
        case .all:
            self = .known(true)
        case .text(let term):
            if !SearchText.hasTokenCharacters(term.text) {
                self = .substring(Array(term.text.utf8))
            } else {
                self = Self.words(term.text).map { .words($0) } ?? .known(nil)
            }
        case .and(let children):
            self = .all(children.map { WatchTest($0, dates: dates) })
        case .or(let children):
            self = .any(children.map { WatchTest($0, dates: dates) })
        case .not(let inner):
            self = .not(WatchTest(inner, dates: dates))
        case .filter(let filter):
            self = Self.filter(filter, dates: dates)
        }
    }

    /// `QueryCompiler.sql(_:rowid:)` of a filter.
    private static func filter(_ filter: QueryFilter, dates: DateResolver) -> WatchTest {
        switch filter {
        case .from(let value):
            if value.contains("@") {
                return value.contains("/") ? .column(.fromJID, .equal(value)) : .column(.fromBare, .equalIgnoringCase(value))
            }
            return sender(named: value, contact: nil)
        case .fromName(let name, let contact):
            return sender(named: name, contact: contact)
        case .conversation(let jid):
            return .column(.conversation, .equalIgnoringCase(jid))
        case .to(let value):
            if value.contains("@") {
                return value.contains("/") ? .column(.toJID, .equal(value)) : .column(.toBare, .equalIgnoringCase(value))
            }
            return .column(.toBare, .startsWith(value + "@"))
        case .with(let value):
            return conversation(value)
        case .room(let value):
            return .all([.kind(.groupchat), conversation(value)])
        case .account(let value):
            return .column(.account, value.contains("@") ? .equalIgnoringCase(value) : .startsWith(value + "@"))
        case .date(let from, let through):
            var parts: [WatchTest] = []
            if let from { parts.append(.id(atLeast: MessageID.base(forTimestamp: dates.span(from).start))) }
            if let through { parts.append(.not(.id(atLeast: MessageID.base(forTimestamp: dates.span(through).end)))) }
            return .all(parts)
        case .after(let expression):
            return .id(atLeast: MessageID.base(forTimestamp: dates.span(expression).start))
        case .before(let expression):
            return .not(.id(atLeast: MessageID.base(forTimestamp: dates.span(expression).start)))
        case .direction(let direction):
            return .direction(direction)
        case .kind(let kind):
            return .kind(kind)
        case .hasFile:
            return .hasFile
        case .hasMedia, .fileName, .fileType:
            // Among the message's attachments: none, none matches.
            return .all([.hasFile, .known(nil)])
        case .reply:
            return .isReply
        case .edited, .reaction, .unread, .retracted:
            return .known(nil)
        }
    }

    /// `QueryCompiler.sender(named:contact:)`.
    private static func sender(named name: String, contact: String?) -> WatchTest {
        let inRoom = WatchTest.any([.kind(.groupchat), .all([.direction(.incoming), .column(.conversation, .contains("/"))])])
        var nick: [WatchTest] = [inRoom, .column(.nick, .startsWith(name))]
        guard let contact else {
            return .any([.column(.fromBare, .startsWith(name + "@")), .column(.senderName, .equalIgnoringCase(name)), .all(nick)])
        }
        if SearchText.hasTokenCharacters(name) && !SearchText.containsCJK(name) {
            nick.insert(words(name).map { .senderWords($0) } ?? .known(nil), at: 0)
        } else {
            // The rooms' conversations as the counters list them, when the archive keeps them.
            nick.insert(.known(nil), at: 0)
        }
        return .any([.column(.fromBare, .equalIgnoringCase(contact)), .all(nick)])
    }

    /// `QueryCompiler.conversation(_:)`.
    private static func conversation(_ value: String) -> WatchTest {
        if value.contains("@") {
            return .column(.conversation, .equalIgnoringCase(value.contains("/") ? value : JIDText.bare(value)))
        }
        return .column(.conversation, .startsWith(value + "@"))
    }

    func verdict(_ message: WatchMessage) -> Bool? {
        switch self {
        case .known(let value):
            return value
        case .words(let words):
            return words.allSatisfy { Self.contains(message.folded, $0) } ? nil : false
        case .senderWords(let words):
            return words.allSatisfy { Self.contains(message.foldedSender, $0) } ? nil : false
        case .substring(let bytes):
            let found = [message.body, message.subject].contains { text in text.map { Self.contains(Array($0.utf8), bytes) } ?? false }
            return found ? nil : false
        case .column(let column, let comparison):
            guard let value = message.value(column) else { return false }
            return comparison.holds(for: value)
        case .kind(let kind):
            return message.kind == kind
        case .direction(let direction):
            return message.direction == direction
        case .id(let atLeast):
            return message.id >= atLeast
        case .hasFile:
            return message.attachments > 0
        case .isReply:
            return message.isReply
        case .all(let parts):
            var result: Bool? = true
            for part in parts {
                switch part.verdict(message) {
                case false?: return false
                case nil: result = nil
                case true?: break
                }
            }
            return result
        case .any(let parts):
            var result: Bool? = false
            for part in parts {
                switch part.verdict(message) {
                case true?: return true
                case nil: result = nil
                case false?: break
                }
            }
            return result
        case .not(let inner):
            return inner.verdict(message).map(!)
        }
    }

    /// The text as lowercase bytes: ASCII lowercased byte by byte (a live flood's messages, mostly), anything else
    /// folded by Foundation first (case and diacritics: `Café` holds `cafe`).
    static func fold(_ text: String) -> [UInt8] {
        let ascii = text.utf8.allSatisfy { $0 < 0x80 }
        let folded = ascii ? text : text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        return folded.utf8.map(Self.lowercased)
    }

    static func lowercased(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }

    static func contains(_ text: [UInt8], _ word: [UInt8]) -> Bool {
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

extension WatchTest.Comparison {
    func holds(for value: String) -> Bool {
        switch self {
        case .equal(let expected):
            return value.utf8.elementsEqual(expected.utf8)
        case .equalIgnoringCase(let expected):
            return value.utf8.elementsEqual(expected.utf8) { WatchTest.lowercased($0) == WatchTest.lowercased($1) }
        case .startsWith(let prefix):
            return value.utf8.starts(with: prefix.utf8) { WatchTest.lowercased($0) == WatchTest.lowercased($1) }
        case .contains(let part):
            return WatchTest.contains(Array(value.utf8), Array(part.utf8))
        }
    }
}

extension WatchMessage {
    fileprivate func value(_ column: WatchTest.Column) -> String? {
        switch column {
        case .fromJID: fromJID
        case .fromBare: fromBare
        case .toJID: toJID
        case .toBare: toBare
        case .conversation: conversation
        case .account: account
        case .senderName: senderName
        case .nick: fromJID.utf8.firstIndex(of: UInt8(ascii: "/")).map { String(fromJID[fromJID.utf8.index(after: $0)...]) } ?? fromJID
        }
    }
}
