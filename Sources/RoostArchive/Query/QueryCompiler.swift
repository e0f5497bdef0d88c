import Foundation

/// Translates a `QueryNode` into parameterised SQL plus one FTS5 MATCH expression.
///
/// The top-level conjunction is split: conjuncts made only of text terms become one FTS5 expression
/// (driving the search through the full-text index in rowid = time order); the rest (filters, or text mixed
/// with filters under OR/NOT) become SQL, where a text sub-expression is `m.id IN (SELECT rowid FROM
/// message_fts WHERE message_fts MATCH ?)`. Every term reaches FTS5 as a double-quoted string with quotes
/// doubled, so `NEAR`, `*`, `:`, `^`, parentheses typed by the user are plain text to FTS5.
struct QueryCompiler {
    private let resolver: DateResolver
    /// The archive keeps `conversation_counts` (`SchemaV10`; a reader may open an older archive).
    private let conversationsCounted: Bool
    private var parameters: [SQLValue] = []
    private var highlightTerms: [String] = []

    private init(resolver: DateResolver, conversationsCounted: Bool) {
        self.resolver = resolver
        self.conversationsCounted = conversationsCounted
    }

    static func compile(_ node: QueryNode, now: Date, timeZone: TimeZone, conversationsCounted: Bool = false) -> CompiledQuery {
        var compiler = QueryCompiler(resolver: DateResolver(now: now, timeZone: timeZone), conversationsCounted: conversationsCounted)
        compiler.collectHighlights(node, negated: false)
        return compiler.compileTop(node)
    }

    private mutating func compileTop(_ node: QueryNode) -> CompiledQuery {
        let conjuncts: [QueryNode] = switch node {
        case .all: []
        case .and(let children): children
        default: [node]
        }
        var positive: [String] = []
        var negative: [String] = []
        var others: [QueryNode] = []
        for conjunct in conjuncts {
            if case .not(let inner) = conjunct, Self.ftsExpressible(inner) {
                negative.append(Self.fts(inner))
            } else if Self.ftsExpressible(conjunct) {
                positive.append(Self.fts(conjunct))
            } else {
                others.append(conjunct)
            }
        }
        var ftsExpression: String?
        var clauses: [String] = []
        if positive.isEmpty {
            for expression in negative {
                parameters.append(.text(expression))
                clauses.append("m.id NOT IN (SELECT rowid FROM message_fts WHERE message_fts MATCH ?)")
            }
        } else {
            var expression = positive.count == 1 ? positive[0] : "(" + positive.joined(separator: " AND ") + ")"
            if !negative.isEmpty {
                expression = "(\(expression)) NOT (" + negative.joined(separator: " OR ") + ")"
            }
            ftsExpression = expression
        }
        let rowid = ftsExpression == nil ? "m.id" : "f.rowid"
        for other in others {
            clauses.append(sql(other, rowid: rowid))
        }
        return CompiledQuery(ftsExpression: ftsExpression, whereSQL: clauses.isEmpty ? "1" : clauses.joined(separator: " AND "),
                             parameters: parameters, highlightTerms: highlightTerms)
    }

    // MARK: Full text

    private static func isNot(_ node: QueryNode) -> Bool {
        if case .not = node { return true }
        return false
    }

    /// True when the subtree can be one FTS5 expression (FTS5 has no unary NOT: a negation must sit
    /// in an AND next to a positive term).
    static func ftsExpressible(_ node: QueryNode) -> Bool {
        switch node {
        case .text(let term):
            return SearchText.hasTokenCharacters(term.text)
        case .and(let children):
            return children.contains { !isNot($0) } && children.allSatisfy { child in
                if case .not(let inner) = child { return ftsExpressible(inner) }
                return ftsExpressible(child)
            }
        case .or(let children):
            return children.allSatisfy { !isNot($0) && ftsExpressible($0) }
        case .all, .filter, .not:
            return false
        }
    }

    static func fts(_ node: QueryNode) -> String {
        switch node {
        case .text(let term):
            return ftsTerm(term)
        case .and(let children):
            let positive = children.filter { !isNot($0) }.map(fts)
            let negative = children.compactMap { child -> String? in
                if case .not(let inner) = child { return fts(inner) }
                return nil
            }
            let joined = "(" + positive.joined(separator: " AND ") + ")"
            return negative.isEmpty ? joined : "(" + joined + " NOT (" + negative.joined(separator: " OR ") + "))"
        case .or(let children):
            return "(" + children.map(fts).joined(separator: " OR ") + ")"
        case .all, .filter, .not:
            return "\"\""
        }
    }

    /// `text` as an FTS5 string. By Unicode scalar, not by Character: a `"` followed by a combining mark is one
    /// Character, and doubling only whole-Character quotes left such a quote alone (found by the query fuzzer).
    static func quoted(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        result.append("\"")
        for scalar in text.unicodeScalars {
            result.append(scalar)
            if scalar == "\"" { result.append("\"") }
        }
        result.append("\"")
        return String(result)
    }

    /// One term as FTS5 syntax, rewritten like the indexed text (see `SearchText`).
    static func ftsTerm(_ term: TextTerm) -> String {
        if term.isPhrase {
            let indexed = SearchText.indexed(term.text).trimmingCharacters(in: .whitespaces)
            let phrase = quoted(indexed)
            // Keep multi-token CJK phrases out of the `cjk` column, whose characters are adjacent by accident.
            if SearchText.containsCJK(term.text) && indexed.contains(where: \.isWhitespace) {
                return "{body subject sender} : " + phrase
            }
            return phrase
        }
        let segments = SearchText.wordSegments(term.text).filter(SearchText.hasTokenCharacters)
        let parts = segments.enumerated().map { index, segment -> String in
            if SearchText.containsCJK(segment) {
                return quoted(SearchText.indexed(segment).trimmingCharacters(in: .whitespaces))
            }
            return quoted(segment) + (term.isPrefix && index == segments.count - 1 ? " *" : "")
        }
        return parts.count == 1 ? parts[0] : "(" + parts.joined(separator: " AND ") + ")"
    }

    private mutating func collectHighlights(_ node: QueryNode, negated: Bool) {
        switch node {
        case .text(let term) where !negated:
            highlightTerms.append(term.text)
        case .and(let children), .or(let children):
            children.forEach { collectHighlights($0, negated: negated) }
        case .not(let inner):
            collectHighlights(inner, negated: !negated)
        default:
            break
        }
    }

    // MARK: SQL

    private mutating func sql(_ node: QueryNode, rowid: String) -> String {
        switch node {
        case .all:
            return "1"
        case .text(let term):
            if Self.ftsExpressible(node) { return ftsSubquery(node) }
            // Nothing FTS5 could tokenise (emoji, punctuation): a plain substring test.
            parameters.append(.text(term.text))
            parameters.append(.text(term.text))
            return "(instr(coalesce(m.body, ''), ?) > 0 OR instr(coalesce(m.subject, ''), ?) > 0)"
        case .and(let children):
            if Self.ftsExpressible(node) { return ftsSubquery(node) }
            return "(" + children.map { sql($0, rowid: rowid) }.joined(separator: " AND ") + ")"
        case .or(let children):
            if Self.ftsExpressible(node) { return ftsSubquery(node) }
            return "(" + children.map { sql($0, rowid: rowid) }.joined(separator: " OR ") + ")"
        case .not(let inner):
            return "NOT coalesce(" + sql(inner, rowid: rowid) + ", 0)"
        case .filter(let filter):
            return sql(filter, rowid: rowid)
        }
    }

    private mutating func ftsSubquery(_ node: QueryNode) -> String {
        parameters.append(.text(Self.fts(node)))
        return "m.id IN (SELECT rowid FROM message_fts WHERE message_fts MATCH ?)"
    }

    static func likePattern(_ text: String) -> String {
        // By Unicode scalar, like `quoted`: a wildcard followed by a combining mark is still a wildcard.
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "%" || scalar == "_" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return String(escaped)
    }

    private mutating func bind(_ values: SQLValue...) {
        parameters.append(contentsOf: values)
    }

    private mutating func sql(_ filter: QueryFilter, rowid: String) -> String {
        switch filter {
        case .from(let value):
            if value.contains("@") {
                bind(.text(value))
                return value.contains("/") ? "m.from_jid = ?" : "m.from_bare = ?"
            }
            return sender(named: value, contact: nil)
        case .fromName(let name, let contact):
            return sender(named: name, contact: contact)
        case .conversation(let jid):
            bind(.text(jid))
            return "m.conversation = ?"
        case .to(let value):
            if value.contains("@") {
                bind(.text(value))
                return value.contains("/") ? "m.to_jid = ?" : "m.to_bare = ?"
            }
            bind(.text(Self.likePattern(value) + "@%"))
            return "m.to_bare LIKE ? ESCAPE '\\'"
        case .with(let value):
            return conversation(value)
        case .room(let value):
            return "(m.type = 'groupchat' AND " + conversation(value) + ")"
        case .account(let value):
            if value.contains("@") {
                bind(.text(value))
                return "m.account_id IN (SELECT id FROM accounts WHERE jid = ?)"
            }
            bind(.text(Self.likePattern(value) + "@%"))
            return "m.account_id IN (SELECT id FROM accounts WHERE jid LIKE ? ESCAPE '\\')"
        case .date(let from, let through):
            var parts: [String] = []
            if let from {
                bind(.integer(MessageID.base(forTimestamp: resolver.span(from).start)))
                parts.append("\(rowid) >= ?")
            }
            if let through {
                bind(.integer(MessageID.base(forTimestamp: resolver.span(through).end)))
                parts.append("\(rowid) < ?")
            }
            return parts.isEmpty ? "1" : "(" + parts.joined(separator: " AND ") + ")"
        case .after(let expression):
            bind(.integer(MessageID.base(forTimestamp: resolver.span(expression).start)))
            return "\(rowid) >= ?"
        case .before(let expression):
            bind(.integer(MessageID.base(forTimestamp: resolver.span(expression).start)))
            return "\(rowid) < ?"
        case .direction(let direction):
            bind(.text(direction.rawValue))
            return "m.direction = ?"
        case .kind(let kind):
            bind(.text(kind.rawValue))
            return "m.type = ?"
        case .edited:
            return "m.edited > 0"
        case .hasFile:
            return "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id)"
        case .hasMedia(let prefix):
            bind(.text(Self.likePattern(prefix) + "%"))
            return "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id AND a.mime LIKE ? ESCAPE '\\')"
        case .fileName(let value):
            // `*` and `?` are wildcards over the whole name; without them any part of the name matches.
            var pattern = ""
            for character in value {
                switch character {
                case "*": pattern.append("%")
                case "?": pattern.append("_")
                default: pattern += Self.likePattern(String(character))
                }
            }
            if !value.contains("*") && !value.contains("?") { pattern = "%" + pattern + "%" }
            bind(.text(pattern), .text("%/" + pattern))
            return "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id AND (a.name LIKE ? ESCAPE '\\' OR (a.name IS NULL AND a.url LIKE ? ESCAPE '\\')))"
        case .fileType(let type):
            if type.hasSuffix("/") {
                bind(.text(Self.likePattern(type) + "%"))
                return "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id AND a.mime LIKE ? ESCAPE '\\')"
            }
            bind(.text(type))
            return "EXISTS (SELECT 1 FROM attachments a WHERE a.message_row = m.id AND lower(a.mime) = ?)"
        case .reaction(let emoji):
            // The newest update of each reactor is their current set.
            var condition = "r.emojis != '[]'"
            if let emoji {
                bind(.text(emoji))
                condition = "EXISTS (SELECT 1 FROM json_each(r.emojis) e WHERE e.value = ?)"
            }
            return """
                EXISTS (SELECT 1 FROM reactions r WHERE r.message_row = m.id AND \(condition) AND NOT EXISTS (SELECT 1 FROM reactions n \
                WHERE n.message_row = r.message_row AND n.reactor = r.reactor AND (n.timestamp > r.timestamp OR (n.timestamp = r.timestamp AND n.id > r.id))))
                """
        case .unread(let unread):
            return unread ? MessageSemanticsReading.unreadExpression : "(m.direction = 'in' AND NOT \(MessageSemanticsReading.unreadExpression))"
        case .retracted:
            return "m.retracted = 1"
        case .reply:
            return "m.reply_to IS NOT NULL"
        }
    }

    /// `from:NAME`: in a chat, the contact the name resolved to (else a JID starting with `NAME@`, or the name
    /// stored with the message); in a room — a group chat message, or a private message from an occupant — a nick
    /// starting with `NAME` (case-insensitive for ASCII, as LIKE). A contact's name is usually also their nick, so
    /// neither reading may shut out the other.
    ///
    /// Nicks have no index of their own. A name that is no contact's is a scan anyway (as it always was). For a
    /// contact's, whose messages `messages_from` finds, the nick part keeps the query on indexes: a room's message
    /// stores its nick as its sender name (the router, the importers, jsonl), which the full-text index holds
    /// (`sender`), so the rows whose sender has words starting like NAME's are the candidates and the exact test on
    /// the nick decides (a MULTI-INDEX OR). 300 000 synthetic messages, `roost count from:contact1`: 27 ms, as before
    /// nicks were searched; 76 ms reading every room message instead. A name the index cannot look up (no letters or
    /// digits, or Chinese, Japanese, Korean, which it keeps apart from the column) is tested on the rooms' rows, listed
    /// by the per-conversation counters where the archive keeps them.
    private mutating func sender(named name: String, contact: String?) -> String {
        var conditions: [String] = []
        var nick = ["(m.type = 'groupchat' OR (m.direction = 'in' AND instr(m.conversation, '/') > 0))"]
        if let contact {
            bind(.text(contact))
            conditions.append("m.from_bare = ?")
            if SearchText.hasTokenCharacters(name) && !SearchText.containsCJK(name) {
                bind(.text("sender : (" + Self.ftsTerm(TextTerm(name, isPrefix: true)) + ")"))
                nick.insert("m.id IN (SELECT rowid FROM message_fts WHERE message_fts MATCH ?)", at: 0)
            } else if conversationsCounted {
                nick.insert("m.conversation IN (SELECT conversation FROM conversation_counts WHERE groupchat > 0 OR instr(conversation, '/') > 0)",
                            at: 0)
            }
        } else {
            bind(.text(Self.likePattern(name) + "@%"), .text(name))
            conditions += ["m.from_bare LIKE ? ESCAPE '\\'", "coalesce(m.sender_name = ? COLLATE NOCASE, 0)"]
        }
        bind(.text(Self.likePattern(name) + "%"))
        nick.append("substr(m.from_jid, instr(m.from_jid, '/') + 1) LIKE ? ESCAPE '\\'")
        conditions.append("(" + nick.joined(separator: " AND ") + ")")
        return "(" + conditions.joined(separator: " OR ") + ")"
    }

    /// `with:`/`in:`: a conversation by JID (`room@service/nick` is a private conversation in a room, exactly;
    /// `QueryNames` has turned a contact's full JID into its bare one), else by the start of its JID.
    private mutating func conversation(_ value: String) -> String {
        if value.contains("@") {
            bind(.text(value.contains("/") ? value : JIDText.bare(value)))
            return "m.conversation = ?"
        }
        bind(.text(Self.likePattern(value) + "@%"))
        return "m.conversation LIKE ? ESCAPE '\\'"
    }
}
