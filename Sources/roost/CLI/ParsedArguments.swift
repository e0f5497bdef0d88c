/// What the parser found on a command line: options by long name, and positional arguments in order.
/// Typed accessors turn values into numbers or choices and report bad ones as usage errors.
struct ParsedArguments: Sendable, Equatable {
    /// `roost` or `roost search`, named in error messages.
    var command: String
    private(set) var flagCounts: [String: Int] = [:]
    private(set) var optionValues: [String: [String]] = [:]
    private(set) var positionals: [String] = []

    init(command: String) {
        self.command = command
    }

    // MARK: Reading

    func flag(_ long: String) -> Bool {
        count(long) > 0
    }

    /// How often a flag was given, e.g. 2 for `-vv`.
    func count(_ long: String) -> Int {
        flagCounts[long] ?? 0
    }

    func value(_ long: String) -> String? {
        optionValues[long]?.last
    }

    /// Every value of a repeatable option, in command-line order.
    func values(_ long: String) -> [String] {
        optionValues[long] ?? []
    }

    func integer(_ long: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(long) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "invalid value '\(text)' for --\(long): expected an integer from \(range.lowerBound) to \(range.upperBound)",
                command: command)
        }
        return number
    }

    func choice<Choice: RawRepresentable & CaseIterable>(_ long: String, of _: Choice.Type) throws(UsageError) -> Choice?
    where Choice.RawValue == String {
        guard let text = value(long) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            let names = Choice.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("invalid value '\(text)' for --\(long): expected one of \(names)", command: command)
        }
        return choice
    }

    /// The single positional argument a command requires, e.g. the JID of `roost log JID`.
    func onePositional(named name: String) throws(UsageError) -> String {
        guard positionals.count == 1 else {
            let problem = positionals.isEmpty ? "missing \(name)" : "expected one \(name), got \(positionals.count) arguments"
            throw UsageError("\(problem) for `\(command)`", command: command)
        }
        return positionals[0]
    }

    func requireNoPositionals() throws(UsageError) {
        if let first = positionals.first {
            throw UsageError("unexpected argument '\(first)' for `\(command)`", command: command)
        }
    }

    // MARK: Recording (used by ArgumentParser)

    mutating func recordFlag(_ long: String) {
        flagCounts[long, default: 0] += 1
    }

    mutating func recordValue(_ value: String, for long: String) {
        optionValues[long, default: []].append(value)
    }

    mutating func recordPositional(_ argument: String) {
        positionals.append(argument)
    }
}
