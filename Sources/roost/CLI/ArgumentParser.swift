/// Splits a command line into options and positional arguments according to a list of `OptionSpec`s.
///
/// Accepted forms: `--name`, `--name value`, `--name=value`, `-x`, clustered `-vq`, `-nVALUE`, `-n VALUE`;
/// `--` ends the options. A value that starts with `-` must use `--name=-value`, unless it is a negative
/// number or `-` itself, so a forgotten value (`--config --json`) is reported instead of swallowed.
/// With `dashWordsArePositional` (commands taking a query), a `-word` that is no defined short option, such
/// as `-spam` in `roost search trav* -spam`, is a positional argument: a query term excluding `spam`.
struct ArgumentParser {
    let command: String
    let specs: [OptionSpec]
    var dashWordsArePositional = false

    init(command: String, specs: [OptionSpec], dashWordsArePositional: Bool = false) {
        self.command = command
        self.specs = specs
        self.dashWordsArePositional = dashWordsArePositional
    }

    struct Result {
        var parsed: ParsedArguments
        /// The arguments after the first positional one, when parsing stopped there.
        var remaining: ArraySlice<String>
        /// `--` was seen: everything in `remaining` is positional.
        var optionsEnded: Bool
    }

    /// - Parameters:
    ///   - start: values already parsed (global options given before the command name).
    ///   - stopAtFirstPositional: stop at the first positional (the subcommand name) and leave the rest.
    ///   - optionsEnded: a `--` was already seen.
    func parse(
        _ arguments: ArraySlice<String>,
        into start: ParsedArguments? = nil,
        stopAtFirstPositional: Bool = false,
        optionsEnded alreadyEnded: Bool = false
    ) throws(UsageError) -> Result {
        var parsed = start ?? ParsedArguments(command: command)
        parsed.command = command
        var optionsEnded = alreadyEnded
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                if stopAtFirstPositional {
                    return Result(parsed: parsed, remaining: arguments[(index - 1)...], optionsEnded: optionsEnded)
                }
                parsed.recordPositional(argument)
            } else if argument == "--" {
                optionsEnded = true
            } else if argument.hasPrefix("--") {
                try parseLong(argument, rest: arguments, index: &index, into: &parsed)
            } else if dashWordsArePositional && !isShortOptionCluster(argument) {
                parsed.recordPositional(argument)
            } else {
                try parseShortCluster(argument, rest: arguments, index: &index, into: &parsed)
            }
        }
        return Result(parsed: parsed, remaining: arguments[arguments.endIndex...], optionsEnded: optionsEnded)
    }

    private func parseLong(
        _ argument: String, rest: ArraySlice<String>, index: inout Int, into parsed: inout ParsedArguments
    ) throws(UsageError) {
        let body = argument.dropFirst(2)
        let name: String
        var inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inlineValue = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
        }
        guard let spec = specs.first(where: { $0.long == name }) else {
            throw unknownOption("--\(name)")
        }
        if !spec.takesValue {
            if inlineValue != nil {
                throw UsageError("option --\(name) takes no value", command: command)
            }
            parsed.recordFlag(spec.long)
            return
        }
        if let inlineValue {
            try record(inlineValue, for: spec, into: &parsed)
        } else {
            try record(nextValue(for: "--\(name)", rest: rest, index: &index), for: spec, into: &parsed)
        }
    }

    private func parseShortCluster(
        _ argument: String, rest: ArraySlice<String>, index: inout Int, into parsed: inout ParsedArguments
    ) throws(UsageError) {
        var letters = argument.dropFirst()
        while let letter = letters.first {
            letters = letters.dropFirst()
            guard let spec = specs.first(where: { $0.short == letter }) else {
                throw unknownOption("-\(letter)")
            }
            if !spec.takesValue {
                parsed.recordFlag(spec.long)
                continue
            }
            if letters.isEmpty {
                try record(nextValue(for: "-\(letter)", rest: rest, index: &index), for: spec, into: &parsed)
            } else {
                try record(String(letters), for: spec, into: &parsed)
            }
            return
        }
    }

    /// True when every letter of `-abc` up to the first one taking a value names a short option.
    private func isShortOptionCluster(_ argument: String) -> Bool {
        for letter in argument.dropFirst() {
            guard let spec = specs.first(where: { $0.short == letter }) else { return false }
            if spec.takesValue { return true }
        }
        return true
    }

    private func nextValue(for option: String, rest: ArraySlice<String>, index: inout Int) throws(UsageError) -> String {
        guard index < rest.endIndex, Self.canBeValue(rest[index]) else {
            throw UsageError("missing value for \(option)", command: command)
        }
        index += 1
        return rest[index - 1]
    }

    private static func canBeValue(_ argument: String) -> Bool {
        guard argument.hasPrefix("-"), argument != "-" else { return true }
        let afterDash = argument.dropFirst()
        return afterDash.first?.isNumber == true && Double(afterDash) != nil
    }

    private func record(_ value: String, for spec: OptionSpec, into parsed: inout ParsedArguments) throws(UsageError) {
        if case .value = spec.kind, !parsed.values(spec.long).isEmpty {
            throw UsageError("option --\(spec.long) given more than once", command: command)
        }
        parsed.recordValue(value, for: spec.long)
    }

    private func unknownOption(_ option: String) -> UsageError {
        let scope = command == "roost" ? "" : " for `\(command)`"
        return UsageError("unknown option \(option)\(scope)", command: command)
    }
}
