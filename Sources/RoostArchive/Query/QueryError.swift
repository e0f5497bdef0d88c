/// A malformed search query: what is wrong and where (1-based column, counted in characters).
public struct QueryError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let column: Int
    public let query: String

    public init(_ message: String, column: Int, query: String) {
        self.message = message
        self.column = column
        self.query = query
    }

    /// e.g. `unterminated quote at column 7`.
    public var description: String { "\(message) at column \(column)" }

    /// The query with a caret under the problem, for terminals:
    /// ```
    /// foo "bar
    ///     ^ unterminated quote at column 5
    /// ```
    public var caretDiagram: String {
        let shown = String(query.map { $0.isNewline || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } ? " " : $0 })
        return shown + "\n" + String(repeating: " ", count: max(column - 1, 0)) + "^ " + description
    }
}
