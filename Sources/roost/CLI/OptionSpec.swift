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
    /// What the value completes to in the shell (for options taking one).
    var completion: ArgumentKind = .text

    /// The same option with a completion for its value.
    func completing(_ kind: ArgumentKind) -> OptionSpec {
        var copy = self
        copy.completion = kind
        return copy
    }

    static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .flag, help: help, completion: .none)
    }

    static func value(_ long: String, short: Character? = nil, placeholder: String, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .value(placeholder: placeholder), help: help, completion: .text)
    }

    static func values(_ long: String, short: Character? = nil, placeholder: String, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .values(placeholder: placeholder), help: help, completion: .text)
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

/// What a positional argument or an option value is, for the shell completions (`roost completions`).
indirect enum ArgumentKind: Sendable, Hashable {
    /// Nothing to complete (a flag).
    case none
    /// Free text (a message, a name).
    case text
    /// One of these words.
    case choices([String])
    /// A file or folder path.
    case file
    case directory
    /// A query of the search language: filter prefixes, and contacts after `with:`, `from:` and `to:`.
    case query
    /// A contact or conversation of the archive (JID or name).
    case contact
    /// A JID whose friend request is pending.
    case pendingRequest
    /// A configured account.
    case account
    /// A `[sink NAME]` of the config.
    case sink
    /// Subcommands, each with its own arguments (`roost roster add JID`).
    case subcommands([Subcommand])
}

struct Subcommand: Sendable, Hashable {
    let name: String
    let arguments: [ArgumentKind]

    init(_ name: String, _ arguments: [ArgumentKind] = []) {
        self.name = name
        self.arguments = arguments
    }
}
