/// A lexical token of the query language with the column (1-based, in characters) where it starts.
struct QueryToken: Equatable {
    enum Kind: Equatable {
        case openParen, closeParen
        case and, or, not
        /// `-` glued to the following term.
        case minus
        case word(String)
        case phrase(String)
        /// `key:value`; `valueColumn` points at the value for error messages.
        case filter(key: String, value: String, valueColumn: Int)
    }

    let kind: Kind
    let column: Int
}
