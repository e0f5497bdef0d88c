/// `[files]`: which attachments Roost downloads and keeps, and the limits that protect the user doing it.
public struct FilesSettings: Sendable, Hashable {
    public enum Download: String, CaseIterable, Sendable {
        /// Files from contacts in the roster with a subscription, and the user's own.
        case contacts
        /// Every file anyone sends.
        case all
        /// None on their own; `roost files fetch` still fetches on request.
        case none
    }

    public var download: Download = .contacts
    /// Larger files are not downloaded (state `too-large`); checked from `Content-Length` and while streaming.
    public var maxSize: Int64 = 100 << 20
    /// Allow URLs that resolve to loopback, private, link-local or other non-public addresses.
    public var allowPrivateAddresses = false
    /// The first retry of a failed download waits this long; each further one twice as long, up to a day.
    public var retrySeconds = 60
    /// A transfer (redirects included) that is not done after this many seconds is abandoned (and retried later):
    /// a server that trickles cannot hold a download thread for ever.
    public var maxTransferSeconds = 1800
    /// A transfer slower than this many bytes a second, over `minRateSeconds`, is abandoned (and retried later).
    public var minRate: Int64 = 1024
    /// The bytes the file store may hold in all (0: no limit).
    public var quota: Int64 = 20 << 30
    /// The bytes of the files of one conversation (a contact, or a room) the store may hold (0: no limit).
    public var quotaPerContact: Int64 = 2 << 30
    /// Downloads leave at least this much free on the archive's file system.
    public var minFree: Int64 = 1 << 30

    public static let maxAttempts = 10
    /// The window over which `minRate` is measured.
    public static let minRateSeconds = 20
    /// Downloads at once from one conversation (a contact or a room): one contact's files, however many and however
    /// slow, never take every download thread.
    public static let slotsPerSender = 1
    /// Download threads.
    public static let threads = 2

    public init() {}
}
