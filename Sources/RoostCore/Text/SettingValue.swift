/// A value that does not fit its key; the config loader adds file, line and key around `message`.
public struct ConfigValueError: Error, Sendable {
    public let message: String
    /// The check could not be made for want of descriptors, memory or disk (see `ResourceShortage`): nothing about
    /// the value; the same check can pass later.
    public let isResourceShortage: Bool

    public init(_ message: String, resourceShortage: Bool = false) {
        self.message = message
        isResourceShortage = resourceShortage
    }
}

/// The grammar of the plain values every group of the config file shares — integers in a range, booleans,
/// one of a set of words — so `[notify]` and `[sink]` accept what `[general]` and `[account]` accept and say
/// the same when they do not. Messages quote the offending value, so they are never used for secrets.
public enum SettingValue {
    public static func integer(_ text: String, in range: ClosedRange<Int>, what: String = "an integer") throws(ConfigValueError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ConfigValueError("expected \(what) from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    public static func boolean(_ text: String) throws(ConfigValueError) -> Bool {
        switch text.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw ConfigValueError("expected true or false, got '\(text)'")
        }
    }

    public static func choice<Choice: RawRepresentable & CaseIterable>(_ text: String, of _: Choice.Type) throws(ConfigValueError) -> Choice
    where Choice.RawValue == String {
        if let value = Choice(rawValue: text.lowercased()) { return value }
        let names = Choice.allCases.map(\.rawValue).joined(separator: ", ")
        throw ConfigValueError("expected one of \(names), got '\(text)'")
    }
}
