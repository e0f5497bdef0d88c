/// One thing wrong in a config file, located as precisely as the file allows.
///
/// Messages never contain the value of `password` or `password_command`.
public struct ConfigProblem: Sendable, Hashable, CustomStringConvertible {
    public let path: String
    /// 1-based line number; nil when the problem concerns the whole file.
    public let line: Int?
    /// The key concerned, when there is one.
    public let key: String?
    public let message: String
    /// Found because the machine or process was short of descriptors, memory or disk when the file a key names was
    /// checked: nothing the user must change.
    public let isResourceShortage: Bool

    public init(path: String, line: Int?, key: String? = nil, message: String, resourceShortage: Bool = false) {
        self.path = path
        self.line = line
        self.key = key
        self.message = message
        isResourceShortage = resourceShortage
    }

    /// `file:line: key: message`, the shape compilers use so editors can jump to it.
    public var description: String {
        var text = path
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(key): " }
        return text + message
    }
}
