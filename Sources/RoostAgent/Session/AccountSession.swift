import Foundation
import RoostArchive
import RoostXMPP
import RoostNotify

/// One account: keeps it connected, routes what arrives into the archive, and acknowledges each stanza
/// to the server only after its archive transaction committed (ack after commit).
actor AccountSession {
    let account: AccountConfig
    let jid: JID
    nonisolated let client: XMPPClient
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
    private let catchUpInserted = InsertCounter()
    private let notifications: NotificationHub
    private var translator: NotificationTranslator
    /// New incoming messages that arrived through catch-up (or late): one summary at the end, never one each.
    private let backlog = MessageBacklog()
    /// The photo hash of each contact's cached vCard ("" = none): a different hash in presence refetches it.
    private var avatarHashes: [String: String] = [:]
    private let dataDirectory: String
    /// Stanzas wait until the server's features are known: a stanza-id archived as untrusted could not
    /// deduplicate against its server-archive copy later.
    private var trustKnown = false

    init(account: AccountConfig, password: String, settings: AgentSettings, pipeline: IngestPipeline, log: Logger,
         resumption: StreamResumptionState?, sync: SyncState?, notifications: NotificationHub,
         contacts: [ContactRow], pendingRequests: [String]) throws(ConfigError) {
        self.account = account
        self.notifications = notifications
        var names: [String: String] = [:]
        var avatars: [String: String] = [:]
        for contact in contacts {
            if let name = contact.nickname ?? contact.name ?? contact.fullName { names[contact.jid.lowercased()] = name }
            if let path = contact.photoPath { avatars[contact.jid.lowercased()] = path }
            if contact.vCardFetchedAt != nil { avatarHashes[contact.jid.lowercased()] = contact.photoHash ?? "" }
        }
        dataDirectory = (settings.archivePath as NSString).deletingLastPathComponent
        translator = NotificationTranslator(account: account.jid, names: names, avatars: avatars)
        for request in pendingRequests { _ = translator.knownRequests.insert(request) }
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
        let info: SessionInfo
        do {
            info = try await client.connect()
        } catch {
            handleConnectFailure(error)
            return
        }
        backoff.reset()
        context.ownResource = info.boundJID.resource
        state = .online(resource: info.boundJID.resource ?? "", streamManagement: info.streamManagement)
        if !info.resumed || !connectedOnce {
            // A failed setup request is not a failed connection: a drop shows up as `.disconnected` in the
            // event stream, which reconnects; anything else is logged and the session goes on.
            await afterLogin(resumed: info.resumed)
        } else {
            // Resumed in-process: nothing the server queued is lost, but messages that went only to the
            // server archive meanwhile (Roost is at priority -1) are fetched now rather than at the next poll.
            await catchUp(progress: false)
        }
        connectedOnce = true
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

    /// First login of this process, or a fresh session: learn what the server does, turn on carbons (a
    /// resumed session still has them), load the roster, catch up from the server archive.
    private func afterLogin(resumed: Bool) async {
        if let info = try? await client.request(Disco.infoRequest(to: jid)), let disco = Disco.info(in: info) {
            context.trustsOwnStanzaIDs = disco.supports(Namespace.mam) || disco.supports(Namespace.stanzaID)
        }
        trustKnown = true
        if !resumed {
            do {
                _ = try await client.request(Carbons.enableRequest())
            } catch {
                log.warning("\(jid): the server refused message carbons (\(error)); messages sent from other clients will only be archived through MAM")
            }
        }
        do {
            let roster = try await client.request(Roster.getRequest())
            let now = Self.nowMilliseconds()
            let items = Roster.items(in: roster)
            for item in items where item.name != nil { context.displayNames[item.jid] = item.name }
            pipeline.submit(items.map { StanzaRouter.rosterEvent($0, account: jid, now: now) })
            log.info("\(jid): online; roster has \(items.count) contacts; stanza-ids \(context.trustsOwnStanzaIDs ? "trusted" : "not trusted")")
        } catch {
            // Still archive and catch up: the roster comes again with the next session (and its pushes meanwhile).
            log.warning("\(jid): online, but fetching the roster failed: \(error)")
        }
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
        let run = ArchiveCatchUp(client: client, account: jid, log: log)
        let insertedBefore = catchUpInserted.value
        do {
            let summary = try await run.run(from: archiveMark, lastTimestamp: archiveMarkTimestamp, progress: progress && archiveMark == nil)
            archiveMark = summary.lastID ?? archiveMark
            lastCatchUp = Date()
            await pipeline.flush()
            let inserted = catchUpInserted.value - insertedBefore
            let caughtUp = backlog.take()
            if !caughtUp.isEmpty { notifications.post(.catchUpFinished(account: jid.description, messages: caughtUp)) }
            if inserted > 0 || progress {
                log.info("\(jid): server archive read (\(summary.pages) pages): \(inserted) new messages")
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
            while !trustKnown && !stopping {
                if case .disconnected = event { break }
                try? await Task.sleep(for: .milliseconds(5))
            }
            switch event {
            case .stanza(let stanza):
                route(stanza)
            case .archivePage(let page):
                route(page)
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
        let acknowledgement = stanza.acknowledgement
        let log = self.log
        let jid = self.jid
        for item in outcome.rosterChanges where item.name != nil && translator.names[item.jid.description.lowercased()] == nil {
            translator.names[item.jid.description.lowercased()] = item.name
        }
        for case .avatarHash(let contact, let hash) in outcome.notes where avatarHashes[contact.lowercased()] != (hash ?? "") {
            avatarHashes[contact.lowercased()] = hash ?? ""
            Task { await self.refreshVCard(of: contact) }
        }
        for case .pepAvatar(let contact, let id, let mimeType) in outcome.notes where avatarHashes[contact.lowercased()] != (id ?? "") {
            avatarHashes[contact.lowercased()] = id ?? ""
            if let id { Task { await self.fetchPEPAvatar(of: contact, id: id, mimeType: mimeType) } }
        }
        let notes = outcome.notes
        let events = outcome.events
        let translator = self.translator
        let notifications = self.notifications
        let backlog = self.backlog
        pipeline.submit(outcome.events, progress: progress(acknowledgement)) { result in
            switch result {
            case .success(let outcomes):
                client.acknowledge(acknowledgement)
                guard !notes.isEmpty else { return }
                let (post, late) = translator.events(for: notes, events: events, outcomes: outcomes)
                for event in post { notifications.post(event) }
                backlog.add(late)
            case .failure(let error):
                // Not acknowledged: the server keeps it (SM) or MAM has it; nothing is lost, it comes back later.
                log.error("\(jid): could not archive a stanza: \(error)")
            }
        }
    }

    private func route(_ page: ArchivePage) {
        let (events, _, rejected) = ArchivePageRouter.events(for: page, context: context, now: Self.nowMilliseconds())
        if rejected > 0 {
            rejectedStanzas += rejected
            log.warning("\(jid): ignored \(rejected) archive results not from the account's own archive or query")
        }
        let client = self.client
        let acknowledgement = page.acknowledgement
        let counter = catchUpInserted
        let translator = self.translator
        let backlog = self.backlog
        pipeline.submit(events, progress: progress(acknowledgement)) { result in
            guard case .success(let outcomes) = result else { return }
            counter.add(outcomes.reduce(0) { if case .inserted = $1 { $0 + 1 } else { $0 } })
            client.acknowledge(acknowledgement)
            var late: [IncomingMessage] = []
            for (event, outcome) in zip(events, outcomes) {
                if case .inserted = outcome, case .message(let record) = event, let message = translator.incoming(record) { late.append(message) }
            }
            backlog.add(late)
        }
    }

    private func progress(_ acknowledgement: Acknowledgement) -> IngestPipeline.StreamProgress? {
        guard let id = acknowledgement.streamID, let h = acknowledgement.handledCount else { return nil }
        return IngestPipeline.StreamProgress(account: jid.description, streamID: id, handledCount: h)
    }

    /// Fetches a contact's vCard (once, and again when its photo hash changes): the avatar for notifications
    /// and the nickname for display, cached under the data dir and in the archive.
    private func refreshVCard(of contact: String) async {
        guard !stopping, client.isConnected else { return }
        let context = ActionContext(client: client, account: jid, archive: ActionArchive(pipeline: pipeline),
                                    dataDirectory: dataDirectory, priority: account.priority)
        do {
            let info = try await VCardFetchAction(jid: contact).perform(in: context)
            let key = contact.lowercased()
            if let path = info.photoPath { translator.avatars[key] = path }
            if let nickname = info.nickname { translator.names[key] = nickname }
            log.debug("\(jid): cached the vCard of \(contact)")
        } catch {
            log.debug("\(jid): could not fetch the vCard of \(contact): \(error)")
        }
    }

    /// XEP-0084: fetches the published image by its id and caches it like a vCard photo.
    private func fetchPEPAvatar(of contact: String, id: String, mimeType: String?) async {
        guard !stopping, client.isConnected, let contactJID = JID(parsing: contact) else { return }
        do {
            let answer = try await client.request(UserAvatar.dataRequest(from: contactJID, id: id))
            guard let data = UserAvatar.data(in: answer) else { return }
            let photo = VCard.Photo(mimeType: mimeType ?? "image/png", data: data)
            let path = try AvatarStore(dataDirectory: dataDirectory).store(photo, hash: AvatarStore.hash(data))
            // Kept in memory only (the server sends the last published item again at each login); the archive's
            // contact row keeps the vCard fields, which this must not overwrite.
            translator.avatars[contact.lowercased()] = path
            log.debug("\(jid): cached the PEP avatar of \(contact)")
        } catch {
            log.debug("\(jid): could not fetch the PEP avatar of \(contact): \(error)")
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

    /// The network changed (an address or route appeared): an account waiting out its backoff retries now.
    func networkChanged() {
        guard !stopping, case .waitingToReconnect = state else { return }
        log.info("\(jid): the network changed; reconnecting now")
        backoff.reset()
        scheduleConnect(after: .zero)
    }

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
