import RoostCore
import Foundation
import RoostArchive

/// `[backup]`: `roost backup`, and the backups `roost run` makes on its own (`every`). See docs/backup.md.
public struct BackupConfig: Sendable, Hashable {
    /// `backup_key_command`: prints the passphrase of encrypted backups on its first line (never in argv or the
    /// config itself); unset, `roost backup --encrypt` asks on the terminal.
    public var keyCommand: String?
    /// `every`: seconds between scheduled backups (`12h`, `1d`); nil: none.
    public var every: Int?
    /// `keep`: how many scheduled backups stay; older ones are removed after each new one.
    public var keep = 7
    /// `path`: the folder of scheduled backups; nil: `backups` beside the archive.
    public var path: String?
    /// `encrypt`: scheduled backups are encrypted with backup_key_command's passphrase (the agent has no terminal).
    public var encrypt = false

    public init() {}

    /// The folder scheduled backups go to.
    public func folder(archivePath: String) -> String {
        path ?? (archivePath as NSString).deletingLastPathComponent + "/backups"
    }
}
