import RoostCore
import Foundation
import RoostArchive

/// Makes `[backup] every` backups in the agent: at start when the newest is older than `every` (or there is none),
/// then each time the next one is due; keeps the newest `keep`.
enum ScheduledBackups {
    /// Starts the schedule; nil without `every`. Cancel the task to stop it.
    static func start(_ config: BackupConfig, archive: String, log: Logger) -> Task<Void, Never>? {
        guard let every = config.every else { return nil }
        let folder = config.folder(archivePath: archive)
        return Task.detached(priority: .utility) {
            while !Task.isCancelled {
                let now = Date()
                let age = newest(in: folder).map { now.timeIntervalSince($0) }
                var delay = Double(every)
                if let age, age >= 0, age < Double(every) {
                    delay = Double(every) - age
                } else {
                    // A failure waits for the next due time too: the agent runs on.
                    await make(config, archive: archive, folder: folder, log: log)
                }
                do { try await Task.sleep(for: .milliseconds(Int64(delay * 1000))) } catch { return }
            }
        }
    }

    /// `roost-20261206-214500.backup` (UTC), the one name scheduled backups have and the only files removed.
    static func name(at milliseconds: Int64) -> String {
        let t = CivilTime(milliseconds: milliseconds)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "roost-\(t.year)\(two(t.month))\(two(t.day))-\(two(t.hour))\(two(t.minute))\(two(t.second)).backup"
    }

    static func isScheduled(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count == 28, name.hasPrefix("roost-"), name.hasSuffix(".backup"), bytes[14] == UInt8(ascii: "-") else { return false }
        return (bytes[6..<14] + bytes[15..<21]).allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// The scheduled backups in `folder`, oldest first (their names sort by time).
    static func existing(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter(isScheduled).sorted()
    }

    /// When the newest scheduled backup in `folder` was written.
    static func newest(in folder: String) -> Date? {
        guard let last = existing(in: folder).last else { return nil }
        return (try? FileManager.default.attributesOfItem(atPath: folder + "/" + last))?[.modificationDate] as? Date
    }

    /// One backup, as `roost backup` writes it, then the oldest beyond `keep` removed; logged either way.
    static func make(_ config: BackupConfig, archive: String, folder: String, log: Logger) async {
        let started = ContinuousClock.now
        let file = folder + "/" + name(at: Timestamp.now())
        do {
            var passphrase: String?
            if config.encrypt, let command = config.keyCommand {
                switch await ProcessRunner.firstLine(ofCommand: command) {
                case .success(let line): passphrase = line
                case .failure(let failure): throw BackupError.crypto("backup_key_command " + failure.reason)
                }
            }
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let phrase = passphrase
            // A thread of its own: seconds of copying must not hold one of the cooperative pool's threads.
            let manifest = try await offPool(name: "roost.backup") {
                try ArchiveBackup.create(archivePath: archive, to: file, includeFiles: true,
                                         roostVersion: RoostVersion.string, passphrase: phrase)
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int64 ?? 0
            let seconds = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
            log.info("scheduled backup: wrote \(file) (\(FileSize.text(size)), \(manifest.messages) messages, "
                     + "in \(String(format: "%.1f", seconds)) s)")
        } catch {
            log.warning("scheduled backup to \(file) failed; trying again in \(config.every ?? 0) s: \(LogText.quote(error))")
            return
        }
        let all = existing(in: folder)
        for old in all.dropLast(config.keep) {
            do {
                try FileManager.default.removeItem(atPath: folder + "/" + old)
                log.info("scheduled backup: removed \(folder)/\(old) (keep = \(config.keep))")
            } catch {
                log.warning("scheduled backup: could not remove \(folder)/\(old): \(LogText.quote(error))")
            }
        }
    }
}
