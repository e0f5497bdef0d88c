import Foundation
import RoostAgent
import RoostArchive

/// `roost restore FILE [--to PATH]`: a backup, verified, into a new archive path.
struct RestoreCommand: Command {
    static let name = "restore"
    static let summary = "restore a backup into a new archive path (never over an existing archive)"
    static let usage = "[--to PATH] [options] FILE"
    static let discussion = """
        Restores a backup written by `roost backup` as the archive at PATH (--to; default: the config's \
        [archive] path), with the OMEMO key store and the stored files beside it, where roost looks for them. \
        Refuses when an archive or a key store is already there, or while an agent runs on that archive: \
        move the old one away first. Every member is read and checked against the manifest's SHA-256, and the \
        archive and the key store through `PRAGMA integrity_check`, before anything is put in place; the \
        archive is put last. Then `roost run` (with [archive] path pointing at it) resumes from the restored \
        catch-up marks: what arrived after the backup is fetched from the server archive, as far back as the \
        server keeps it, and nothing is stored twice. An encrypted backup needs its passphrase: \
        backup_key_command of [backup], or asked on the terminal. \
        Exit status: 0 restored, 1 the backup is not valid or the target exists (nothing restored), 2 invalid \
        command line.
        """
    static let options: [OptionSpec] = [
        .value("to", placeholder: "PATH", help: "the archive to create (default: [archive] path of the config)").completing(.file),
    ]
    static let arguments: [ArgumentKind] = [.file]

    let file: String
    let target: String?

    init(parsed: ParsedArguments) throws(UsageError) {
        file = try parsed.onePositional(named: "FILE")
        target = parsed.value("to")
        if target?.isEmpty == true { throw UsageError("--to needs a path", command: parsed.command) }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let archive = URL(fileURLWithPath: try target ?? context.loadConfig().archivePath).standardizedFileURL.path
        if let agent = AgentLink.agentStatus(environment: context.environment),
           URL(fileURLWithPath: agent.archive).standardizedFileURL.path == archive {
            throw BackupFailure(message: "an agent (pid \(agent.pid)) runs on \(archive); stop it first (`systemctl --user stop roost`)")
        }
        let manifest: BackupManifest
        let passphrase = try await BackupPassphrase.forReading(context: context, file: file)
        do { manifest = try ArchiveBackup.restore(file, to: archive, passphrase: passphrase) } catch { throw BackupFailure(error: error) }
        if context.options.json {
            var object = BackupCommand.json(manifest)
            object["archive"] = .string(archive)
            context.output.jsonLine(object)
        } else {
            context.output.line("restored \(Counted.noun(Int(manifest.messages), "message")) in \(Counted.noun(Int(manifest.conversations), "conversation")) "
                + "and \(Counted.noun(manifest.files, "file")) (backup of \(TimeText.local(manifest.createdAt))) to \(archive)")
            context.output.note("`roost run` with [archive] path = \(archive) fetches what came after the backup from the server archive")
        }
        return .ok
    }
}
