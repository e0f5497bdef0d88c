import Foundation
import RoostAgent
import RoostArchive
import RoostCore

/// `roost backup FILE`: one consistent backup of the archive, the OMEMO key store and the file store, taken
/// while the agent runs; `roost backup --verify FILE` checks one without restoring it (docs/backup.md).
struct BackupCommand: Command {
    static let name = "backup"
    static let summary = "back up the archive, the OMEMO keys and the stored files into one file (also while the agent runs)"
    static let usage = "[--verify] [--no-files] [--encrypt] [options] FILE"
    static let discussion = """
        Writes FILE: a tar holding a snapshot of the archive (SQLite's online backup API: one consistent state, \
        taken while `roost run` keeps writing), a snapshot of the OMEMO key store (omemo.sqlite, which holds \
        this device's private keys: keep the backup as private as the archive), the files of the file store \
        (unless --no-files) and, last, manifest.json: the format version, the roost version, the numbers of \
        messages, conversations and files, and each member's size and SHA-256. `tar tvf FILE` lists it. The \
        backup is written to FILE.tmp-… beside FILE (with the snapshots: room for about twice the archive is \
        needed there), synced, and renamed to FILE only once complete, so an interrupted backup never leaves a \
        FILE that looks whole; an existing FILE is replaced only then. --verify reads FILE instead: every \
        member against its hash, and the archive and the key store through `PRAGMA integrity_check`, without \
        restoring anything. `roost restore FILE` restores one. --encrypt encrypts the whole file (AES-256-GCM in \
        chunks that are each authenticated, a key from the passphrase by scrypt): the passphrase is the first \
        line printed by backup_key_command of the [backup] group, or else asked twice on the terminal, never \
        taken from the command line. --verify and `roost restore` ask for it the same way. \
        Exit status: 0 written (or valid), 1 the backup could not be written (or is not a valid backup), \
        2 invalid command line.
        """
    static let options: [OptionSpec] = [
        .flag("verify", help: "check FILE (every member's hash, the databases' integrity) instead of writing it"),
        .flag("no-files", help: "leave the file store out (the archive and the OMEMO keys only)"),
        .flag("encrypt", help: "encrypt the backup with a passphrase (backup_key_command in [backup], or asked)"),
    ]
    static let arguments: [ArgumentKind] = [.file]

    let file: String
    let verify: Bool
    let includeFiles: Bool
    let encrypt: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        file = try parsed.onePositional(named: "FILE")
        verify = parsed.flag("verify")
        includeFiles = !parsed.flag("no-files")
        encrypt = parsed.flag("encrypt")
        if verify && (!includeFiles || encrypt) {
            throw UsageError("\(encrypt ? "--encrypt" : "--no-files") is for writing a backup, not for --verify", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let manifest: BackupManifest
        if verify {
            let passphrase = try await BackupPassphrase.forReading(context: context, file: file)
            do { manifest = try ArchiveBackup.verify(file, passphrase: passphrase) } catch { throw BackupFailure(error: error) }
        } else {
            let config = try context.loadConfig()
            let passphrase = encrypt ? try await BackupPassphrase.forWriting(config: config) : nil
            guard FileManager.default.fileExists(atPath: config.archivePath) else { throw ArchiveMissing(path: config.archivePath) }
            context.output.info("archive: \(config.archivePath)")
            do {
                manifest = try ArchiveBackup.create(archivePath: config.archivePath, to: file, includeFiles: includeFiles,
                                                    roostVersion: RoostVersion.string, passphrase: passphrase)
            } catch { throw BackupFailure(error: error) }
        }
        if context.options.json {
            var object = Self.json(manifest)
            object["file"] = .string(file)
            object["valid"] = .bool(true)
            if !verify { object["encrypted"] = .bool(encrypt) }
            context.output.jsonLine(object)
        } else {
            let what = "\(Counted.noun(Int(manifest.messages), "message")) in \(Counted.noun(Int(manifest.conversations), "conversation")), "
                + "\(Counted.noun(manifest.files, "file")), \(FileSize.text(manifest.members.reduce(0) { $0 + $1.size }))"
            context.output.line(verify ? "\(file): a valid backup of \(TimeText.local(manifest.createdAt)) (roost \(manifest.roostVersion)): \(what)"
                                       : "backed up \(what) to \(file)")
        }
        return .ok
    }

    /// The fields of `roost backup --json` and `roost restore --json`.
    static func json(_ manifest: BackupManifest) -> JSONObject {
        [
            "format_version": .int(Int64(manifest.formatVersion)), "roost_version": .string(manifest.roostVersion),
            "created_at": .string(TimeText.utc(manifest.createdAt)), "messages": .int(manifest.messages),
            "conversations": .int(manifest.conversations), "files": .int(Int64(manifest.files)),
            "omemo": .bool(manifest.members.contains { $0.name == "omemo.sqlite" }),
            "members": .int(Int64(manifest.members.count)), "bytes": .int(manifest.members.reduce(0) { $0 + $1.size }),
        ]
    }
}

/// The passphrase of an encrypted backup: the first line of `[backup] backup_key_command`, or asked on the
/// terminal (twice when writing) — never an argument, which other users could read in the process list.
enum BackupPassphrase {
    static func forWriting(config: RoostConfig) async throws -> String {
        if let command = config.backup.keyCommand { return try await run(command) }
        let first = try TerminalInput.secret("passphrase for the backup: ")
        guard !first.isEmpty else { throw BackupFailure(message: "an empty passphrase encrypts nothing; none was given") }
        guard try TerminalInput.secret("the same passphrase again: ") == first else { throw BackupFailure(message: "the passphrases differ; nothing written") }
        return first
    }

    /// A function that gives the passphrase of an encrypted backup: read now from backup_key_command when the
    /// config sets one, else asked on the terminal when needed (nil without one). Nothing is run or asked for a
    /// backup that is not encrypted.
    static func forReading(context: CommandContext, file: String) async throws -> () throws(BackupError) -> String? {
        guard ArchiveBackup.isEncrypted(file) else { return { nil } }
        if let command = (try? context.loadConfig())?.backup.keyCommand {
            let phrase = try await run(command)
            return { phrase }
        }
        return { (try? TerminalInput.secret("passphrase of the backup: ")).flatMap { $0.isEmpty ? nil : $0 } }
    }

    private static func run(_ command: String) async throws -> String {
        switch await ProcessRunner.firstLine(ofCommand: command, input: .inherit) {
        case .success(let line): return line
        case .failure(let failure): throw BackupFailure(message: "backup_key_command \(failure.reason)")
        }
    }
}

/// A backup or restore that failed: exit status 1, nothing half-written left behind.
struct BackupFailure: CommandFailure {
    let description: String
    var exitCode: ExitCode { .nothingFound }

    init(error: BackupError) { description = error.description }
    init(message: String) { description = message }
}
