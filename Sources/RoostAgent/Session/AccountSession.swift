import Foundation
import RoostArchive
import RoostXMPP

/// One account: keeps it connected, routes what arrives into the archive, and acknowledges each stanza
/// to the server only after its archive transaction committed (ack after commit).
actor AccountSession {
    let account: AccountConfig
    let jid: JID
    private let client: XMPPClient
    private let pipeline: IngestPipeline
    private let log: Logger
    private var context: RoutingContext
    private var backoff: Backoff
    private(set) var state: AccountState = .idle
    private var stopping = false
    private var eventTask: Task<Void, Never>?
    private var reconnectTask: Task<Void, Never>?
    private var connectedOnce = false
    private let settings: AgentSettings
    private var pollTask: Task<Void, Never>?
    private var catchUpRunning = false
    /// The server-archive mark: catch-up resumes after this id (see `ArchiveCatchUp`).
    private var archiveMark: String?
    private var archiveMarkTimestamp: Int64?
    public private(set) var lastCatchUp: Date?
    /// Counts for tests and status.
    private(set) var rejectedStanzas = 0

    init(account: AccountConfig, password: String, settings: AgentSettings, pipeline: IngestPipeline, log: Logger,
         resumption: StreamResumptionState?, sync: SyncState?) throws(ConfigError) {
        self.account = account
        self.settings = settings
        archiveMark = sync?.lastStanzaId
        archiveMarkTimestamp = sync?.lastTimestamp
        var configuration = try ClientConfiguration(account: account, password: password, maxStanzaBytes: settings.maxStanzaBytes)
        configuration.keepaliveInterval = settings.keepaliveInterval
        jid = configuration.jid
        let logger = log
        client = XMPPClient(configuration: configuration, resumption: resumption) { level, message in
            switch level {
            case .error: logger.error(message)
            case .warning: logger.warning(message)
            case .info: logger.info(message)
            case .debug: logger.debug(message)
            }
        }
        self.pipeline = pipeline
        self.log = log
        backoff = Backoff(cap: settings.reconnectCap)
        context = RoutingContext(account: configuration.jid, trustsOwnStanzaIDs: false, displayNames: [:])
    }

    /// Starts connecting in the background; returns at once.
    func start() {
        eventTask = Task { await self.consumeEvents() }
        scheduleConnect(after: .zero)
    }

    private func scheduleConnect(after delay: Duration) {
        reconnectTask?.cancel()
        reconnectTask = Task {
            if delay > .zero { try? await Task.sleep(for: delay) }
            guard !Task.isCancelled else { return }
            await self.connectOnce()
        }
    }

    private func connectOnce() async {
        guard !stopping else { return }
        state = .connecting(attempt: backoff.attempt + 1)
        do {
            let info = try await client.connect()
            backoff.reset()
            state = .online(resource: info.boundJID.resource ?? "", streamManagement: info.streamManagement)
            if !info.resumed { try await afterLogin() }
            connectedOnce = true
        } catch let error as ClientError {
            handleConnectFailure(error)
        } catch {
            handleConnectFailure(.disconnected(String(describing: error)))
        }
    }

    private func handleConnectFailure(_ error: ClientError) {
        guard !stopping else { return }
        if error.isPermanent {
            state = .failed(error.description)
            log.error("\(jid): \(error) — not retrying; fix the account and restart")
            return
        }
        let delay = backoff.nextDelay()
        let seconds = Int((delay / .seconds(1)).rounded(.up))
        state = .waitingToReconnect(seconds: seconds, lastError: error.description)
        log.warning("\(jid): \(error); retrying in \(seconds)s")
        scheduleConnect(after: delay)
    }

    /// Fresh session (not resumed): learn what the server does, turn on carbons, load the roster.
    private func afterLogin() async throws {
        if let info = try? await client.request(Disco.infoRequest(to: jid)), let disco = Disco.info(in: info) {
            context.trustsOwnStanzaIDs = disco.supports(Namespace.mam) || disco.supports(Namespace.stanzaID)
        }
        do {
            _ = try await client.request(Carbons.enableRequest())
        } catch {
            log.warning("\(jid): the server refused message carbons (\(error)); messages sent from other clients will only be archived through MAM")
        }
        let roster = try await client.request(Roster.getRequest())
        let now = Self.nowMilliseconds()
        let items = Roster.items(in: roster)
        for item in items where item.name != nil { context.displayNames[item.jid] = item.name }
        pipeline.submit(items.map { StanzaRouter.rosterEvent($0, account: jid, now: now) })
        log.info("\(jid): online; roster has \(items.count) contacts; stanza-ids \(context.trustsOwnStanzaIDs ? "trusted" : "not trusted")")
        if context.trustsOwnStanzaIDs {
            await catchUp(progress: true)
            startPolling()
        }
    }

    // MARK: - Server archive

    /// Reads what the server archived since the mark; a failure is logged and retried at the next poll.
    private func catchUp(progress: Bool) async {
        guard !catchUpRunning, !stopping else { return }
        catchUpRunning = true
        defer { catchUpRunning = false }
        let run = ArchiveCatchUp(client: client, account: jid, pipeline: pipeline, log: log)
        do {
            let summary = try await run.run(from: archiveMark, lastTimestamp: archiveMarkTimestamp, context: context,
                                            progress: progress && archiveMark == nil)
            archiveMark = summary.lastID ?? archiveMark
            lastCatchUp = Date()
            if summary.inserted > 0 || progress {
                log.info("\(jid): server archive read: \(summary.received) messages in \(summary.pages) pages, \(summary.inserted) new")
            }
        } catch {
            log.warning("\(jid): reading the server archive failed: \(error)")
        }
    }

    private func startPolling() {
        guard pollTask == nil, let interval = settings.archivePollInterval else { return }
        pollTask = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled else { return }
                await self.pollArchive()
            }
        }
    }

    private func pollArchive() async {
        guard client.isConnected else { return }
        await catchUp(progress: false)
    }

    // MARK: - Events

    private func consumeEvents() async {
        for await event in client.events {
            switch event {
            case .stanza(let stanza):
                route(stanza)
            case .resumptionState(let resumption):
                pipeline.submit([.syncState(SyncStateRecord(account: jid.description, streamManagementId: resumption.id,
                                                            streamManagementH: resumption.inboundHandled))])
            case .disconnected(let error):
                guard !stopping else { continue }
                let reason = error ?? .disconnected("the server closed the stream")
                handleConnectFailure(reason)
            }
        }
    }

    private func route(_ stanza: InboundStanza) {
        let outcome = StanzaRouter.route(stanza.element, context: context, now: Self.nowMilliseconds())
        if let why = outcome.rejected {
            rejectedStanzas += 1
            log.debug("\(jid): ignored: \(why)")
        }
        for item in outcome.rosterChanges {
            if item.subscription == .remove { context.displayNames[item.jid] = nil } else if let name = item.name { context.displayNames[item.jid] = name }
        }
        for reply in outcome.replies {
            switch reply.name {
            case "iq": try? client.send(IQ(reply))
            case "message": try? client.send(Message(reply))
            default: try? client.send(Presence(reply))
            }
        }
        let client = self.client
        let sequence = stanza.sequence
        let log = self.log
        let jid = self.jid
        pipeline.submit(outcome.events) { result in
            switch result {
            case .success: client.acknowledge(through: sequence)
            case .failure(let error):
                // Not acknowledged: the server keeps it (SM) or MAM has it; nothing is lost, it comes back later.
                log.error("\(jid): could not archive a stanza: \(error)")
            }
        }
    }

    // MARK: - Stopping

    /// Commits what arrived, tells the server everything is handled, says goodbye.
    func stop() async {
        stopping = true
        reconnectTask?.cancel()
        pollTask?.cancel()
        await pipeline.flush()
        await client.disconnect()
        eventTask?.cancel()
        pipeline.submit([.syncState(SyncStateRecord(account: jid.description, clearStreamManagement: true))])
        state = .stopped
    }

    func currentState() -> AccountState { state }

    func onlineClient() -> XMPPClient? {
        if case .online = state, client.isConnected { return client }
        return nil
    }

    func status() -> AccountStatus {
        var online = false
        if case .online = state { online = true }
        return AccountStatus(account: jid.description, state: state,
                             server: account.host.map { "\($0):\(account.port ?? 5222)" } ?? jid.domain,
                             boundResource: online ? client.boundJID?.resource : nil,
                             streamManagement: online && client.resumptionState != nil, lastCatchUp: lastCatchUp,
                             unacknowledgedOutbound: client.unacknowledgedCount, rejectedStanzas: rejectedStanzas)
    }

    static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
