import RoostCore
public import RoostArchive

/// `[mirror]`: the live Maildir `roost run` keeps (docs/mirror.md). No `maildir`: no mirror.
public struct MirrorConfig: Sendable, Hashable {
    /// `maildir`: the mirror's folder.
    public var maildir: String?
    /// `split`: `conversation` (default: one Maildir per conversation), `month` or `none`.
    public var split: ExportSplit = .conversation
    /// `query`: only what this query (`roost search`'s language) selects; empty: everything.
    public var query = ""
    /// `attachments`: `true` (stored files up to 25M embedded), `false` (none: the mail names the URL) or a size.
    public var attachmentLimit: Int64? = ExportOptions.defaultMailAttachmentLimit
    /// `read_from_mirror`: a mail marked seen in the Maildir marks its conversation read up to it.
    public var readFromMirror = false

    public init() {}

    /// The mirror's settings, nil when `[mirror]` names no folder.
    public func settings(accounts: Int) -> MirrorSettings? {
        guard let maildir else { return nil }
        var settings = MirrorSettings(maildir: maildir)
        settings.split = split
        settings.query = query
        settings.attachmentLimit = attachmentLimit
        settings.readFromMirror = readFromMirror
        settings.accountFolders = accounts > 1
        return settings
    }
}
