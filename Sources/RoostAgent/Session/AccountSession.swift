import RoostCore
import Foundation
import RoostArchive
import RoostXMPP
import RoostNotify

/// One account: keeps it connected, routes what arrives into the archive, and acknowledges each stanza
/// to the server only after its archive transaction committed (ack after commit).
///
/// The path of a stanza reads in one direction: the client's reader puts it into `client.events` (bounded)
/// → `consumeEvents` takes it in stream order → `StanzaRouter` decides what it means → the archive writer
/// (`ArchiveWriter`, bounded; `submit` waits while it is full) commits it and posts "committed" into
/// `commits` → the session, on its actor, calls `client.acknowledge` (`settle`), which lets the connection's
/// writer send `<a h=…/>`. When the archive cannot be written, `submit` stops returning, this session stops
/// taking events, the reader stops reading the socket, and the server keeps everything unacknowledged.
actor AccountSession {
    let account: AccountConfig
    let jid: JID
    nonisolated let client: XMPPClient
    let writer: ArchiveWriter
    /// The archive writer's messages about this session's submissions (`settle` acts on each).
    let commits = CommitMailbox<AfterCommit>()
    /// Where new attachment rows go once their message is committed (nil: no downloads).
    let downloads: FileDownloadWorker?
    let log: Logger
    let settings: AgentSettings
    let dataDirectory: String
    var context: RoutingContext
    /// Roost's OMEMO device for this account (nil with `omemo = off`, or when its key store cannot be opened).
    let omemo: OMEMOService?
    /// The account's group chats (bookmarks, joining, the rooms' archives).
    let rooms: RoomManager
    /// Heard when the state changes (the agent watches for "every account failed").
    let stateChanged: @Sendable () -> Void
    /// Whether any account logged in during this run (shared with the agent).
    let history: RunHistory

    // Connection lifecycle
    var state: AccountState = .idle
    var backoff: Backoff
    var stopping = false
    var passwordKnown = false
    /// Whether this account logged in during this run: from then on, what only the user can fix makes it wait
    /// (`.waitingForUser`), with `userBackoff`, instead of failing.
    var loggedIn = false
    var userBackoff = Backoff(base: .seconds(60), cap: AccountSession.userFixRetry)
    /// Whether the user was told (the log line saying what happens next, one notification) about the current wait
    /// for them; told again only after the account was online in between.
    var userTold = false
    /// Times in a row another client logged in with the same resource and the server replaced this one with it
    /// (stream error `conflict`); waited out with `replacementBackoff`, and after `maxReplacements` no more
    /// reconnecting until SIGHUP: two agents on one account would otherwise take turns forever.
    var replacements = 0
    var replacementBackoff: Backoff
    var waitingOutReplacement = false
    var onlineSince: ContinuousClock.Instant?
    /// SIGHUP came while an attempt was under way (a password_command running, a login in progress): when it
    /// fails, the next one starts at once instead of after its backoff.
    var retryRequested = false
    var eventTask: Task<Void, Never>?
    /// Reads `commits` (`consumeCommits`).
    var commitTask: Task<Void, Never>?
    var connectTask: Task<Void, Never>?
    var setupTask: Task<Void, Never>?
    var pollTask: Task<Void, Never>?
    /// Carbons are per server session; the roster is loaded once per process (pushes keep it current).
    var carbonsEnabled = false
    var rosterLoaded = false
    /// Contacts the user added that were sent `subscribed` this process (see `answerApprovedRequests`).
    var approvalsSent: Set<JID> = []
    /// Contacts the user added that, as the archive last saw them, did not yet see the user's presence (the user's
    /// request pending, or subscription `to`); read by the first roster load.
    var addedAwaitingApproval: Set<JID>
    var serverHasArchive = false
    /// Whether the account's disco#info was answered by this process. A process that resumes an earlier one's
    /// session may not have it: the server sends what it queued for the session first, and on a loaded server
    /// the answer can miss login's step timeout. Then `setUp` asks again, instead of taking "unknown" for "no
    /// archive" (which skipped the catch-up and warned that the server keeps none).
    var accountFeaturesKnown = false
    /// When the current stream-management session (or SM-less session) began: outgoing messages still
    /// unconfirmed from before it are settled against the server archive.
    var sessionStartedAt: Int64 = 0
    /// Messages this process already sent again once: if that session ends without them too, they failed
    /// (a message the server kicks Roost for must not be sent again and again).
    var resentOnce: Set<String> = []
    /// Origin-ids sent from the outbox in the current session: stream management settles them, never
    /// `settleUnconfirmedSends` of the same session (they are older than the session, but were sent in it).
    var sentFromOutbox: Set<String> = []
    /// `sendOutbox` runs (one at a time: two would send the same entries).
    var sendingOutbox = false

    // Server archive
    var catchUpRunning = false
    /// The server-archive mark: catch-up resumes after this id (see `ArchiveCatchUp`). Moves only when the
    /// page that carries it has committed.
    var archiveMark: String?
    var archiveMarkTimestamp: Int64?
    var lastCatchUp: Date?
    let pageCommits = PageCommits()

    // Counts for status and tests
    var rejectedStanzas = 0
    /// Contacts in the roster as last loaded (`roost status`); nil until it has loaded in this run.
    var rosterContacts: Int?
    /// Connections established in this run, and how many resumed the previous session (`roost status`).
    var logins = 0
    var sessionsResumed = 0
    /// The account's other available resources, for `roost status`: with none and a negative priority the
    /// server treats the account as offline (messages to the bare JID go to offline storage).
    var otherClients: Set<String> = []

    // Notifications
    let notifications: NotificationHub
    var translator: NotificationTranslator
    /// New incoming messages that arrived through catch-up (or late): one summary at the end, never one each.
    let backlog = MessageBacklog()
    /// Live notifications held until the watches have been evaluated on their messages: what the mailbox held when
    /// the session read it, one query for all (`postEvaluatingWatches`); posted in order.
    var awaitingWatches: [NotificationEvent] = []
    /// Their messages as the watches read them, by archive id (`WatchEvaluator.messages`).
    var awaitingMessages: [Int64: WatchMessage] = [:]
    /// The photo hash of each contact's cached vCard ("" = none): a different hash in presence refetches it.
    var avatarHashes: [String: String] = [:]

    /// How long an account that needs the user (wrong password, untrusted certificate) waits before trying again:
    /// at most, once it had logged in during this run (starting at a minute); always, before.
    static let userFixRetry: Duration = .seconds(3600)
    /// Replaced this many times in a row, the session stops reconnecting until SIGHUP.
    static let maxReplacements = 3
    /// Online this long, the session is in no fight: the count of replacements starts again.
    static let replacementsForgottenAfter: Duration = .seconds(600)

    init(account: AccountConfig, settings: AgentSettings, writer: ArchiveWriter, downloads: FileDownloadWorker? = nil, log: Logger,
         resumption: StreamResumptionState?, sync: SyncState?, notifications: NotificationHub,
         contacts: [ContactRow], pendingRequests: [String], history: RunHistory = RunHistory(),
         openChannel: ChannelFactory? = nil, stateChanged: @escaping @Sendable () -> Void) throws(ConfigError) {
        self.account = account
        self.history = history
        self.notifications = notifications
        self.stateChanged = stateChanged
        var names: [String: String] = [:]
        var avatars: [String: String] = [:]
        addedAwaitingApproval = Set(contacts.filter {
            $0.inRoster && ($0.subscription == "to" || ($0.ask != nil && $0.subscription != "from" && $0.subscription != "both"))
        }.compactMap { JID(parsing: $0.jid)?.bare })
        for contact in contacts {
            // Notifications name a contact as every command does: roster name, vCard nickname, full name.
            if let name = contact.displayName { names[contact.jid.lowercased()] = name }
            if let path = contact.photoPath { avatars[contact.jid.lowercased()] = path }
            if contact.vCardFetchedAt != nil { avatarHashes[contact.jid.lowercased()] = contact.photoHash ?? "" }
        }
        dataDirectory = (settings.archivePath as NSString).deletingLastPathComponent
        translator = NotificationTranslator(account: account.jid, names: names, avatars: avatars)
        for request in pendingRequests { _ = translator.knownRequests.insert(request) }
        self.settings = settings
        archiveMark = sync?.lastStanzaId
        archiveMarkTimestamp = sync?.lastTimestamp
        // The password comes later (`password_command` runs off the start-up path, with a timeout).
        var configuration = try ClientConfiguration(account: account, password: "", maxStanzaBytes: settings.maxStanzaBytes)
        configuration.keepaliveInterval = settings.keepaliveInterval
        configuration.maxOutboundStanzaBytes = settings.maxSendBytes
        jid = configuration.jid
        let logger = log
        // `openChannel`: the connection each login negotiates on (a scripted one in tests; the network's by default).
        let clientLog: @Sendable (LogLevel, String) -> Void = { level, message in logger.log(level, message) }
        client = if let openChannel {
            XMPPClient(configuration: configuration, resumption: resumption, log: clientLog, openChannel: openChannel)
        } else {
            XMPPClient(configuration: configuration, resumption: resumption, log: clientLog)
        }
        self.writer = writer
        self.downloads = downloads
        self.log = log
        backoff = Backoff(cap: settings.reconnectCap)
        replacementBackoff = Backoff(base: .seconds(10), cap: settings.reconnectCap)
        context = RoutingContext(account: configuration.jid, trustsOwnStanzaIDs: false, displayNames: [:])
        context.keepRetracted = settings.keepRetracted
        if account.omemo {
            do {
                omemo = try OMEMOService(account: configuration.jid, dataDirectory: dataDirectory, archivePath: settings.archivePath, log: log)
            } catch {
                log.error("\(configuration.jid): OMEMO is off for this run: \(LogText.quote(error))")
                omemo = nil
            }
        } else {
            omemo = nil
        }
        context.decryptor = omemo?.decryptor
        rooms = RoomManager(account: account, jid: configuration.jid, client: client, writer: writer, log: log, commits: pageCommits,
                            notifications: notifications, pingInterval: settings.roomPingInterval, archivePath: settings.archivePath)
    }

    /// Starts connecting in the background; returns at once.
    func start() {
        commitTask = Task { await self.consumeCommits() }
        eventTask = Task { await self.consumeEvents() }
        scheduleConnect(after: .zero)
    }

    // MARK: - Events, in stream order

    func consumeEvents() async {
        for await event in client.events {
            switch event {
            case .connected(let info):
                await connected(info)
            case .stanza(let stanza):
                await route(stanza)
            case .archivePage(let page):
                await route(page)
            case .resumptionState(let resumption):
                await writer.submit([.syncState(SyncStateRecord(account: jid.description, streamManagementId: resumption.id,
                                                                  streamManagementH: resumption.inboundHandled))])
            case .acknowledged(let originIDs):
                await writer.submit([.delivery(account: jid.description, originIDs: originIDs, state: .sent)])
            case .unconfirmed(let originIDs):
                // Settled after the next catch-up: the server archive shows which ones the server has. Those
                // already sent again once have failed for good.
                let failed = originIDs.filter { resentOnce.contains($0) }
                if !failed.isEmpty {
                    log.warning("\(jid): \(failed.count) message(s) sent again were not acknowledged either; `roost log` marks them failed")
                    await writer.submit([.delivery(account: jid.description, originIDs: failed, state: .failed)])
                }
                log.info("\(jid): \(originIDs.count) sent message(s) were not acknowledged before the connection ended; checking the server archive")
            case .disconnected(let error):
                await disconnected(error)
            }
        }
    }

    func connected(_ info: SessionInfo) async {
        backoff.reset()
        userBackoff.reset()
        logins += 1
        if info.resumed { sessionsResumed += 1 }
        loggedIn = true
        userTold = false
        waitingOutReplacement = false
        retryRequested = false
        onlineSince = .now
        history.markLoggedIn()
        await rooms.sessionStarted(resumed: info.resumed)
        context.ownResource = info.boundJID.resource
        if let features = info.accountFeatures { learned(accountFeatures: features) }
        if !info.resumed {
            // The server delivers offline storage right after a new session's initial presence, and only to a
            // resource of non-negative priority (RFC 6121 §8.5.2.1.1).
            context.offlineDeliveryUntil = account.priority >= 0 ? Timestamp.now() + 60_000 : .min
            carbonsEnabled = false
            otherClients.removeAll()
        }
        // A fresh session, or the first of this process (resuming one of an earlier process): outgoing
        // messages still pending from before it are settled after the next catch-up.
        if !info.resumed || sessionStartedAt == 0 {
            sessionStartedAt = Timestamp.now()
            sentFromOutbox.removeAll()
        }
        setState(.online(resource: info.boundJID.resource ?? "", streamManagement: info.streamManagement))
        setupTask?.cancel()
        setupTask = Task { await self.setUp(resumed: info.resumed) }
    }

    func disconnected(_ error: ClientError?) async {
        setupTask?.cancel()
        setupTask = nil
        await rooms.disconnected()
        guard !stopping else { return }
        handleConnectFailure(error ?? .disconnected("the server closed the stream"))
    }

    /// After login: carbons (a resumed session still has them), the roster (once per process), then the
    /// server archive and polling. Each step is retried while the connection lasts; a failure never turns
    /// catch-up or polling off.
    func setUp(resumed: Bool) async {
        await sendOutbox()
        if !carbonsEnabled {
            carbonsEnabled = await retrying("enabling message carbons") { () throws(ClientError) in
                _ = try await self.client.request(Carbons.enableRequest())
            }
        }
        if !rosterLoaded {
            rosterLoaded = await retrying("fetching the roster") { () throws(ClientError) in
                let roster = try await self.client.request(Roster.getRequest())
                await self.loaded(roster: Roster.items(in: roster))
            }
        }
        if !accountFeaturesKnown {
            _ = await retrying("asking the server what the account supports") { () throws(ClientError) in
                let answer = try await self.client.request(Disco.infoRequest(to: self.jid.bare))
                self.learned(accountFeatures: Disco.info(in: answer)?.features ?? [])
            }
        }
        guard !Task.isCancelled else { return }
        if let omemo {
            let client = self.client
            Task { await omemo.publish(client: client) }
        }
        let rooms = self.rooms
        Task { await rooms.online(resumed: resumed) }
        if serverHasArchive {
            await catchUp(progress: !resumed)
            startPolling()
        } else {
            log.warning("\(jid): the server keeps no archive (XEP-0313): messages sent while Roost is offline cannot be fetched")
            await settleUnconfirmedSends(serverArchiveRead: false)
        }
    }

    func learned(accountFeatures features: Set<String>) {
        accountFeaturesKnown = true
        serverHasArchive = features.contains(Namespace.mam)
        context.trustsOwnStanzaIDs = serverHasArchive || features.contains(Namespace.stanzaID)
    }

    func loaded(roster items: [RosterItem]) async {
        let now = Timestamp.now()
        for item in items where item.name != nil { context.displayNames[item.jid] = item.name }
        context.contacts = Set(items.filter { $0.subscription != .remove }.map(\.jid.bare))
        for item in items { context.noteApproval(of: item) }
        // The server approved these while no Roost ran (a pre-approval, or another client of the user). Prosody
        // 0.12 does so without delivering its `subscribed` to a contact on the same server who is online while no
        // resource of the user is (mod_presence asks that contact's roster whether it is subscribed, which only the
        // undelivered presence would make true): the user's side ends `both`, the contact's `from` + ask. Sent
        // again from an online resource, it is delivered; where the contact had it, its server ignores it.
        let approvedWhileAway = Set(items.filter { $0.subscription == .from || $0.subscription == .both }.map(\.jid.bare))
            .intersection(addedAwaitingApproval)
        addedAwaitingApproval = []
        await writer.submit(items.map { StanzaRouter.rosterEvent($0, account: jid, now: now) })
        await answerApprovedRequests(approvedWhileAway: approvedWhileAway)
        rosterContacts = items.count
        log.info("\(jid): online; roster has \(items.count) \(items.count == 1 ? "contact" : "contacts"); stanza-ids \(context.trustsOwnStanzaIDs ? "trusted" : "not trusted")")
    }

    /// Contacts the user added may see the user's presence (RFC 6121 §3.4): after the roster loads, each is
    /// sent `subscribed` once per process. A request of theirs the server holds is accepted by it — also one
    /// the server never delivers to Roost (ejabberd gives pending requests only to resources of non-negative
    /// priority), or one that came before the roster said who was added; otherwise the server ignores it, or
    /// keeps it as a pre-approval. So are those the server approved while Roost was away (`loaded(roster:)`).
    /// Requests already archived as pending are settled in the archive too.
    func answerApprovedRequests(approvedWhileAway: Set<JID>) async {
        let contacts = context.approvedContacts.union(approvedWhileAway).subtracting(approvalsSent)
        guard !contacts.isEmpty else { return }
        approvalsSent.formUnion(contacts)
        for contact in contacts { try? client.send(Presence(type: .subscribed, to: contact)) }
        await writer.flush()
        guard let reader = try? ArchiveReader(path: settings.archivePath),
              let pending = try? reader.pendingSubscriptionRequests(account: jid.description) else { return }
        let now = Timestamp.now()
        for request in pending {
            guard let contact = JID(parsing: request.jid)?.bare, contacts.contains(contact) else { continue }
            await writer.submit([.subscription(SubscriptionRecord(account: jid.description, jid: contact.description, direction: .outgoing,
                                                                    kind: .subscribed, timestamp: now))])
            log.info("\(jid): answered the request of \(contact), whom the user added")
        }
    }

    /// Runs `step` until it succeeds (true), the server refuses it for good or the connection ends (false).
    func retrying(_ what: String, _ step: () async throws(ClientError) -> Void) async -> Bool {
        var delay = Duration.seconds(1)
        while !Task.isCancelled, !stopping {
            do {
                try await step()
                return true
            } catch {
                if case .stanzaError(let e) = error, e.type == "cancel" || e.type == "auth" {
                    log.warning("\(jid): \(what): the server refused (\(LogText.quote(e))); going on without")
                    return false
                }
                guard client.isConnected else { return false }
                log.warning("\(jid): \(what) failed: \(LogText.quote(error)); retrying in \(Int(delay / .seconds(1)))s")
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(60))
            }
        }
        return false
    }

    func route(_ stanza: InboundStanza) async {
        if let omemo, stanza.element.name == "message", let list = OMEMO.deviceListEvent(in: Message(stanza.element)) {
            let client = self.client
            Task { await omemo.deviceListChanged(jid: list.jid, namespace: list.namespace, devices: list.devices, client: client) }
        }
        // Decryption happens inside routing (the context's decryptor); its ratchet state is saved only once
        // the archive has the messages, when the commit message arrives (`settle`). Group chat traffic is
        // accepted only from the rooms the room manager has routes for; what it means for them goes back to
        // it, in stream order.
        context.rooms = rooms.routes.current
        context.knownRooms = rooms.routes.knownRooms
        let outcome = StanzaRouter.route(stanza.element, context: context, now: Timestamp.now())
        let roomNotes = outcome.notes.compactMap { if case .room(let note) = $0 { note } else { nil } }
        let ratchet = omemo?.takeToken() ?? 0
        if let why = outcome.rejected {
            rejectedStanzas += 1
            log.debug("\(jid): ignored: \(LogText.quote(why))")
        }
        for item in outcome.rosterChanges {
            if item.subscription == .remove { context.contacts.remove(item.jid.bare) } else { context.contacts.insert(item.jid.bare) }
            context.noteApproval(of: item)
            if item.subscription == .remove { context.displayNames[item.jid] = nil } else if let name = item.name { context.displayNames[item.jid] = name }
            if let name = item.name, item.subscription != .remove { translator.names[item.jid.description.lowercased()] = name }
        }
        for reply in outcome.replies {
            switch reply.name {
            case "iq": try? client.send(IQ(reply))
            case "message": try? client.send(Message(reply))
            default: try? client.send(Presence(reply))
            }
        }
        for case .ownPresence(let resource, let available, _) in outcome.notes {
            if available { otherClients.insert(resource) } else { otherClients.remove(resource) }
        }
        for case .avatarHash(let contact, let hash) in outcome.notes where avatarHashes[contact.lowercased()] != (hash ?? "") {
            avatarHashes[contact.lowercased()] = hash ?? ""
            Task { await self.refreshVCard(of: contact) }
        }
        for case .pepAvatar(let contact, let id, let mimeType) in outcome.notes where avatarHashes[contact.lowercased()] != (id ?? "") {
            avatarHashes[contact.lowercased()] = id ?? ""
            if let id { Task { await self.fetchPEPAvatar(of: contact, id: id, mimeType: mimeType) } }
        }
        let acknowledgement = stanza.acknowledgement
        // The events travel back with the message only when notes need them for notifications.
        await writer.submit(outcome.events, progress: progress(acknowledgement), to: commits,
                              context: .stanza(acknowledgement, notes: outcome.notes, events: outcome.notes.isEmpty ? [] : outcome.events,
                                               ratchet: ratchet))
        // After the stanza's own events are queued, so that what the room manager archives in answer (a join, an
        // accepted invitation) comes after them; before the next stanza, whose routing may depend on it.
        if !roomNotes.isEmpty { await rooms.noted(roomNotes) }
    }

    func route(_ page: ArchivePage) async {
        // A room's page is checked against the room it was asked of (and read only while Roost is in it).
        let archive = pageCommits.archive(of: page.queryID) ?? jid
        let isRoom = archive != jid
        context.rooms = rooms.routes.current
        context.knownRooms = rooms.routes.knownRooms
        let routed = ArchivePageRouter.events(for: page, archive: archive, context: context, now: Timestamp.now())
        let (events, newest, rejected, mentions, roomGone) = (routed.events, routed.newest, routed.rejected, routed.mentions, routed.roomGone)
        let invitations = routed.invitations
        let ratchet = omemo?.takeToken() ?? 0
        if rejected > 0 {
            rejectedStanzas += rejected
            log.warning("\(jid): ignored \(rejected) archive results not from \(isRoom ? "the room's" : "the account's own") archive or query")
        }
        let settlement = PageSettlement(acknowledgement: page.acknowledgement, queryID: page.queryID, isRoom: isRoom, events: events,
                                        newest: newest, mentions: mentions, invitations: invitations, roomGone: roomGone, ratchet: ratchet)
        await writer.submit(events, progress: progress(page.acknowledgement), to: commits, context: .page(settlement))
    }

    // MARK: - After a commit

    /// What the session does once the archive writer's message about a submission arrives (the context of the
    /// messages in `commits`).
    enum AfterCommit: Sendable {
        /// A live stanza: acknowledge it, save the ratchet state its decryption advanced, notify.
        case stanza(Acknowledgement, notes: [RoutingNote], events: [ArchiveEvent], ratchet: UInt64)
        /// A page of a server archive (the account's or a room's).
        case page(PageSettlement)
        /// `settleCommits`: everything submitted before it has been committed and settled.
        case settled(OneShot<Bool>)
    }

    struct PageSettlement: Sendable {
        var acknowledgement: Acknowledgement
        var queryID: String
        var isRoom: Bool
        var events: [ArchiveEvent]
        var newest: Int64?
        var mentions: Set<Int>
        var invitations: [(eventIndex: Int, note: RoomNote)]
        var roomGone: Bool
        var ratchet: UInt64
    }

    /// Reads the archive writer's messages in submission order, on the actor (see `CommitMailbox` for why the
    /// mailbox stays bounded).
    func consumeCommits() async {
        for await message in commits.messages {
            settle(message.context, message.outcome)
        }
    }

    /// What follows a commit. In this order: the downloads are queued (a notification of a picture waits for
    /// it), the ratchet state the routing advanced is saved (after the archive has its messages: see `KeyStore`
    /// in RoostOMEMO for why a crash between the two loses nothing), the stanzas are acknowledged, then the
    /// notifications, the catch-up's backlog and the room manager hear of it.
    func settle(_ context: AfterCommit, _ result: ArchiveWriter.Outcome) {
        if case .stored(let outcomes, let downloads) = result {
            if !downloads.isEmpty { self.downloads?.enqueue(downloads) }
            for case .refused(let why) in outcomes { log.warning("ignored: \(LogText.quote(why))") }
        }
        switch context {
        case .stanza(let acknowledgement, let notes, let events, let ratchet):
            omemo?.archiveSettled(result, ratchet: ratchet, client: client)
            switch result {
            case .stored(let outcomes, _):
                client.acknowledge(acknowledgement)
                guard !notes.isEmpty else { return }
                let (post, late) = translator.events(for: notes, events: events, outcomes: outcomes)
                postEvaluatingWatches(post, events: events, outcomes: outcomes)
                backlog.add(late)
            case .refused:
                // Deliberately not stored (logged by the writer): settled, so acknowledged.
                client.acknowledge(acknowledgement)
            case .abandoned:
                // Not acknowledged: the server keeps it (SM) or its archive has it; it comes back later.
                break
            }
        case .page(let page):
            omemo?.archiveSettled(result, ratchet: page.ratchet, client: client)
            settle(page, result)
        case .settled(let done):
            if case .stored = result { done.fulfil(true) } else { done.fulfil(false) }
        }
    }

    /// Posts live notifications; with watches for this account, first gathers them until the commit messages waiting in
    /// the mailbox are read (a task queued on this actor runs after them), then evaluates the watches once on all
    /// their messages and marks each message with the watches it matched (highlight words: as a mention).
    func postEvaluatingWatches(_ events: [NotificationEvent], events archived: [ArchiveEvent], outcomes: [InsertOutcome]) {
        guard !awaitingWatches.isEmpty || events.contains(where: { if case .message = $0 { true } else { false } }),
              !notifications.watches.definitions(for: account).isEmpty else {
            for event in events { notifications.post(event) }
            return
        }
        let first = awaitingWatches.isEmpty
        awaitingWatches += events
        awaitingMessages.merge(WatchEvaluator.messages(archived, outcomes)) { _, new in new }
        guard first else { return }
        Task { self.evaluateWatches() }
    }

    private func evaluateWatches() {
        let events = awaitingWatches
        let stored = awaitingMessages
        awaitingWatches = []
        awaitingMessages = [:]
        var messages = events.compactMap { if case .message(let message) = $0 { message } else { nil } }
        markWatches(&messages, stored: stored)
        var marked = messages.makeIterator()
        for event in events {
            if case .message = event, let message = marked.next() { notifications.post(.message(message)) } else { notifications.post(event) }
        }
    }

    /// Marks each message with the watches it matched, evaluated once for all of them; highlight words make it a
    /// mention. Also for a catch-up's page (`NotifierCore` notifies its watched messages one by one, the others
    /// in the summary).
    func markWatches(_ messages: inout [IncomingMessage], stored: [Int64: WatchMessage]) {
        let hits = notifications.watches.matches(account: account, ids: messages.compactMap(\.archiveID), messages: stored, log: log)
        guard !hits.isEmpty else { return }
        for index in messages.indices {
            guard let id = messages[index].archiveID, let matched = hits[id] else { continue }
            messages[index].watches = matched.compactMap(\.name)
            if matched.contains(where: { $0.name == nil }) { messages[index].mentionsUser = true }
        }
    }

    private func settle(_ page: PageSettlement, _ result: ArchiveWriter.Outcome) {
        switch result {
        case .stored(let outcomes, _):
            client.acknowledge(page.acknowledgement)
            guard !page.roomGone else {
                // Roost left the room while its archive was read: nothing stored, the mark stays.
                pageCommits.settle(page.queryID, .abandoned)
                return
            }
            var late: [IncomingMessage] = []
            var inserted = 0
            for (index, (event, outcome)) in zip(page.events, outcomes).enumerated() {
                guard case .inserted(let id) = outcome, case .message(let record) = event else { continue }
                inserted += 1
                if let message = translator.incoming(record, archiveID: id, mentionsUser: page.mentions.contains(index)) { late.append(message) }
            }
            if !late.isEmpty, !notifications.watches.definitions(for: account).isEmpty {
                markWatches(&late, stored: WatchEvaluator.messages(page.events, outcomes))
            }
            // The account's catch-up summarises the backlog; a room's catch-up its own messages, once.
            if !page.isRoom { backlog.add(late) }
            let newInvitations = page.invitations.filter { outcomes.indices.contains($0.eventIndex) && outcomes[$0.eventIndex] == .stored }
            if !newInvitations.isEmpty {
                let notes = newInvitations.map { RoutingNote.room($0.note) }
                for event in translator.events(for: notes, events: page.events, outcomes: outcomes).post { notifications.post(event) }
                let rooms = self.rooms
                Task { await rooms.noted(newInvitations.map(\.note)) }
            }
            pageCommits.settle(page.queryID, .committed(inserted: inserted, newest: page.newest, late: page.isRoom ? late : []))
        case .refused:
            client.acknowledge(page.acknowledgement)
            pageCommits.settle(page.queryID, .committed(inserted: 0, newest: nil, late: []))
        case .abandoned:
            pageCommits.settle(page.queryID, .abandoned)
        }
    }

    /// Waits until everything this session submitted before the call is committed and settled (acknowledged,
    /// ratchets saved); false when the archive could not take it (within `limit`, when given).
    func settleCommits(within limit: Duration? = nil) async -> Bool {
        let done = OneShot<Bool>()
        let timer = limit.map { limit in
            Task {
                try? await Task.sleep(for: limit)
                done.fulfil(false)
            }
        }
        defer { timer?.cancel() }
        await writer.submit([], to: commits, context: .settled(done))
        return await done.value
    }

    func progress(_ acknowledgement: Acknowledgement) -> ArchiveWriter.StreamProgress? {
        guard let id = acknowledgement.streamID, let h = acknowledgement.handledCount else { return nil }
        return ArchiveWriter.StreamProgress(account: jid.description, streamID: id, handledCount: h)
    }

    // MARK: - Contacts' avatars

    /// Fetches a contact's vCard (once, and again when its photo hash changes): the avatar for notifications
    /// and the nickname for display, cached under the data dir and in the archive.
    func refreshVCard(of contact: String) async {
        guard !stopping, client.isConnected else { return }
        let context = actionContext(client: client, dataDirectory: dataDirectory, priority: account.priority)
        do {
            let info = try await VCardFetchAction(jid: contact).perform(in: context)
            let key = contact.lowercased()
            if let path = info.photoPath { translator.avatars[key] = path }
            // The roster name comes first; the vCard names a contact without one.
            if let bare = JID(parsing: contact)?.bare, self.context.displayNames[bare] == nil, let name = info.nickname ?? info.fullName {
                translator.names[key] = name
            }
            log.debug("\(jid): cached the vCard of \(LogText.quote(contact))")
        } catch {
            log.debug("\(jid): could not fetch the vCard of \(LogText.quote(contact)): \(LogText.quote(error))")
        }
    }

    /// XEP-0084: fetches the published image by its id and caches it like a vCard photo.
    func fetchPEPAvatar(of contact: String, id: String, mimeType: String?) async {
        guard !stopping, client.isConnected, let contactJID = JID(parsing: contact) else { return }
        do {
            let answer = try await client.request(UserAvatar.dataRequest(from: contactJID, id: id))
            guard let data = UserAvatar.data(in: answer) else { return }
            let photo = VCard.Photo(mimeType: mimeType ?? "image/png", data: data)
            let path = try AvatarStore(dataDirectory: dataDirectory).store(photo, hash: AvatarStore.hash(data))
            // Kept in memory only (the server sends the last published item again at each login); the archive's
            // contact row keeps the vCard fields, which this must not overwrite.
            translator.avatars[contact.lowercased()] = path
            log.debug("\(jid): cached the PEP avatar of \(LogText.quote(contact))")
        } catch {
            log.debug("\(jid): could not fetch the PEP avatar of \(LogText.quote(contact)): \(LogText.quote(error))")
        }
    }

    // MARK: - Stopping

    /// Commits what arrived, tells the server everything committed is handled, says goodbye. When the archive
    /// cannot be written, waits for it a little only: what is not committed is not acknowledged either, so the
    /// server keeps it.
    func stop() async {
        stopping = true
        await rooms.stop()
        connectTask?.cancel()
        pollTask?.cancel()
        setupTask?.cancel()
        let committed = await settleCommits(within: .seconds(10))
        await client.disconnect()
        eventTask?.cancel()
        // Routing has ended once the event task has: nothing more is submitted with `commits`. What it submitted
        // last is settled, then the mailbox's reader ends. (When the archive cannot be written, what is answered
        // later is lost as a crash would lose it: not acknowledged, its ratchet state not saved; see `KeyStore`.)
        await eventTask?.value
        if committed {
            await writer.submit([.syncState(SyncStateRecord(account: jid.description, clearStreamManagement: true))])
            _ = await settleCommits(within: .seconds(10))
        }
        commits.close()
        setState(.stopped)
    }

    /// The archive could not be written for too long: the connection is closed without acknowledging
    /// anything more, so the server keeps it all for resumption or its archive. Reconnecting waits until
    /// the archive takes writes again (`connectOnce` flushes first).
    func archiveStalled(for duration: Duration) {
        guard !stopping, client.isConnected else { return }
        log.error("\(jid): the archive could not be written for \(Int(duration / .seconds(60))) minutes; closing the connection without acknowledging, so the server keeps everything")
        client.abort(.disconnected("the archive cannot be written"))
    }

    func currentState() -> AccountState { state }

    func onlineClient() -> XMPPClient? {
        if case .online = state, client.isConnected { return client }
        return nil
    }

    func status() async -> AccountStatus {
        var online = false
        if case .online = state { online = true }
        var status = AccountStatus(account: jid.description, state: state,
                             server: account.host.map { "\($0):\(account.port ?? 5222)" } ?? jid.domain,
                             boundResource: online ? client.boundJID?.resource : nil,
                             streamManagement: online && client.resumptionState != nil, lastCatchUp: lastCatchUp,
                             unacknowledgedOutbound: client.unacknowledgedCount, rejectedStanzas: rejectedStanzas,
                             priority: account.priority, otherClientsOnline: otherClients.count,
                             roomsJoined: await rooms.joinedCount, rosterContacts: rosterContacts,
                             unacknowledgedOldestSeconds: client.oldestUnacknowledgedAge.map { Int($0.components.seconds) })
        status.logins = logins
        status.sessionsResumed = sessionsResumed
        status.omemoDevice = omemo?.publishedDevice
        return status
    }
}
