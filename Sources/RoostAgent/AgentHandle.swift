public import Foundation
public import RoostArchive

/// What the control socket (and anything else driving a running agent) may use.
public protocol AgentHandle: Sendable {
    var accountJIDs: [String] { get }
    var archivePath: String { get }
    var writer: ArchiveWriter { get }
    /// Runs an action for the account through its session, with the session's client while it is online; nil
    /// (nothing run) while connecting or failed.
    func perform(for account: String, _ request: ActionRequest, _ work: @escaping @Sendable (ActionContext) async -> Data) async -> Data?
    /// Where an action for the account records what it did (through its session in the agent).
    func archive(for account: String) -> ActionArchive
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
    public func archive(for account: String) -> ActionArchive { ActionArchive(writer: writer, downloads: files) }
}

extension Agent: AgentHandle {
    public var accountJIDs: [String] { sessions.map { $0.jid.description } }
    public var archivePath: String { config.archivePath }

    public func accountConfig(_ account: String) -> AccountConfig? { config.account(account) }

    public func perform(for account: String, _ request: ActionRequest, _ work: @escaping @Sendable (ActionContext) async -> Data) async -> Data? {
        await session(for: account)?.perform(request, work)
    }

    public func archive(for account: String) -> ActionArchive {
        session(for: account)?.actionArchive ?? ActionArchive(writer: writer, downloads: files)
    }

    private func session(for account: String) -> AccountSession? {
        sessions.first(where: { $0.jid.description.caseInsensitiveCompare(account) == .orderedSame })
    }

    public func status() async -> [AccountStatus] {
        var out: [AccountStatus] = []
        for session in sessions { out.append(await session.status()) }
        return out
    }

    public func stopAccount(_ account: String) async {
        guard let session = session(for: account) else { return }
        log.info("\(account): deleted on the server; not reconnecting")
        await session.stop()
    }
}
