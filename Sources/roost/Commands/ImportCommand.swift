import Foundation
import RoostArchive

/// `roost import FILE --format jsonl`: a jsonl export back into the configured archive.
struct ImportCommand: Command {
    static let name = "import"
    static let summary = "import a jsonl export into the archive (deduplicated)"
    static let usage = "[options] FILE"
    static let discussion = """
        Reads FILE, written by `roost export --format jsonl`, into the archive named by the config (created if \
        missing), with the archive's dedup rules: messages already stored, repeated corrections, chat states and \
        presence changes are skipped, so importing twice adds nothing. Every line is checked first: if any is \
        invalid, the problems are listed by line number and nothing is imported, unless --skip-invalid. While \
        `roost run` is running, the import writes in short transactions (about 50 ms each), so the agent keeps \
        archiving live messages meanwhile. \
        Exit status: 0 imported, 1 invalid lines (nothing imported), 2 invalid command line.
        """
    static let options: [OptionSpec] = [
        .value("format", short: "f", placeholder: "FORMAT", help: "the file's format: jsonl (the default and only one)"),
        .flag("skip-invalid", help: "import the valid lines and report the invalid ones"),
    ]

    enum Format: String, CaseIterable {
        case jsonl
    }

    let file: String
    let skipInvalid: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        file = try parsed.onePositional(named: "FILE")
        _ = try parsed.choice("format", of: Format.self)
        skipInvalid = parsed.flag("skip-invalid")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw ImportFailure(error: .unreadable(path: file, errno: FileManager.default.fileExists(atPath: file) ? 13 : 2))
        }
        if context.options.account != nil {
            context.output.warning("--account is ignored by import: every account in the file is imported")
        }
        let meter = ProgressMeter(output: context.output, enabled: context.output.standardErrorIsTTY && !context.options.quiet,
                                  noun: "lines")
        // While the agent runs, short transactions: its commits (and its acknowledgements to the servers)
        // wait at most one of them.
        let agentRuns = AgentLink.agentStatus(environment: context.environment) != nil
        let summary: ImportSummary
        do {
            summary = try ArchiveImporter(archivePath: config.archivePath)
                .importJSONLines(from: file, skipInvalid: skipInvalid, transactionBudget: agentRuns ? .milliseconds(50) : nil) {
                    meter.show($0)
                }
        } catch {
            meter.clear()
            throw ImportFailure(error: error)
        }
        meter.clear()
        for problem in summary.skipped {
            context.output.warning("skipped \(problem)")
        }
        if summary.skippedCount > summary.skipped.count {
            context.output.warning("skipped \(summary.skippedCount - summary.skipped.count) more invalid lines")
        }
        if context.options.json {
            context.output.jsonLine([
                "file": .string(file), "archive": .string(config.archivePath), "lines": .int(summary.lines),
                "messages": .int(summary.messages), "duplicates": .int(summary.duplicates), "corrections": .int(summary.corrections),
                "chat_states": .int(summary.chatStates), "presence": .int(summary.presenceChanges), "contacts": .int(summary.contacts),
                "skipped": .int(summary.skippedCount), "seconds": .double(summary.seconds),
            ])
        } else if !context.options.quiet {
            var text = "imported \(summary.messages) new message\(summary.messages == 1 ? "" : "s")"
            if summary.corrections > 0 { text += ", \(summary.corrections) corrections" }
            if summary.duplicates > 0 { text += " (\(summary.duplicates) already archived)" }
            var extras: [String] = []
            if summary.chatStates > 0 { extras.append("\(summary.chatStates) chat states") }
            if summary.presenceChanges > 0 { extras.append("\(summary.presenceChanges) presence changes") }
            if summary.contacts > 0 { extras.append("\(summary.contacts) contacts") }
            if !extras.isEmpty { text += "; " + extras.joined(separator: ", ") }
            text += String(format: " from %@ in %.1f s", file, summary.seconds)
            context.output.line(text)
        }
        return .ok
    }
}

struct ImportFailure: CommandFailure {
    let error: ImportError
    var exitCode: ExitCode {
        switch error {
        case .invalidLines, .unreadable: .nothingFound
        case .archive: .internalError
        }
    }
    var description: String { error.description }
}
