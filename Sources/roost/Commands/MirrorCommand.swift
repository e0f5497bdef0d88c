import Foundation
import RoostAgent
import RoostArchive

/// `roost mirror rebuild`: the `[mirror]` Maildir written again from the archive.
struct MirrorCommand: Command {
    static let name = "mirror"
    static let summary = "rebuild the live Maildir mirror of [mirror] from the archive"
    static let usage = "rebuild [options]"
    static let discussion = """
        `roost run` keeps the Maildir of [mirror] maildir current: every message it archives appears there as \
        a mail within a second (see docs/mirror.md). `roost mirror rebuild` removes the mirror's mails and writes \
        every message the mirror's query selects again, the same files the agent would have written, then sets \
        the mirror's position to the archive's newest change, so a later `roost run` goes on from there. Run it \
        while the agent is stopped (it refuses otherwise); mails the user filed elsewhere are not touched, and \
        the read flags of rewritten mails start over. Exit status: 0 rebuilt, 1 the agent runs or the mirror \
        could not be written, 2 invalid command line, 78 no [mirror] maildir in the config.
        """
    static let options: [OptionSpec] = []
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("rebuild")])]

    init(parsed: ParsedArguments) throws(UsageError) {
        guard parsed.positionals == ["rebuild"] else {
            throw UsageError("expected `roost mirror rebuild`", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        guard let settings = config.mirror.settings(accounts: config.enabledAccounts.count) else {
            throw MirrorFailure(description: "no [mirror] maildir in \(config.sourcePath ?? "the config"): nothing to rebuild", exitCode: .config)
        }
        if let agent = AgentLink.agentStatus(environment: context.environment) {
            throw MirrorFailure(description: "an agent (pid \(agent.pid)) keeps the mirror; stop it first (`systemctl --user stop roost`)",
                                exitCode: .nothingFound)
        }
        let written: Int
        do {
            let mirror = try MailMirrorWriter(settings: settings, reader: try ArchiveReader(path: config.archivePath),
                                              writer: try ArchiveWriter(path: config.archivePath))
            _ = try mirror.rebuild()
            written = mirror.written
        } catch let error as MirrorError {
            throw MirrorFailure(description: error.description, exitCode: .nothingFound)
        } catch let error as ArchiveError {
            throw ArchiveFailure(error: error)
        }
        if context.options.json {
            context.output.jsonLine(["maildir": .string(settings.maildir), "mails": .int(written)])
        } else {
            context.output.line("rebuilt the mirror \(settings.maildir): \(Counted.noun(written, "mail"))")
        }
        return .ok
    }
}

struct MirrorFailure: CommandFailure {
    let description: String
    let exitCode: ExitCode
}
