/// One option a command accepts, as shown in help and understood by the parser.
struct OptionSpec: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// No value; may be repeated (`-vv`), the count is kept.
        case flag
        /// Takes one value; giving it twice is an error.
        case value(placeholder: String)
        /// Takes a value and may be repeated; every value is kept in order.
        case values(placeholder: String)
    }

    /// Without the leading dashes, e.g. `limit` for `--limit`.
    let long: String
    let short: Character?
    let kind: Kind
    let help: String

    static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .flag, help: help)
    }

    static func value(_ long: String, short: Character? = nil, placeholder: String, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .value(placeholder: placeholder), help: help)
    }

    static func values(_ long: String, short: Character? = nil, placeholder: String, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .values(placeholder: placeholder), help: help)
    }

    var takesValue: Bool {
        if case .flag = kind { return false }
        return true
    }

    /// `-n, --limit N` / `    --json`, the left column of help.
    var synopsis: String {
        var text = short.map { "-\($0), " } ?? "    "
        text += "--\(long)"
        switch kind {
        case .flag: break
        case let .value(placeholder): text += " \(placeholder)"
        case let .values(placeholder): text += " \(placeholder)"
        }
        return text
    }
}
