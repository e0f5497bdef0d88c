import Foundation
import RoostArchive
import RoostXMPP
import RoostNotify

/// `roost run`: every enabled account connected concurrently, everything archived, until told to stop.
public final class Agent: Sendable {
    public let config: RoostConfig
    public let settings: AgentSettings
    private let log: Logger
    private let writer: ArchiveWriter
    public let pipeline: IngestPipeline
    let sessions: [AccountSession]
    private let notifications = NotificationHub()

    /// Opens the archive (creating it 0600 in a 0700 folder) and prepares one session per enabled account.
    /// Passwords are resolved here, once; a failing `password_command` fails that account only.
    public init(config: RoostConfig, settings: AgentSettings, log: Logger) throws {
        var settings = settings
        if settings.archivePath.isEmpty { settings.archivePath = config.archivePath }
        self.config = config
        self.settings = settings
        self.log = log
        writer = try ArchiveWriter(path: config.archivePath, durability: .full)
        pipeline = IngestPipeline(writer: writer, log: log)
        var sessions: [AccountSession] = []
        for account in config.enabledAccounts {
            do {
                let password = try account.resolvePassword()
                let sync = try? writer.syncState(account: account.jid)
                // A process that died keeps its SM session on the server for the hibernation time: resume it with
                // the `h` committed together with the data, so nothing is lost and nothing arrives twice.
                let resumption = sync.flatMap { s -> StreamResumptionState? in
                    guard let id = s.streamManagementId, let h = s.streamManagementH else { return nil }
                    return StreamResumptionState(id: id, inboundHandled: h)
                }
                let reader = try? ArchiveReader(path: config.archivePath)
                let contacts = (try? reader?.contacts(account: account.jid, includeRemoved: true)) ?? []
                let pending = ((try? reader?.pendingSubscriptionRequests(account: account.jid)) ?? []).map(\.jid)
                let session = try AccountSession(account: account, password: password, settings: settings, pipeline: pipeline,
                                                 log: log, resumption: resumption, sync: sync, notifications: notifications,
                                                 contacts: contacts, pendingRequests: pending)
                // XEP-0153: announce the account's own photo hash from the first presence on.
                if let own = try? ArchiveReader(path: config.archivePath).contact(account: account.jid, jid: account.jid),
                   own.vCardFetchedAt != nil {
                    session.client.setPresenceExtras([VCardAvatarUpdate.element(photoHash: own.photoHash)])
                }
                sessions.append(session)
            } catch {
                log.error("\(account.jid): \(error) — this account is skipped")
            }
        }
        self.sessions = sessions
        // The notifier answers friend requests through the agent itself, so it is made last.
        let notify = NotifyConfig.parse(notify: config.notify, sinks: config.sinks)
        if !notify.1.isEmpty {
            let path = config.sourcePath ?? "config"
            throw ConfigError.invalid(path: path, problems: notify.1.map {
                config.locations.problem(group: $0.group, key: $0.key, message: $0.message)
            })
        }
        let dataDirectory = (config.archivePath as NSString).deletingLastPathComponent
        let actions = AgentNotificationActions(handle: self, dataDirectory: dataDirectory, log: log)
        let logger = log
        notifications.attach(Notifier(config: notify.0, actions: actions, statePath: dataDirectory + "/notify-state.json", log: { level, message in
            switch level {
            case .error: logger.error(message)
            case .warning: logger.warning(message)
            case .info: logger.info(message)
            case .debug: logger.debug(message)
            }
        }))
    }

    public var accountCount: Int { sessions.count }

    /// Runs until `shutdown` yields, then stops cleanly: commit, unavailable presence, close stream and archive.
    public func run<S: AsyncSequence & Sendable>(until shutdown: S) async where S.Element == Int32 {
        log.info("archive: \(config.archivePath)")
        for session in sessions { await session.start() }
        let sessions = self.sessions
        let monitor = NetworkMonitor {
            for session in sessions { Task { await session.networkChanged() } }
        }
        if monitor == nil { log.debug("no netlink: reconnects rely on backoff alone") }
        var iterator = shutdown.makeAsyncIterator()
        if let signal = try? await iterator.next() {
            log.info("received signal \(signal); shutting down")
        }
        await stop()
        withExtendedLifetime(monitor) {}
    }

    public func stop() async {
        await withTaskGroup(of: Void.self) { group in
            for session in sessions { group.addTask { await session.stop() } }
        }
        await pipeline.drainAndStop()
        await notifications.current?.shutdown()
        do { try writer.checkpoint() } catch { log.error("closing the archive: \(error)") }
        log.info("stopped")
    }

    public func states() async -> [(String, AccountState)] {
        var out: [(String, AccountState)] = []
        for session in sessions { out.append((session.jid.description, await session.currentState())) }
        return out
    }
}
