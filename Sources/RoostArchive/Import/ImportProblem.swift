/// One invalid line of an import file.
public struct ImportProblem: Sendable, Equatable, CustomStringConvertible {
    /// 1-based line number.
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    public var description: String { "line \(line): \(reason)" }
}
