import Foundation
import RoostArchive

/// `roost import PATH`: a jsonl export, or another client's history (Gajim, Dino, Profanity, Pidgin), into the
/// configured archive with the archive's dedup rules.
struct ImportCommand: Command {
    static let name = "import"
    static let summary = "import a jsonl export or Gajim, Dino, Profanity, Pidgin or poezio history (deduplicated)"
    static let usage = "[options] PATH"
    static let discussion = """
        Imports PATH into the archive named by the config (created if missing). PATH is a jsonl file written by \
        `roost export --format jsonl`, or another client's history: Gajim's logs.db or data folder \
        (~/.local/share/gajim), Dino's dino.db or data folder (~/.local/share/dino), Profanity's data folder \
        (~/.local/share/profanity: its chat log databases and text logs, as one source), Pidgin's or Finch's \
        ~/.purple (or ~/.purple/logs, or a folder or log file in logs/jabber), poezio's data folder \
        (~/.local/share/poezio) — or a home folder, where each client's usual place is looked at. With --format auto \
        (the default) roost says what it found. --me names your nick where the history does not say which room \
        lines are yours (Gajim 1.8 and earlier, Pidgin's plain-text logs, poezio); importing into an archive that \
        knows the room, the nick roost used there counts too. A private message in a room goes into the \
        occupant's conversation; the placeholder a client kept for a message it could not decrypt is imported as \
        undecryptable, never as text. Messages go through the same dedup as live ones: ids first, \
        otherwise the same sender and text within a time window (see docs/import.md), so importing twice, or a \
        history that overlaps what roost fetched from the server, adds nothing twice. Gajim's (1.9 and later) and \
        Dino's reactions are imported onto the messages they were made to; one the archive already shows for \
        that reactor and message is not added again. Clients' databases are \
        read from a private snapshot (the client may keep running) and checked first: a damaged or truncated \
        source stops the import before anything is written, and so does a log file none of whose lines can be \
        read; lines not read and refused messages are listed with examples. Files the client downloaded, when \
        still on disk, are copied into the file store (see docs/files.md) — only regular files inside the \
        client's own download folder; any other path a history names is reported and never read; so are the files of a jsonl export (in FILE_files/, \
        checked against their SHA-256). --account imports one account of a history that holds several. A jsonl file is checked \
        line by line first: if any line is invalid, nothing is imported unless --skip-invalid. While `roost run` \
        is running, the import writes in short transactions (about 50 ms each), so the agent keeps archiving \
        live messages meanwhile. \
        Exit status: 0 imported (some messages may be refused; they are listed), 1 the source is invalid, \
        unreadable or damaged (nothing imported), 2 invalid command line.
        """
    static let options: [OptionSpec] = [
        .value("format", short: "f", placeholder: "FORMAT",
               help: "what PATH holds: auto (the default), jsonl, gajim, dino, profanity, pidgin or poezio")
            .completing(.choices(Format.allCases.map(\.rawValue))),
        .flag("dry-run", short: "n", help: "report what would be added, found already archived, or refused; change nothing"),
        .flag("skip-invalid", help: "jsonl: import the valid lines and report the invalid ones"),
        .value("max-line-size", placeholder: "SIZE",
               help: "jsonl: a longer line is invalid and never read into memory (default 16M; K, M, G suffixes)"),
        .values("me", placeholder: "NAME",
                help: "a name or room nick you appear under where the history does not say (Pidgin's plain-text logs, Gajim 1.8 and earlier rooms, poezio, Profanity's text logs alone; repeatable)"),
        .value("time-zone", placeholder: "ZONE",
               help: "zone of log times written without an offset (Profanity before 0.13); default: this machine's"),
    ]

    static let arguments: [ArgumentKind] = [.file]

    enum Format: String, CaseIterable {
        case auto, jsonl, gajim, dino, profanity, pidgin, poezio
    }

    let path: String
    let format: Format
    let dryRun: Bool
    let skipInvalid: Bool
    let maxLineBytes: Int
    let ownNames: [String]
    let timeZone: TimeZone

    init(parsed: ParsedArguments) throws(UsageError) {
        path = try parsed.onePositional(named: "PATH")
        format = try parsed.choice("format", of: Format.self) ?? .auto
        dryRun = parsed.flag("dry-run")
        skipInvalid = parsed.flag("skip-invalid")
        if let text = parsed.value("max-line-size") {
            guard let size = FileSize.parse(text), size >= 1024, size <= 1 << 32 else {
                throw UsageError("--max-line-size: expected a size from 1K to 4G such as 16M, got '\(text)'", command: parsed.command)
            }
            maxLineBytes = Int(size)
        } else {
            maxLineBytes = ArchiveImporter.defaultMaxLineBytes
        }
        ownNames = parsed.values("me")
        if let name = parsed.value("time-zone") {
            guard let zone = TimeZone(identifier: name) else {
                throw UsageError(ImportError.invalidTimeZone(name).description, command: parsed.command)
            }
            timeZone = zone
        } else {
            timeZone = .current
        }
        if skipInvalid && ![.auto, .jsonl].contains(format) {
            throw UsageError("--skip-invalid is for jsonl files", command: parsed.command)
        }
        if parsed.value("max-line-size") != nil && ![.auto, .jsonl].contains(format) {
            throw UsageError("--max-line-size is for jsonl files", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        let meter = ProgressMeter(output: context.output, enabled: context.output.standardErrorIsTTY && !context.options.quiet,
                                  noun: "messages")
        defer { meter.clear() }
        // While the agent runs, short transactions: its commits (and its acknowledgements to the servers)
        // wait at most one of them.
        // A device or a pipe would never end (or block on opening): only files and folders are read.
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG, status.st_mode & S_IFMT != S_IFDIR {
            throw ImportFailure(error: .notARegularFile(path: path))
        }
        let budget: Duration? = AgentLink.agentStatus(environment: context.environment) != nil ? .milliseconds(50) : nil
        if format == .jsonl || (format == .auto && Self.looksLikeJSONLines(path)) {
            return try importJSONLines(context: context, archivePath: config.archivePath, budget: budget, meter: meter)
        }
        let options = ClientImporter.Options(format: format == .auto ? nil : ClientFormat(rawValue: format.rawValue),
                                             account: context.options.account, dryRun: dryRun, timeZone: timeZone,
                                             ownNames: ownNames, transactionBudget: budget)
        let summary: ImportSummary
        var sources: [ClientImporter.Found] = []
        do {
            summary = try ClientImporter(archivePath: config.archivePath).importHistory(at: path, options: options, found: { found in
                sources = found
                guard !context.options.json && !context.options.quiet else { return }
                for source in found {
                    let accounts = source.accounts.isEmpty ? "" : " — " + source.accounts.joined(separator: ", ")
                    context.output.standardError.write("found \(source.description)\(accounts)\n")
                }
            }, progress: { meter.show($0) })
        } catch {
            if case .unrecognised = error, format == .auto, let kind = Self.otherExport(path) {
                throw ImportFailure(error: .unrecognised(path: path, reason: "\(kind) cannot be imported: roost import reads Roost's own "
                    + "jsonl exports (`roost export --format jsonl`) and the histories of Gajim, Dino, Profanity and Pidgin; the other "
                    + "export formats are for reading, mail tools and spreadsheets"))
            }
            throw ImportFailure(error: error)
        }
        meter.clear()
        report(summary, sources: sources, context: context)
        return .ok
    }

    /// What another export format (or mail file) looks like, for a clear refusal.
    private static func otherExport(_ path: String) -> String? {
        let lower = path.lowercased()
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path + "/cur", isDirectory: &isFolder), isFolder.boolValue { return "a maildir" }
        for (suffix, kind) in [(".mbox", "an mbox file"), (".eml", "a mail file"), (".html", "an html export"), (".htm", "an html export"),
                               (".csv", "a csv file"), (".txt", "a text transcript"), (".md", "a Markdown transcript")]
        where lower.hasSuffix(suffix) {
            return kind
        }
        if let handle = FileHandle(forReadingAtPath: path), let head = try? handle.read(upToCount: 5), head == Data("From ".utf8) {
            return "an mbox file"
        }
        return nil
    }

    /// A regular file that is neither SQLite nor a Pidgin log, starting with `{`.
    private static func looksLikeJSONLines(_ path: String) -> Bool {
        if path.hasSuffix(".jsonl") || path.hasSuffix(".json") { return true }
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64)) ?? Data()
        return head.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
    }

    private func importJSONLines(context: CommandContext, archivePath: String, budget: Duration?, meter: ProgressMeter) throws -> ExitCode {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw ImportFailure(error: .unreadable(path: path, errno: FileManager.default.fileExists(atPath: path) ? 13 : 2))
        }
        if context.options.account != nil {
            context.output.warning("--account is ignored for jsonl files: every account in the file is imported")
        }
        let summary: ImportSummary
        do {
            summary = try ArchiveImporter(archivePath: archivePath)
                .importJSONLines(from: path, skipInvalid: skipInvalid, transactionBudget: budget, dryRun: dryRun,
                                 maxLineBytes: maxLineBytes) { meter.show($0) }
        } catch {
            throw ImportFailure(error: error)
        }
        meter.clear()
        if summary.pathsRefused > 0 {
            context.output.warning("\(summary.pathsRefused) file path(s) outside the archive's file store (or the export's folder) were dropped; "
                                   + "an import never keeps or reads a path elsewhere")
        }
        if summary.filesMissing > 0 {
            context.output.warning("\(Counted.noun(summary.filesMissing, "attachment file")) \(summary.filesMissing == 1 ? "was" : "were") not in the export; the agent downloads \(summary.filesMissing == 1 ? "it" : "them") again while the link works")
        }
        for problem in summary.skipped {
            context.output.warning("skipped \(problem)")
        }
        if summary.skippedCount > summary.skipped.count {
            context.output.warning("skipped \(Counted.noun(summary.skippedCount - summary.skipped.count, "more invalid line"))")
        }
        if context.options.json {
            context.output.jsonLine([
                "file": .string(path), "archive": .string(archivePath), "format": .string("jsonl"), "dry_run": .bool(dryRun),
                "lines": .int(summary.lines), "messages": .int(summary.messages), "duplicates": .int(summary.duplicates),
                "corrections": .int(summary.corrections), "chat_states": .int(summary.chatStates),
                "presence": .int(summary.presenceChanges), "subscriptions": .int(summary.subscriptions), "contacts": .int(summary.contacts),
                "files": .int(summary.files), "files_missing": .int(summary.filesMissing), "paths_refused": .int(summary.pathsRefused),
                "skipped": .int(summary.skippedCount), "seconds": .double(summary.seconds),
            ])
        } else if !context.options.quiet {
            var text = "\(dryRun ? "would import" : "imported") \(Counted.noun(summary.messages, "new message"))"
            if summary.corrections > 0 { text += ", \(Counted.noun(summary.corrections, "correction"))" }
            if summary.duplicates > 0 { text += " (\(summary.duplicates) already archived)" }
            var extras: [String] = []
            if summary.chatStates > 0 { extras.append(Counted.noun(summary.chatStates, "chat state")) }
            if summary.presenceChanges > 0 { extras.append(Counted.noun(summary.presenceChanges, "presence change")) }
            if summary.subscriptions > 0 { extras.append(Counted.noun(summary.subscriptions, "friend request or answer", plural: "friend requests and answers")) }
            if summary.contacts > 0 { extras.append(Counted.noun(summary.contacts, "contact")) }
            if summary.files > 0 { extras.append(Counted.noun(summary.files, "file")) }
            if !extras.isEmpty { text += "; " + extras.joined(separator: ", ") }
            text += String(format: " from %@ in %.1f s", path, summary.seconds)
            context.output.line(text)
        }
        return .ok
    }

    private static func counts(_ counts: [String: Int]) -> JSONObject {
        JSONObject(counts.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })
    }

    private static func examples(_ refusals: [ImportRefusal]) -> JSONValue {
        .array(refusals.map { .object(["reason": .string($0.reason), "location": .string($0.location)]) })
    }

    /// `  refused 2: empty message (message row 17; message row 90)`, most frequent reason first.
    private func refusals(_ counts: [String: Int], _ examples: [ImportRefusal], heading: String, context: CommandContext) {
        for (reason, count) in counts.sorted(by: { $0.value > $1.value || $0.value == $1.value && $0.key < $1.key }) {
            let locations = examples.filter { $0.reason == reason }.map(\.location)
            context.output.line("  \(heading) \(count): \(reason) (\(locations.joined(separator: "; "))\(count > locations.count ? "; …" : ""))")
        }
    }

    private func report(_ summary: ImportSummary, sources: [ClientImporter.Found], context: CommandContext) {
        if context.options.json {
            context.output.jsonLine([
                "path": .string(path), "dry_run": .bool(dryRun),
                "sources": .array(sources.map { source in
                    .object(["format": .string(source.format.rawValue), "description": .string(source.description),
                             "accounts": .array(source.accounts.map { .string($0) })])
                }),
                "messages": .int(summary.lines), "added": .int(summary.messages), "duplicates": .int(summary.duplicates),
                "corrections": .int(summary.corrections), "files": .int(summary.files),
                "paths_refused": .int(summary.pathsRefused), "paths_refused_examples": Self.examples(summary.pathsRefusedExamples),
                "unread": .int(summary.unreadCount), "unread_reasons": .object(Self.counts(summary.unread)),
                "unread_examples": Self.examples(summary.unreadExamples),
                "refused": .int(summary.refusedCount),
                "refused_reasons": .object(Self.counts(summary.refused)),
                "refused_examples": Self.examples(summary.refusedExamples),
                "reactions": .object([
                    "read": .int(summary.reactions.read), "added": .int(summary.reactions.added),
                    "waiting": .int(summary.reactions.waiting), "duplicates": .int(summary.reactions.duplicates),
                    "refused": .int(summary.reactions.refusedCount), "refused_reasons": .object(Self.counts(summary.reactions.refused)),
                    "refused_examples": Self.examples(summary.reactions.refusedExamples),
                ]),
                "not_messages": .object(Self.counts(summary.notMessages)),
                "seconds": .double(summary.seconds),
            ])
            return
        }
        guard !context.options.quiet else { return }
        var text = "\(dryRun ? "would add" : "added") \(Counted.noun(summary.messages, "new message"))"
        if summary.corrections > 0 { text += " and \(Counted.noun(summary.corrections, "correction"))" }
        text += "; \(summary.duplicates) already archived"
        if summary.refusedCount > 0 { text += "; \(summary.refusedCount) refused" }
        if summary.files > 0 { text += "; \(summary.files) with files found on disk" }
        text += " (\(Counted.noun(summary.lines, "message")) read in " + String(format: "%.1f s)", summary.seconds)
        context.output.line(text)
        refusals(summary.refused, summary.refusedExamples, heading: "refused", context: context)
        // What could not be read at all, and files the history names outside the client's own folder: never silent.
        refusals(summary.unread, summary.unreadExamples, heading: "not read", context: context)
        if summary.pathsRefused > 0 {
            let examples = summary.pathsRefusedExamples.map { "\($0.location) — \($0.reason)" }
            context.output.line("  files not copied \(summary.pathsRefused): \(examples.joined(separator: "; "))\(summary.pathsRefused > examples.count ? "; …" : "")")
        }
        let reactions = summary.reactions
        if reactions.read > 0 {
            var line = "  reactions: \(dryRun ? "would add" : "added") \(reactions.added)"
            if reactions.waiting > 0 {
                line += " (\(reactions.waiting) waiting for \(reactions.waiting == 1 ? "its message" : "their messages"), not archived)"
            }
            line += "; \(reactions.duplicates) already archived"
            if reactions.refusedCount > 0 { line += "; \(reactions.refusedCount) refused" }
            context.output.line(line)
            refusals(reactions.refused, reactions.refusedExamples, heading: "reactions refused", context: context)
        }
        if !summary.notMessages.isEmpty {
            let kinds = summary.notMessages.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            context.output.line("  not messages, left out: " + kinds.joined(separator: ", "))
        }
    }
}

struct ImportFailure: CommandFailure {
    let error: ImportError
    var exitCode: ExitCode {
        switch error {
        case .invalidLines, .unreadable, .notARegularFile, .unrecognised, .sourceDamaged, .accountNeeded, .accountNotInSource: .nothingFound
        case .invalidTimeZone: .usage
        case .archive: .internalError
        }
    }
    var description: String { error.description }
}
