import RoostCore
/// Splits a query into tokens. Any character is allowed inside words and phrases except control
/// characters (NUL and friends), which are refused with their position.
struct QueryLexer {
    static let filterKeys: Set<String> = ["from", "to", "with", "account", "in", "date", "after", "before", "is", "has", "filename", "type", "reaction"]

    private let characters: [Character]
    private let query: String
    private var index = 0

    init(_ query: String) {
        self.query = query
        self.characters = Array(query)
    }

    static func tokens(of query: String) throws(QueryError) -> [QueryToken] {
        var lexer = QueryLexer(query)
        var tokens: [QueryToken] = []
        while let token = try lexer.next() {
            tokens.append(token)
        }
        return tokens
    }

    private func error(_ message: String, at index: Int) -> QueryError {
        QueryError(message, column: index + 1, query: query)
    }

    private static func isControl(_ character: Character) -> Bool {
        character.unicodeScalars.contains { $0.properties.generalCategory == .control } && !character.isWhitespace
    }

    private static func endsWord(_ character: Character) -> Bool {
        character.isWhitespace || character == "(" || character == ")" || character == "\""
    }

    private mutating func next() throws(QueryError) -> QueryToken? {
        while index < characters.count, characters[index].isWhitespace { index += 1 }
        guard index < characters.count else { return nil }
        let start = index
        let character = characters[index]
        if Self.isControl(character) {
            let code = character.unicodeScalars.first.map { String($0.value, radix: 16, uppercase: true) } ?? "?"
            throw error("control character U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code) is not allowed", at: index)
        }
        switch character {
        case "(":
            index += 1
            return QueryToken(kind: .openParen, column: start + 1)
        case ")":
            index += 1
            return QueryToken(kind: .closeParen, column: start + 1)
        case "\"":
            let text = try readQuoted()
            return QueryToken(kind: .phrase(text), column: start + 1)
        case "-" where index + 1 < characters.count && !characters[index + 1].isWhitespace && characters[index + 1] != ")":
            index += 1
            return QueryToken(kind: .minus, column: start + 1)
        default:
            break
        }
        var word = ""
        while index < characters.count, !Self.endsWord(characters[index]) {
            if Self.isControl(characters[index]) {
                throw error("control character is not allowed", at: index)
            }
            word.append(characters[index])
            index += 1
        }
        switch word {
        case "AND": return QueryToken(kind: .and, column: start + 1)
        case "OR": return QueryToken(kind: .or, column: start + 1)
        case "NOT": return QueryToken(kind: .not, column: start + 1)
        default: break
        }
        if let colon = word.firstIndex(of: ":") {
            let key = word[..<colon].lowercased()
            if Self.filterKeys.contains(key) {
                var value = String(word[word.index(after: colon)...])
                var valueColumn = start + key.count + 2
                if value.isEmpty, index < characters.count, characters[index] == "\"" {
                    valueColumn = index + 2
                    value = try readQuoted()
                }
                return QueryToken(kind: .filter(key: key, value: value, valueColumn: valueColumn), column: start + 1)
            }
            // `frm:bob` is a typo of a filter, not a word to search for.
            if let meant = Self.filterMeant(by: key), colon < word.index(before: word.endIndex) {
                throw error("unknown filter \(key): (did you mean \(meant):?)", at: start)
            }
        }
        return QueryToken(kind: .word(word), column: start + 1)
    }

    /// The filter a mistyped key is one edit away from (two for long keys), if any: `frm` → `from`.
    static func filterMeant(by key: String) -> String? {
        guard key.count >= 3, key.allSatisfy({ $0.isLetter && $0.isASCII }) else { return nil }
        // Two-letter keys (to, in, is) are left out: too many words are one edit away from them.
        let close = filterKeys.filter { candidate in
            guard candidate.count >= 4 else { return false }
            let distance = Suggestion.editDistance(candidate, key)
            return distance <= (candidate.count >= 6 ? 2 : 1)
        }
        return close.count == 1 ? close.first : nil
    }

    /// Reads `"…"` starting at the opening quote; a phrase ends at the next quote.
    private mutating func readQuoted() throws(QueryError) -> String {
        let open = index
        index += 1
        var text = ""
        while index < characters.count, characters[index] != "\"" {
            if Self.isControl(characters[index]) {
                throw error("control character is not allowed", at: index)
            }
            text.append(characters[index])
            index += 1
        }
        guard index < characters.count else {
            throw error("unterminated quote", at: open)
        }
        index += 1
        return text
    }
}
