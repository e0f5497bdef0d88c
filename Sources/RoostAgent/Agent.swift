import RoostCore
import Foundation
import RoostArchive
import RoostXMPP
import RoostNotify
import Synchronization

/// `roost run`: every enabled account connected concurrently, everything archived, until told to stop.
public final class Agent: Sendable {
    public let config: RoostConfig
    public let settings: AgentSettings
    let log: Logger
    private let writer: ArchiveWriter
    public let pipeline: IngestPipeline
    let sessions: [AccountSession]
    private let notifications = NotificationHub()
    /// What `run` reacts to besides signals: every account failing, the archive stalling.
    private let happenings = BoundedQueue<Happening>(capacity: 64)

    private enum Happening: Sendable {
        case signal(Int32)
        case accountStateChanged
        case archiveHealth(IngestPipeline.Health)
    }

    /// Why `run` returned.
    public enum Ending: Sendable, Equatable {
        /// SIGTERM or SIGINT.
        case stopped(signal: Int32)
        /// Every account waits for the user (authentication or certificate): systemd should show a failure.
        case everyAccountFailed
    }
    /// Downloads attachments after their message is committed (nil when the archive could not be read).
    public let files: FileDownloadWorker?

    /// Opens the archive (creating it 0600 in a 0700 folder) and prepares one session per enabled account.
    /// Passwords are resolved later, by each session, off the start-up path.
    public init(config: RoostConfig, settings: AgentSettings, log: Logger) throws {
        var settings = settings
        if settings.archivePath.isEmpty { settings.archivePath = config.archivePath }
        self.config = config
        self.settings = settings
        self.log = log
        writer = try ArchiveWriter(path: config.archivePath, durability: .full)
        let happenings = self.happenings
        pipeline = IngestPipeline(writer: writer, log: log) { health in
            happenings.offer(.archiveHealth(health))
        }
        files = try? FileDownloadWorker(writer: writer, settings: config.files, accounts: config.enabledAccounts, log: log)
        if let files {
            writer.observeNewAttachments { files.enqueue($0) }
            notifications.attach(files)
        }
        var sessions: [AccountSession] = []
        for account in config.enabledAccounts {
            do {
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
                let session = try AccountSession(account: account, settings: settings, pipeline: pipeline,
                                                 log: log, resumption: resumption, sync: sync, notifications: notifications,
                                                 contacts: contacts, pendingRequests: pending) {
                    happenings.offer(.accountStateChanged)
                }
                // XEP-0153: announce the account's own photo hash from the first presence on.
                if let own = try? reader?.contact(account: account.jid, jid: account.jid), own.vCardFetchedAt != nil {
                    session.client.setPresenceExtras([VCardAvatarUpdate.element(photoHash: own.photoHash)])
                }
                sessions.append(session)
            } catch {
                log.error("\(account.jid): \(LogText.quote(error)) — this account is skipped")
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

    /// Runs until a signal from `shutdown` (SIGTERM, SIGINT) or until every account waits for the user;
    /// SIGHUP makes accounts that wait try again now. Then stops cleanly: commit, unavailable presence,
    /// close streams and archive.
    public func run<S: AsyncSequence & Sendable>(signals: S) async -> Ending where S.Element == Int32 {
        log.info("archive: \(config.archivePath)")
        files?.start()
        let happenings = self.happenings
        let forwarder = Task {
            do {
                for try await signal in signals { happenings.offer(.signal(signal)) }
            } catch {}
        }
        for session in sessions { await session.start() }
        let sessions = self.sessions
        let monitor = NetworkMonitor {
            for session in sessions { Task { await session.networkChanged() } }
        }
        log.debug(monitor == nil ? "no netlink: reconnects rely on backoff alone" : "watching the network for changes (netlink)")
        var stallWatch: Task<Void, Never>?
        var ending = Ending.stopped(signal: 0)
        loop: for await happening in happenings {
            switch happening {
            case .signal(SIGHUP):
                log.info("received SIGHUP; accounts waiting to reconnect try again now")
                for session in sessions { await session.retryNow() }
            case .signal(let signal):
                log.info("received signal \(signal); shutting down")
                ending = .stopped(signal: signal)
                break loop
            case .accountStateChanged:
                if await everyAccountFailed() {
                    log.error("every account failed (see above) and needs a change by you; stopping with a failure")
                    ending = .everyAccountFailed
                    break loop
                }
            case .archiveHealth(let health):
                stallWatch?.cancel()
                stallWatch = nil
                if case .failing = health {
                    let limit = settings.archiveStallLimit
                    stallWatch = Task {
                        try? await Task.sleep(for: limit)
                        guard !Task.isCancelled else { return }
                        for session in sessions { await session.archiveStalled(for: limit) }
                    }
                }
            }
        }
        stallWatch?.cancel()
        forwarder.cancel()
        await stop()
        withExtendedLifetime(monitor) {}
        return ending
    }

    private func everyAccountFailed() async -> Bool {
        guard !sessions.isEmpty else { return false }
        for session in sessions where !(await session.currentState().isFailed) { return false }
        return true
    }

    public func stop() async {
        // A password_command (or notification command) still running is not waited for.
        ProcessRunner.killAll()
        await withTaskGroup(of: Void.self) { group in
            for session in sessions { group.addTask { await session.stop() } }
        }
        await pipeline.drainAndStop()
        await files?.stop()
        await notifications.current?.shutdown()
        do { try writer.checkpoint() } catch { log.error("closing the archive: \(LogText.quote(error))") }
        log.info("stopped")
    }

    public func states() async -> [(String, AccountState)] {
        var out: [(String, AccountState)] = []
        for session in sessions { out.append((session.jid.description, await session.currentState())) }
        return out
    }
}
