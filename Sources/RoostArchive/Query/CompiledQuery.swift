/// A query translated to SQL. User text only ever travels in `parameters` / as quoted FTS5 strings inside
/// `ftsExpression` (itself bound as a parameter), never spliced into SQL.
struct CompiledQuery: Sendable {
    /// The top-level FTS5 MATCH expression, or nil when the query has no (positive) full-text part.
    var ftsExpression: String?
    /// A boolean SQL expression over `m` (messages) and, when `ftsExpression` is set, `f.rowid`.
    var whereSQL: String
    var parameters: [SQLValue]
    /// The positive words and phrases, for highlighting.
    var highlightTerms: [String]
}
