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

    public static let maxAttempts = 10

    public init() {}
}
