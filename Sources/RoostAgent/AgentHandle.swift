public import RoostXMPP
public import RoostArchive

/// What the control socket (and anything else driving a running agent) may use.
public protocol AgentHandle: Sendable {
    var accountJIDs: [String] { get }
    var archivePath: String { get }
    var writer: ArchiveWriter { get }
    /// The account's client while it is online; nil while connecting or failed.
    func client(for account: String) async -> XMPPClient?
    func status() async -> [AccountStatus]
    /// Stops the account for the rest of the agent's run (it was deleted on the server).
    func stopAccount(_ account: String) async
    /// The attachment download worker, when the agent has one.
    var files: FileDownloadWorker? { get }
    /// The account's settings as the agent uses them now (they change when a SIGHUP reloads the config).
    func accountConfig(_ account: String) -> AccountConfig?
    /// `[mirror]`'s Maildir writer, when the agent keeps one.
    var mirror: MailMirror? { get }
    /// SIGHUPs handled, and the web view's address once it serves (`roost status`).
    var sighupsHandled: Int? { get }
    var webView: String? { get }
}

extension AgentHandle {
    public var files: FileDownloadWorker? { nil }
    public var mirror: MailMirror? { nil }
    public func accountConfig(_ account: String) -> AccountConfig? { nil }
    public var sighupsHandled: Int? { nil }
    public var webView: String? { nil }
}

extension Agent: AgentHandle {
    public var accountJIDs: [String] { sessions.map { $0.jid.description } }
    public var archivePath: String { config.archivePath }

    public func accountConfig(_ account: String) -> AccountConfig? { config.account(account) }

    public func client(for account: String) async -> XMPPClient? {
        guard let session = sessions.first(where: { $0.jid.description.caseInsensitiveCompare(account) == .orderedSame }) else { return nil }
        return await session.onlineClient()
    }

    /// The account's OMEMO device, when `omemo = on`.
    func omemo(for account: String) -> OMEMOService? {
        sessions.first(where: { $0.jid.description.caseInsensitiveCompare(account) == .orderedSame })?.omemo
    }

    /// The account's group chats.
    func rooms(for account: String) -> RoomManager? {
        sessions.first(where: { $0.jid.description.caseInsensitiveCompare(account) == .orderedSame })?.rooms
    }

    public func status() async -> [AccountStatus] {
        var out: [AccountStatus] = []
        for session in sessions { out.append(await session.status()) }
        return out
    }

    public func stopAccount(_ account: String) async {
        guard let session = sessions.first(where: { $0.jid.description.caseInsensitiveCompare(account) == .orderedSame }) else { return }
        log.info("\(account): deleted on the server; not reconnecting")
        await session.stop()
    }
}
