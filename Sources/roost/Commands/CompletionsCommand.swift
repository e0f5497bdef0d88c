import Foundation
import RoostAgent
import RoostArchive

/// `roost completions bash|zsh|fish`: the shell completion script, generated from the commands' specs.
struct CompletionsCommand: Command {
    static let name = "completions"
    static let summary = "print the shell completion script for bash, zsh or fish"
    static let usage = "bash | zsh | fish"
    static let discussion = """
        Prints a completion script generated from roost's own commands and options, so it always matches this \
        roost. bash: `roost completions bash > ~/.local/share/bash-completion/completions/roost` (or \
        /usr/share/bash-completion/completions/roost); zsh: `roost completions zsh > ~/.zfunc/_roost` with \
        ~/.zfunc in $fpath; fish: `roost completions fish > ~/.config/fish/completions/roost.fish`. \
        The scripts complete commands, subcommands, options and their values, file names, query filters \
        (with:, from:, is:, ...), contacts and conversations, pending friend requests (`roost requests accept`), \
        accounts and notification sinks — the last four read from the archive and config when you press Tab, \
        through `roost completions words contacts|requests|accounts|sinks`.
        """
    static let options: [OptionSpec] = []
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("bash"), Subcommand("zsh"), Subcommand("fish"),
                                                          Subcommand("words", [.choices(["contacts", "requests", "accounts", "sinks"])])])]

    enum Action {
        case script(String)
        case words(String)
    }

    let action: Action

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        switch words.first {
        case "bash", "zsh", "fish":
            guard words.count == 1 else { throw UsageError("usage: roost completions bash|zsh|fish", command: parsed.command) }
            action = .script(words[0])
        case "words":
            guard words.count == 2, ["contacts", "requests", "accounts", "sinks"].contains(words[1]) else {
                throw UsageError("usage: roost completions words contacts|requests|accounts|sinks", command: parsed.command)
            }
            action = .words(words[1])
        case nil:
            throw UsageError("which shell? roost completions bash, zsh or fish", command: parsed.command)
        case let other?:
            throw UsageError("no completions for '\(other)' (bash, zsh, fish)", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        switch action {
        case .script(let shell):
            let script = CompletionScript(commands: context.commands)
            context.output.standardOutput.write(shell == "bash" ? script.bash() : shell == "zsh" ? script.zsh() : script.fish())
            return .ok
        case .words(let kind):
            // Quiet and best effort: a completion never prints errors into the user's command line.
            for word in (try? words(kind, context: context)) ?? [] { context.output.line(word) }
            return .ok
        }
    }

    private func words(_ kind: String, context: CommandContext) throws -> [String] {
        let config = try context.loadConfig()
        switch kind {
        case "accounts":
            let archived = FileManager.default.fileExists(atPath: config.archivePath)
                ? ((try? ArchiveReader(path: config.archivePath).accounts()) ?? []) : []
            return Array(Set(config.accounts.map(\.jid) + archived.map { $0.lowercased() })).sorted()
        case "sinks":
            return config.sinks.keys.sorted()
        default:
            guard FileManager.default.fileExists(atPath: config.archivePath) else { return [] }
            let reader = try ArchiveReader(path: config.archivePath)
            let account = try context.readingAccount(config: config, reader: reader)
            if kind == "requests" {
                let accounts = account.map { [$0] } ?? config.accounts.map(\.jid)
                return try accounts.flatMap { try reader.pendingSubscriptionRequests(account: $0).map(\.jid) }
            }
            let names = try reader.names()
            var jids = Set(names.all.filter { entry in account.map { entry.account.caseInsensitiveCompare($0) == .orderedSame } ?? true }.map(\.jid))
            for conversation in try reader.stats(account: account).conversations { jids.insert(conversation.conversation) }
            return jids.sorted()
        }
    }
}
