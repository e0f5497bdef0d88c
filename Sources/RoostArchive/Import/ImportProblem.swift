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

/// A message of another client's history that Roost did not import.
public struct ImportRefusal: Sendable, Equatable, CustomStringConvertible {
    public var reason: String
    /// Where it is: `logs row 1234`, `…/2010-01-15.102345+0100CET.html:12`.
    public var location: String

    public init(reason: String, location: String) {
        self.reason = reason
        self.location = location
    }

    public var description: String { "\(location): \(reason)" }
}
