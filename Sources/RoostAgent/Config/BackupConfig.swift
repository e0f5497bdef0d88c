/// `[backup]`: `roost backup`. See docs/backup.md.
public struct BackupConfig: Sendable, Hashable {
    /// `backup_key_command`: prints the passphrase of encrypted backups on its first line (never in argv or the
    /// config itself); unset, `roost backup --encrypt` asks on the terminal.
    public var keyCommand: String?

    public init() {}
}
