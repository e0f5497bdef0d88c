/// Parses the query language into a `QueryNode`:
/// ```
/// query   := or EOF
/// or      := and ("OR" and)*
/// and     := unary (["AND"] unary)*          adjacent terms are ANDed
/// unary   := ("NOT" | "-") unary | atom
/// atom    := "(" or ")" | word | "phrase" | key:value
/// ```
/// Operators are upper case (`or` is a word). Errors name the column of the offending token.
public struct QueryParser {
    private let tokens: [QueryToken]
    private let query: String
    private var position = 0
    private var depth = 0
    private static let maximumDepth = 64

    private init(tokens: [QueryToken], query: String) {
        self.tokens = tokens
        self.query = query
    }

    public static func parse(_ query: String) throws(QueryError) -> QueryNode {
        var parser = QueryParser(tokens: try QueryLexer.tokens(of: query), query: query)
        if parser.tokens.isEmpty { return .all }
        let node = try parser.parseOr()
        if let extra = parser.peek {
            if extra.kind == .closeParen { throw parser.error("unmatched ')'", at: extra) }
            throw parser.error("unexpected token", at: extra)
        }
        return node
    }

    private var peek: QueryToken? { position < tokens.count ? tokens[position] : nil }

    private var endColumn: Int { query.count + 1 }

    private func error(_ message: String, at token: QueryToken?) -> QueryError {
        QueryError(message, column: token?.column ?? endColumn, query: query)
    }

    private mutating func parseOr() throws(QueryError) -> QueryNode {
        var alternatives = [try parseAnd()]
        while let token = peek, token.kind == .or {
            position += 1
            guard let next = peek, next.kind != .closeParen, next.kind != .or, next.kind != .and else {
                throw error("OR needs a term after it", at: token)
            }
            alternatives.append(try parseAnd())
        }
        return alternatives.count == 1 ? alternatives[0] : .or(alternatives)
    }

    private mutating func parseAnd() throws(QueryError) -> QueryNode {
        var terms: [QueryNode] = []
        while let token = peek {
            switch token.kind {
            case .closeParen:
                if terms.isEmpty { throw error(depth == 0 ? "unmatched ')'" : "empty parentheses", at: token) }
                return terms.count == 1 ? terms[0] : .and(terms)
            case .or:
                if terms.isEmpty { throw error("OR needs a term before it", at: token) }
                return terms.count == 1 ? terms[0] : .and(terms)
            case .and:
                if terms.isEmpty { throw error("AND needs a term before it", at: token) }
                position += 1
                guard let next = peek, next.kind != .closeParen, next.kind != .or, next.kind != .and else {
                    throw error("AND needs a term after it", at: token)
                }
            default:
                terms.append(try parseUnary())
            }
        }
        if terms.isEmpty { throw error("expected a search term", at: nil) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseUnary() throws(QueryError) -> QueryNode {
        guard let token = peek else { throw error("expected a search term", at: nil) }
        if token.kind == .not || token.kind == .minus {
            position += 1
            guard let next = peek, next.kind != .closeParen, next.kind != .or, next.kind != .and else {
                throw error(token.kind == .not ? "NOT needs a term after it" : "'-' needs a term after it", at: token)
            }
            try enter(token)
            defer { depth -= 1 }
            // "- -x" is x: a chain of negations never reaches SQL (64 of them overflowed SQLite's parser stack:
            // found by the query fuzzer, kept as a regression).
            let inner = try parseUnary()
            if case .not(let twice) = inner { return twice }
            return .not(inner)
        }
        return try parseAtom()
    }

    private mutating func enter(_ token: QueryToken) throws(QueryError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("query nested too deeply", at: token) }
    }

    private mutating func parseAtom() throws(QueryError) -> QueryNode {
        guard let token = peek else { throw error("expected a search term", at: nil) }
        position += 1
        switch token.kind {
        case .openParen:
            try enter(token)
            defer { depth -= 1 }
            if let next = peek, next.kind == .closeParen { throw error("empty parentheses", at: token) }
            let inner = try parseOr()
            guard let close = peek, close.kind == .closeParen else {
                throw error("missing ')' for the '(' opened", at: token)
            }
            _ = close
            position += 1
            return inner
        case .word(let word):
            return .text(try textTerm(word, at: token))
        case .phrase(let phrase):
            if phrase.allSatisfy(\.isWhitespace) { throw error("empty phrase", at: token) }
            return .text(TextTerm(phrase, isPhrase: true))
        case .filter(let key, let value, let valueColumn):
            return .filter(try FilterParser.filter(key: key, value: value, valueColumn: valueColumn, keyColumn: token.column, query: query))
        case .closeParen:
            throw error("unmatched ')'", at: token)
        case .and, .or, .not, .minus:
            throw error("expected a search term", at: token)
        }
    }

    private func textTerm(_ word: String, at token: QueryToken) throws(QueryError) -> TextTerm {
        var text = word
        var isPrefix = false
        while text.hasSuffix("*") {
            text.removeLast()
            isPrefix = true
        }
        if text.isEmpty { throw error("'*' must follow the start of a word, e.g. foo*", at: token) }
        return TextTerm(text, isPrefix: isPrefix)
    }
}

/// The query language's vocabulary, for shell completions and help.
public enum QueryVocabulary {
    /// Filter prefixes without the colon (`from`, `with`, …).
    public static let filters: [String] = QueryLexer.filterKeys.sorted()
    /// Filters whose value is a contact, a room or an account.
    public static let nameFilters: [String] = ["from", "to", "with", "in"]
    /// The values `is:` and `has:` take.
    public static let values: [String: [String]] = [
        "is": FilterParser.isValues.split(separator: ", ").map(String.init),
        "has": ["file", "image", "video", "audio"],
    ]
}
