import RoostCore
import Foundation
import RoostAgent
import RoostArchive

/// `roost verify`: is every message of the server archive in the local archive, exactly once?
struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "compare the local archive with the server archive (gaps, duplicates, orphans)"
    static let usage = "[--repair] [--files] [options]"
    static let discussion = """
        Logs in once on a resource of its own (also while the agent runs), pages through the account's whole \
        server archive (XEP-0313) and compares its ids with the trusted stanza-ids of the local archive. Reports \
        server messages missing locally (as ranges), local messages the server no longer lists (orphans, e.g. \
        an expired server archive; informational) and rows stored twice — a private message in a room too, \
        which the server archives once per client of yours in the room (those copies are one message). Room \
        invitations the server archived as messages are compared with the invitations Roost keeps (roost rooms \
        invites) and reported apart. --repair archives the missing messages and invitations exactly as catch-up would. It also reads every file of the file store again and compares its SHA-256 \
        with the one recorded (--files: only that, without logging in); --repair sends missing or damaged files \
        back to download. Exit status 0 when consistent (after --repair: when repaired), 1 when messages or \
        invitations are missing, messages are stored twice or files are missing or damaged. With --json, one object.
        """
    static let options: [OptionSpec] = [
        .flag("repair", help: "archive the messages missing locally; download missing or damaged files again"),
        .flag("files", help: "only check the stored files' hashes (no login)"),
    ]

    let repair: Bool
    let filesOnly: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        guard parsed.positionals.isEmpty else { throw UsageError("unexpected argument \(parsed.positionals[0])", command: parsed.command) }
        repair = parsed.flag("repair")
        filesOnly = parsed.flag("files")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let files = try checkFiles(context: context)
        if filesOnly {
            if context.options.json {
                context.output.jsonLine(["files": .object(Self.json(files))])
            } else {
                for line in Self.humanLines(files) { context.output.line(line) }
            }
            return files.consistent ? .ok : .nothingFound
        }
        let link = try AgentLink(context: context, command: "roost verify")
        let level = context.options.effectiveLogLevel(configured: link.config.logLevel, commandDefault: .warning)
        if !context.options.json && context.output.standardErrorIsTTY {
            context.output.note("reading the server archive of \(link.account.jid)…")
        }
        let report = try await VerifyArchiveAction(repair: repair).run(account: link.account, config: link.config, log: Logger(level: level))
        if context.options.json {
            var object = Self.json(report)
            object["files"] = .object(Self.json(files))
            context.output.jsonLine(object)
        } else {
            for line in Self.humanLines(report) + Self.humanLines(files) { context.output.line(line) }
        }
        return report.consistent && files.consistent ? .ok : .nothingFound
    }

    private func checkFiles(context: CommandContext) throws -> FileStoreVerification.Report {
        let config = try context.loadConfig()
        guard FileManager.default.fileExists(atPath: config.archivePath) else { return FileStoreVerification.Report() }
        do { return try FileStoreVerification(archivePath: config.archivePath).run(repair: repair) } catch { throw ArchiveFailure(error: error) }
    }

    static func json(_ files: FileStoreVerification.Report) -> JSONObject {
        [
            "checked": .int(Int64(files.checked)), "intact": .int(Int64(files.intact)),
            "missing": .array(files.missing.map { .string($0) }), "corrupt": .array(files.corrupt.map { .string($0) }),
            "unreadable": .array(files.unreadable.map { .string($0) }), "requeued": .int(Int64(files.requeued)),
            "consistent": .bool(files.consistent),
        ]
    }

    static func humanLines(_ files: FileStoreVerification.Report) -> [String] {
        var lines = ["files: \(files.checked) stored, \(files.intact) intact"]
        for sha256 in files.missing { lines.append("  missing: \(sha256)") }
        for sha256 in files.corrupt { lines.append("  damaged (hash differs): \(sha256)") }
        for sha256 in files.unreadable { lines.append("  unreadable: \(sha256)") }
        if files.requeued > 0 { lines.append("  \(Counted.noun(files.requeued, "attachment")) sent back to download") }
        else if !files.missing.isEmpty || !files.corrupt.isEmpty { lines.append("  run `roost verify --files --repair` to download them again") }
        return lines
    }

    static func json(_ report: VerifyReport) -> JSONObject {
        func duplicates(_ groups: [VerifyReport.Duplicate]) -> JSONValue {
            .array(groups.map { .object(["key": .string($0.key), "rows": .array($0.rowIds.map { .int($0) })]) })
        }
        return [
            "account": .string(report.account),
            "consistent": .bool(report.consistent),
            "server_messages": .int(Int64(report.serverMessages)),
            "server_stored_kinds": .int(Int64(report.serverStorable)),
            "rejected": .int(Int64(report.rejected)),
            "local_trusted_ids": .int(Int64(report.localTrusted)),
            "missing": .int(Int64(report.missing)),
            "missing_ranges": .array(report.missingRanges.map { range in
                .object(["count": .int(Int64(range.count)), "first_id": .string(range.firstId), "last_id": .string(range.lastId),
                         "first_time": .string(TimeText.utc(range.firstTimestamp)), "last_time": .string(TimeText.utc(range.lastTimestamp))])
            }),
            "unlinked": .int(Int64(report.unlinked)),
            "room_private_copies": .int(Int64(report.roomPrivateCopies)),
            "repaired": .int(Int64(report.repaired)),
            "room_invitations": .int(Int64(report.roomInvitations)),
            "room_invitations_missing": .int(Int64(report.roomInvitationsMissing)),
            "room_invitations_repaired": .int(Int64(report.roomInvitationsRepaired)),
            "missing_invitations": .array(report.missingInvitations.map { invitation in
                .object(["id": .string(invitation.id), "room": .string(invitation.room), "from": invitation.inviter.map { .string($0) } ?? .null,
                         "time": .string(TimeText.utc(invitation.timestamp))])
            }),
            "orphans": .int(Int64(report.orphans)),
            "orphan_sample": .array(report.orphanSample.map { .string($0) }),
            "duplicate_stanza_ids": duplicates(report.duplicateStanzaIds),
            "duplicate_fallback_keys": duplicates(report.duplicateFallbackKeys),
        ]
    }

    static func humanLines(_ report: VerifyReport) -> [String] {
        var lines = ["\(report.account): server archive \(Counted.noun(report.serverStorable, "message")), local archive \(Counted.number(report.localTrusted)) with server ids"]
        if report.repaired > 0 { lines.append("repaired: \(Counted.noun(report.repaired, "message")) archived from the server") }
        if report.missing > 0 {
            lines.append("missing locally: \(Counted.number(report.missing)) in \(Counted.noun(report.missingRanges.count, "range"))")
            for range in report.missingRanges.prefix(20) {
                lines.append("  \(range.count) from \(TimeText.local(range.firstTimestamp, seconds: true)) (\(range.firstId)) "
                             + "to \(TimeText.local(range.lastTimestamp, seconds: true)) (\(range.lastId))")
            }
            if report.missingRanges.count > 20 { lines.append("  … \(report.missingRanges.count - 20) more (see --json)") }
            lines.append("run `roost verify --repair` to archive them")
        }
        if report.roomInvitations > 0 {
            lines.append("room invitations: \(Counted.number(report.roomInvitations)) (kept as invitations: roost rooms invites --all)")
        }
        if report.roomInvitationsRepaired > 0 {
            lines.append("repaired: \(Counted.noun(report.roomInvitationsRepaired, "room invitation")) archived from the server")
        }
        if report.roomInvitationsMissing > 0 {
            lines.append("room invitations missing locally: \(Counted.number(report.roomInvitationsMissing))")
            for invitation in report.missingInvitations {
                lines.append("  \(TimeText.local(invitation.timestamp, seconds: true)) to \(invitation.room)"
                             + (invitation.inviter.map { " from \($0)" } ?? "") + " (\(invitation.id))")
            }
            if report.roomInvitationsMissing > report.missingInvitations.count {
                lines.append("  … \(report.roomInvitationsMissing - report.missingInvitations.count) more")
            }
            if report.missing == 0 { lines.append("run `roost verify --repair` to archive them") }
        }
        if report.unlinked > 0 { lines.append("stored but not yet linked to their server id: \(report.unlinked) (the agent links them on catch-up)") }
        if report.roomPrivateCopies > 0 {
            lines.append("server copies of private messages in rooms stored as one: \(report.roomPrivateCopies) (the room delivered them to several of your clients)")
        }
        if report.orphans > 0 { lines.append("local messages the server no longer lists: \(report.orphans) (its archive may have expired; kept)") }
        if !report.duplicateStanzaIds.isEmpty { lines.append("rows sharing a server id: \(Counted.noun(report.duplicateStanzaIds.count, "group"))") }
        if !report.duplicateFallbackKeys.isEmpty { lines.append("rows stored twice (same fallback key): \(Counted.noun(report.duplicateFallbackKeys.count, "group"))") }
        if report.rejected > 0 { lines.append("rejected server results (wrong sender or query): \(report.rejected)") }
        lines.append(report.consistent ? "consistent" : "NOT consistent")
        return lines
    }
}
