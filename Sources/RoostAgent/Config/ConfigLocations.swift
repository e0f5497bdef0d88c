/// Line numbers of group headers and keys in the config file, for error messages written after loading.
public struct ConfigLocations: Sendable, Hashable {
    /// The file, or nil when there was none.
    public var path: String?
    private var groupLines: [String: Int]
    private var keyLines: [String: [String: Int]]

    public init() {
        self.init(path: nil, groupLines: [:], keyLines: [:])
    }

    init(path: String?, groupLines: [String: Int], keyLines: [String: [String: Int]]) {
        self.path = path
        self.groupLines = groupLines
        self.keyLines = keyLines
    }

    /// The line of `[group]`, or of `key` within it.
    public func line(group: String, key: String? = nil) -> Int? {
        guard let key else { return groupLines[group] }
        return keyLines[group]?[key]
    }

    /// A problem located at `[group] key`, for validators of `[notify]` and `[sink NAME]`.
    public func problem(group: String, key: String?, message: String) -> ConfigProblem {
        ConfigProblem(
            path: path ?? "(no config file)",
            line: line(group: group, key: key) ?? line(group: group),
            key: key,
            message: message
        )
    }
}
