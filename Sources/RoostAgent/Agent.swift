public import RoostCore
import Foundation
public import RoostArchive
import RoostXMPP
import RoostNotify
import Synchronization

/// `roost run`: every enabled account connected concurrently, everything archived, until told to stop.
public final class Agent: Sendable {
    /// The config in use: the one the agent started with, then each one a SIGHUP loaded.
    public var config: RoostConfig { current.withLock { $0 } }
    private let current: Mutex<RoostConfig>
    public let settings: AgentSettings
    let log: Logger
    /// The archive's one writer (its thread owns the read-write connection): the sessions, actions, downloads
    /// and retention all write through it.
    public let writer: ArchiveWriter
    /// One per enabled account; a reload stops, replaces and adds sessions.
    var sessions: [AccountSession] { sessionList.withLock { $0 } }
    private let sessionList = Mutex<[AccountSession]>([])
    private let notifications = NotificationHub()
    /// Whether any account logged in during this run: until then a config that cannot log in stops the agent.
    private let history = RunHistory()
    /// What `run` reacts to besides signals: every account failing, the archive stalling.
    private let happenings = BoundedQueue<Happening>(capacity: 64)
    /// What `roost status` shows of the agent itself: SIGHUPs handled, the web view's address (`[serve]`).
    private let shown = Mutex((sighups: 0, webView: String?.none))

    private enum Happening: Sendable {
        case signal(Int32)
        case accountStateChanged
        case archiveHealth(ArchiveWriter.Health)
    }

    /// Queues a happening from a thread that cannot wait (a session's state callback, the archive thread). With 64
    /// waiting it is dropped, and logged: what is queued makes `run` read the accounts' and archive's state again,
    /// which covers the one dropped. Signals never come this way: they wait for a place (`run`).
    private static func offer(_ happening: Happening, to happenings: BoundedQueue<Happening>, log: Logger) {
        if happenings.offer(happening) == .full {
            log.warning("the agent's event queue holds 64 events, the most it keeps; dropped \(happening) (the queued ones read the same state again)")
        }
    }

    /// Why `run` returned.
    public enum Ending: Sendable, Equatable {
        /// SIGTERM or SIGINT.
        case stopped(signal: Int32)
        /// Every account's password or certificate was refused before any account logged in during this run: the
        /// config is wrong, and systemd should show a failure. Once an account has logged in, the agent never
        /// ends by itself.
        case everyAccountFailed
    }
    /// Downloads attachments after their message is committed (nil when the archive could not be read).
    public let files: FileDownloadWorker?
    /// `[mirror]`: the live Maildir, woken by each commit of the writer (nil without `maildir`).
    public let mirror: MailMirror?

    /// Opens the archive (creating it 0600 in a 0700 folder) and prepares one session per enabled account.
    /// Passwords are resolved later, by each session, off the start-up path.
    public init(config: RoostConfig, settings: AgentSettings, log: Logger) throws {
        var settings = settings
        if settings.archivePath.isEmpty { settings.archivePath = config.archivePath }
        current = Mutex(config)
        self.settings = settings
        self.log = log
        let happenings = self.happenings
        writer = try ArchiveWriter(path: config.archivePath, durability: .full, log: log) { [log] health in
            Self.offer(.archiveHealth(health), to: happenings, log: log)
        }
        files = try? FileDownloadWorker(writer: writer, settings: config.files, accounts: config.enabledAccounts, log: log)
        if let files { notifications.attach(files) }
        if let mirrorSettings = config.mirror.settings(accounts: config.enabledAccounts.count) {
            let writer = self.writer
            mirror = try MailMirror(settings: mirrorSettings, reader: try ArchiveReader(path: config.archivePath), writer: writer,
                                    log: { [log] warning, text in warning ? log.warning(text) : log.info(text) },
                                    seen: { [log] account, conversation, row in
                                        // As `roost read` records it, up to the message of the mail.
                                        log.debug("mirror: a mail of \(LogText.quote(conversation)) marked seen; read up to it")
                                        Task {
                                            _ = await writer.commit([.conversationRead(account: account, conversation: conversation,
                                                                                         timestamp: Timestamp.now(), upTo: row)])
                                        }
                                    })
        } else {
            mirror = nil
        }
        var sessions: [AccountSession] = []
        for account in config.enabledAccounts {
            if let session = makeSession(account) { sessions.append(session) }
        }
        sessionList.withLock { $0 = sessions }
        // The notifier answers friend requests through the agent itself, so it is made last.
        let notify = config.notifySettings()
        if !notify.1.isEmpty {
            let path = config.sourcePath ?? "config"
            throw ConfigError.invalid(path: path, problems: notify.1.map {
                config.locations.problem(group: $0.group, key: $0.key, message: $0.message)
            })
        }
        notifications.watches.configure(notify.0.watches, archivePath: config.archivePath)
        notifications.attach(makeNotifier(notify.0))
    }

    /// A session for one account, resuming its stream-management session from the archive; nil (logged)
    /// when the account cannot be started.
    private func makeSession(_ account: AccountConfig) -> AccountSession? {
        do {
            let sync = try? writer.syncState(account: account.jid)
            // A process that died keeps its SM session on the server for the hibernation time: resume it with
            // the `h` committed together with the data, so nothing is lost and nothing arrives twice.
            let resumption = sync.flatMap { s -> StreamResumptionState? in
                guard let id = s.streamManagementId, let h = s.streamManagementH else { return nil }
                return StreamResumptionState(id: id, inboundHandled: h)
            }
            let reader = try? ArchiveReader(path: settings.archivePath)
            let contacts = (try? reader?.contacts(account: account.jid, includeRemoved: true)) ?? []
            let pending = ((try? reader?.pendingSubscriptionRequests(account: account.jid)) ?? []).map(\.jid)
            let happenings = self.happenings
            let session = try AccountSession(account: account, settings: settings, writer: writer, downloads: files,
                                             log: log, resumption: resumption, sync: sync, notifications: notifications,
                                             contacts: contacts, pendingRequests: pending, history: history) { [log] in
                Self.offer(.accountStateChanged, to: happenings, log: log)
            }
            // XEP-0153: announce the account's own photo hash from the first presence on.
            if let own = try? reader?.contact(account: account.jid, jid: account.jid), own.vCardFetchedAt != nil {
                session.client.setPresenceExtras([VCardAvatarUpdate.element(photoHash: own.photoHash)])
            }
            return session
        } catch {
            log.error("\(account.jid): \(LogText.quote(error)) — this account is skipped")
            return nil
        }
    }

    private func makeNotifier(_ notify: NotifyConfig) -> Notifier {
        let dataDirectory = (settings.archivePath as NSString).deletingLastPathComponent
        let hub = notifications
        let actions = AgentNotificationActions(handle: self, dataDirectory: dataDirectory, log: log,
                                               dispatcher: ControlDispatcher(handle: self, config: config), post: { hub.post($0) })
        let logger = log
        return Notifier(config: notify, actions: actions, statePath: dataDirectory + "/notify-state.json",
                        log: { level, message in logger.log(level, message) })
    }

    public var accountCount: Int { sessions.count }

    /// SIGHUPs handled so far (`roost status`).
    public var sighupsHandled: Int? { shown.withLock { $0.sighups } }

    /// The web view's address once it serves (`[serve]` in `roost run`), without its token: `roost status` shows it.
    public var webView: String? {
        get { shown.withLock { $0.webView } }
        set { shown.withLock { $0.webView = newValue } }
    }

    /// Runs until a signal from `shutdown` (SIGTERM, SIGINT), or until every account failed to log in before any
    /// has (a wrong config); SIGHUP makes accounts that wait try again now. Then stops cleanly: commit, unavailable presence,
    /// close streams and archive.
    ///
    /// With `reload`, SIGHUP also reads the config again and applies it (see `reload(to:)`); a config that
    /// cannot be read is logged and the running one kept.
    public func run<S: AsyncSequence & Sendable>(signals: S, reload: (@Sendable () throws -> RoostConfig)? = nil) async -> Ending
    where S.Element == Int32 {
        log.info("archive: \(config.archivePath)")
        files?.start()
        let happenings = self.happenings
        let forwarder = Task {
            do {
                // A signal waits for a place: a SIGTERM is never dropped.
                for try await signal in signals { _ = await happenings.put(.signal(signal)) }
            } catch {}
        }
        for session in sessions { await session.start() }
        let monitor = NetworkMonitor { [weak self] in
            for session in self?.sessions ?? [] { Task { await session.networkChanged() } }
        }
        log.debug(monitor == nil ? "no netlink: reconnects rely on backoff alone" : "watching the network for changes (netlink)")
        let activity = reportActivity()
        defer { activity.cancel() }
        let retention = Retention.start(config.retention, archive: config.archivePath, writer: writer, log: log)
        defer { retention?.cancel() }
        let backups = ScheduledBackups.start(config.backup, archive: config.archivePath, log: log)
        defer { backups?.cancel() }
        var stallWatch: Task<Void, Never>?
        var ending = Ending.stopped(signal: 0)
        var announcedRunning = false
        loop: for await happening in happenings {
            switch happening {
            case .signal(SIGHUP):
                if let reload {
                    do {
                        log.info("received SIGHUP; reloading \(config.sourcePath ?? "the config")")
                        await self.reload(to: try reload())
                    } catch {
                        log.error("reloading the config failed; keeping the running one: \(error)")
                    }
                }
                // Each account that waits says it tries again; with none waiting there is nothing to say.
                var retrying = 0
                for session in sessions {
                    if await session.retryNow() { retrying += 1 }
                }
                if retrying == 0 { log.debug("SIGHUP: no account waits to reconnect") }
                shown.withLock { $0.sighups += 1 }
            case .signal(let signal):
                log.info("received signal \(signal); shutting down")
                ending = .stopped(signal: signal)
                break loop
            case .accountStateChanged:
                if history.anyAccountLoggedIn {
                    // From now on nothing stops the agent: accounts that failed before say what they do next.
                    if !announcedRunning {
                        announcedRunning = true
                        for session in sessions { await session.agentKeepsRunning() }
                    }
                } else if await everyAccountFailed() {
                    log.error("every account failed to log in (see above), and none has since roost started: stopping with "
                              + "exit status 78, which systemd does not restart — fix the config, then start roost again")
                    ending = .everyAccountFailed
                    break loop
                }
            case .archiveHealth(let health):
                stallWatch?.cancel()
                stallWatch = nil
                if case .failing = health {
                    let limit = settings.archiveStallLimit
                    stallWatch = Task { [weak self] in
                        try? await Task.sleep(for: limit)
                        guard !Task.isCancelled else { return }
                        for session in self?.sessions ?? [] { await session.archiveStalled(for: limit) }
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

    /// At the default level `roost run` says what it archives, at most once a minute and only when something
    /// was: "archived 12 messages (9 in, 3 out) in 4 conversations in the last minute".
    private func reportActivity() -> Task<Void, Never> {
        let writer = self.writer
        let log = self.log
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(60))
                let activity = writer.takeActivity()
                let total = activity.incoming + activity.outgoing
                guard total > 0, !Task.isCancelled else { continue }
                let conversations = activity.conversations.count
                log.info("archived \(total) \(total == 1 ? "message" : "messages") (\(activity.incoming) in, \(activity.outgoing) out) in "
                         + "\(conversations) \(conversations == 1 ? "conversation" : "conversations") in the last minute")
            }
        }
    }

    /// Applies a config read again (SIGHUP): accounts removed or disabled are stopped cleanly (what they
    /// received is committed and acknowledged first, see `AccountSession.stop`), accounts whose settings
    /// changed are stopped and started again with the new ones, new accounts start, and the notification
    /// rules and sinks are replaced. What needs a restart (the archive's path, the [general] limits) is logged
    /// and keeps its old value. Nothing received is lost: a stopped session's stream ends only after its
    /// messages are committed, and the server archive brings anything sent meanwhile at the next login.
    public func reload(to newConfig: RoostConfig) async {
        let old = config
        if newConfig.archivePath != old.archivePath {
            log.warning("the archive path changed to \(newConfig.archivePath); that takes a restart (still using \(old.archivePath))")
        }
        if AgentSettings(config: newConfig).differs(from: settings) {
            log.warning("[general] limits changed; they apply after a restart")
        }
        let notify = newConfig.notifySettings()
        guard notify.1.isEmpty else {
            log.error("the new config has notification problems; keeping the running config: "
                      + notify.1.map { "[\($0.group)] \($0.key.map { "\($0): " } ?? "")\($0.message)" }.joined(separator: "; "))
            return
        }
        var applied = newConfig
        applied.archivePath = old.archivePath
        let wanted = Dictionary(newConfig.enabledAccounts.map { ($0.jid.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var kept: [AccountSession] = []
        var stopping: [AccountSession] = []
        for session in sessions {
            let jid = session.account.jid.lowercased()
            if let account = wanted[jid], account == session.account {
                kept.append(session)
            } else {
                log.info("\(session.account.jid): \(wanted[jid] == nil ? "removed or disabled in the config; stopping" : "settings changed; restarting")")
                stopping.append(session)
            }
        }
        await withTaskGroup(of: Void.self) { group in
            for session in stopping { group.addTask { await session.stop() } }
        }
        var started: [AccountSession] = []
        for account in newConfig.enabledAccounts where !kept.contains(where: { $0.account.jid.lowercased() == account.jid.lowercased() }) {
            guard let session = makeSession(account) else { continue }
            if !stopping.contains(where: { $0.account.jid.lowercased() == account.jid.lowercased() }) {
                log.info("\(account.jid): added in the config; starting")
            }
            started.append(session)
        }
        sessionList.withLock { $0 = kept + started }
        current.withLock { $0 = applied }
        files?.update(accounts: newConfig.enabledAccounts)
        files?.update(settings: newConfig.files)
        for session in started { await session.start() }
        if newConfig.notify != old.notify || newConfig.sinks != old.sinks || newConfig.watches != old.watches {
            let previous = notifications.current
            notifications.watches.configure(notify.0.watches)
            notifications.attach(makeNotifier(notify.0))
            await previous?.shutdown()
            log.info("notification rules and sinks reloaded")
        }
        log.info("config reloaded: \(sessions.count) \(sessions.count == 1 ? "account" : "accounts")")
        Self.offer(.accountStateChanged, to: happenings, log: log)
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
        await writer.drainAndStop(checkpoint: true)
        await files?.stop()
        mirror?.stop()
        await notifications.current?.shutdown()
        log.info("stopped")
    }

    public func states() async -> [(String, AccountState)] {
        var out: [(String, AccountState)] = []
        for session in sessions { out.append((session.jid.description, await session.currentState())) }
        return out
    }
}
