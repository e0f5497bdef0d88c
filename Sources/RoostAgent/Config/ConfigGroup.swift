import RoostCore

/// The kinds of `[group]` a config file may contain.
enum ConfigGroup: Equatable {
    case general
    case archive
    case notify
    case files
    case serve
    /// `[retention]`: how long messages are kept.
    case retention
    /// `[backup]`: `roost backup` (the passphrase command).
    case backup
    /// `[mirror]`: the live Maildir.
    case mirror
    /// `[account alice@example.org]`, with the JID as written.
    case account(String)
    /// `[sink NAME]`.
    case sink(String)
    /// `[room lounge@conference.example.org]`, with the JID as written.
    case room(String)
    /// `[watch NAME]`: a search query whose new messages notify.
    case watch(String)

    static let summary = "[general], [archive], [files], [notify], [serve], [retention], [backup], [mirror], [account JID], [room JID], [sink NAME] or [watch NAME]"

    init(header name: String) throws(ConfigValueError) {
        let parts = name.split(separator: " ", maxSplits: 1)
        let kind = parts.first.map(String.init) ?? ""
        let argument = parts.count > 1 ? parts[1].trimmingSpaces : ""
        switch (kind, argument.isEmpty) {
        case ("general", true): self = .general
        case ("archive", true): self = .archive
        case ("notify", true): self = .notify
        case ("files", true): self = .files
        case ("serve", true): self = .serve
        case ("retention", true): self = .retention
        case ("backup", true): self = .backup
        case ("mirror", true): self = .mirror
        case ("account", false): self = .account(argument)
        case ("sink", false): self = .sink(argument)
        case ("room", false): self = .room(argument)
        case ("watch", false): self = .watch(argument)
        case ("watch", true):
            throw ConfigValueError("a watch group names the watch: [watch NAME]")
        case ("room", true):
            throw ConfigValueError("a room group names the room's JID: [room lounge@conference.example.org]")
        case ("account", true):
            throw ConfigValueError("an account group names its JID: [account alice@example.org]")
        case ("sink", true):
            throw ConfigValueError("a sink group names the sink: [sink NAME]")
        case ("general", false), ("archive", false), ("notify", false), ("files", false), ("serve", false), ("retention", false), ("backup", false), ("mirror", false):
            throw ConfigValueError("[\(kind)] takes no name; write it as [\(kind)]")
        default:
            let kinds = ["general", "archive", "notify", "files", "serve", "retention", "backup", "mirror", "account", "sink", "room", "watch"]
            let meant = Suggestion.candidates(for: kind, among: kinds).map { "[" + ([$0] + parts.dropFirst().map(String.init)).joined(separator: " ") + "]" }
            throw ConfigValueError("unknown group [\(name)]\(Suggestion.phrase(meant, quote: { $0 })); expected \(Self.summary)")
        }
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
