import RoostCore
import Foundation
import RoostArchive
import RoostNotify
import RoostXMPP
import Synchronization

/// The group chats of one account: which rooms Roost should be in (bookmarks with autojoin, the config,
/// `roost rooms join`, accepted invitations; minus `exclude_rooms`), joining them quietly and rejoining
/// after anything that drops Roost out, and reading each room's own archive (XEP-0313 on the room JID) for
/// what it missed.
///
/// The session calls it at a few points, in stream order: `sessionStarted` when a connection is up,
/// `online` once the roster is loaded, `noted` with what the router made of each stanza, `disconnected`.
/// What the router needs to know about rooms (`routes`) is updated here before anything is sent that makes
/// a room talk, so the room's answer always finds its route. Everything archived goes through the ingest
/// pipeline like the rest; messages are acknowledged after commit by the session, as always.
///
/// Per room: `out` → (disco#info: MAM? anonymous?) → `joining` (presence with `<history maxstanzas='0'/>`, or
/// `since` the newest stored message where the room keeps no archive) → `joined` on Roost's own presence
/// (status 110) → the room's archive is read from its mark. A nick conflict retries with a suffix (kept for
/// next time); other refusals are logged, recorded (`roost rooms`) and tried again later. Every
/// `room_ping_seconds` each joined room is self-pinged (XEP-0410) and, when the room is still there, its
/// archive read again; a room that no longer counts Roost in is joined again, as after a kick or a restart.
actor RoomManager {
    /// Read by the session before routing each stanza.
    nonisolated let routes = RoomRoutes()

    private let client: XMPPClient
    private let account: AccountConfig
    private let jid: JID
    private let pipeline: IngestPipeline
    private let log: Logger
    private let commits: PageCommits
    private let notifications: NotificationHub
    private let pingInterval: Duration
    private let archivePath: String
    private var rooms: [JID: Room] = [:]
    private var online = false
    private var bookmarksLoaded = false
    private var bookmarksReported = false
    private var pingTask: Task<Void, Never>?
    private var catchUpQueue: [JID] = []
    /// Rooms whose next catch-up follows a join: its summary is logged even when it found nothing.
    private var catchUpsAfterJoin: Set<JID> = []
    private var catchUpTask: Task<Void, Never>?

    /// How long a join may wait for the room's answer.
    static let joinTimeout: Duration = .seconds(30)
    /// After a nick conflict, this many suffixed nicks are tried.
    static let nickAttempts = 5

    struct Room {
        let jid: JID
        var name: String?
        /// The name in the room's disco#info identity (archived apart from the bookmark's).
        var discoName: String?
        var bookmark: Bookmark?
        var configured: RoomConfig?
        var joinedByUser = false
        var passwordCommand: String?
        /// From a pending invitation (kept in memory for the join it allows).
        var invitationPassword: String?
        /// The nick in use or last used (with its conflict suffix).
        var nick: String?
        /// `roost rooms join --nick`: wins over the bookmark's and the account's.
        var requestedNick: String?
        var phase: Phase = .out
        var conflicts = 0
        var mam: Bool?
        var nonAnonymous: Bool?
        var occupantID: String?
        var subject: String?
        var mark: String?
        var markTimestamp: Int64?
        var lastError: String?
        var rejoinDelay: Duration = .seconds(5)
        var retry: Task<Void, Never>?
        var waiters: [OneShot<JoinResult>] = []
        /// Roost asked to leave: the unavailable presence that follows is no drop.
        var leaving = false
    }

    enum Phase: Equatable {
        case out
        case joining(nick: String)
        case joined(nick: String)
    }

    /// What `join` returns to `roost rooms join`.
    enum JoinResult: Sendable, Equatable {
        case joined(nick: String)
        case failed(String)
    }

    init(account: AccountConfig, jid: JID, client: XMPPClient, pipeline: IngestPipeline, log: Logger, commits: PageCommits,
         notifications: NotificationHub, pingInterval: Duration, archivePath: String) {
        self.account = account
        self.jid = jid
        self.client = client
        self.pipeline = pipeline
        self.log = log
        self.commits = commits
        self.notifications = notifications
        self.pingInterval = pingInterval
        self.archivePath = archivePath
        var known: [JID: Room] = [:]
        if let reader = try? ArchiveReader(path: archivePath), let stored = try? reader.rooms(account: account.jid) {
            for row in stored {
                guard let room = JID(parsing: row.jid)?.bare else { continue }
                var state = Room(jid: room)
                state.name = row.name
                if row.bookmarked {
                    // Until the server's bookmarks are read (passwords are never stored, so none here).
                    state.bookmark = Bookmark(room: room, name: row.name, autojoin: row.autojoin, nick: row.bookmarkNick)
                }
                state.joinedByUser = row.joinedByUser
                // What `roost rooms join --nick` chose is the nick Roost used there.
                if row.joinedByUser, !row.bookmarked { state.requestedNick = row.nick }
                state.passwordCommand = row.passwordCommand
                state.nick = row.nick
                state.mam = row.mam
                state.nonAnonymous = row.nonAnonymous
                state.occupantID = row.occupantId
                state.subject = row.subject
                state.mark = row.catchUpId
                state.markTimestamp = row.catchUpTimestamp
                state.lastError = row.lastError
                known[room] = state
            }
        }
        for configured in account.rooms {
            guard let room = JID(parsing: configured.jid)?.bare else { continue }
            known[room, default: Room(jid: room)].configured = configured
        }
        rooms = known
        routes.know(known.keys)
    }

    // MARK: - Hooks from the session

    /// A connection is up (in stream order, before its first stanza). A new session is in no room.
    func sessionStarted(resumed: Bool) {
        guard !resumed else { return }
        routes.removeAll()
        for room in rooms.keys {
            rooms[room]?.phase = .out
            rooms[room]?.leaving = false
        }
    }

    /// The account is online (roster loaded): read the bookmarks, join what should be joined, self-ping what
    /// a resumed session is still in, and start the periodic self-ping.
    func online(resumed: Bool) async {
        online = true
        if !bookmarksLoaded || !resumed { await loadBookmarks() }
        guard online else { return }
        for room in rooms.values where isWanted(room) {
            switch room.phase {
            case .out: startJoin(room.jid)
            case .joined: startPing(room.jid)
            case .joining: break
            }
        }
        if pingTask == nil {
            let interval = pingInterval
            pingTask = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard !Task.isCancelled else { return }
                    await self?.pingAll()
                }
            }
        }
    }

    /// The connection ended. Joins in flight fail; joined rooms stay joined in case the session resumes.
    func disconnected() {
        online = false
        pingTask?.cancel()
        pingTask = nil
        for (room, state) in rooms {
            if case .joining = state.phase {
                rooms[room]?.phase = .out
                routes.set(room, nil)
                finishWaiters(room, .failed("the connection ended while joining"))
            }
        }
    }

    func stop() {
        online = false
        pingTask?.cancel()
        catchUpTask?.cancel()
        for room in rooms.keys { rooms[room]?.retry?.cancel() }
    }

    /// What the router made of one stanza, in stream order.
    func noted(_ notes: [RoomNote]) async {
        for note in notes {
            switch note {
            case let .joined(room, nick, occupantID, codes): await joined(room, nick: nick, occupantID: occupantID, codes: codes)
            case let .left(room, nick, codes, reason, newNick, destroyed):
                await left(room, nick: nick, codes: codes, reason: reason, newNick: newNick, destroyed: destroyed)
            case let .joinFailed(room, nick, error): await joinFailed(room, nick: nick, error: error)
            case let .subject(room, subject, by):
                rooms[room]?.subject = subject
                routes.update(room) { $0?.subject = subject }
                await submit(room, .subject(subject, by: by))
            case .historyEnded(let room):
                routes.update(room) { $0?.history = false }
            case .bookmarks(let changes): await bookmarksChanged(changes)
            case let .invitation(invitation, fromContact): await invited(invitation, fromContact: fromContact)
            case let .occupant(room, nick, realJID, available, newNick):
                routes.update(room) { route in
                    route?.occupants[nick] = available ? realJID : nil
                    if let newNick { route?.occupants[newNick] = realJID }
                }
            }
        }
    }

    // MARK: - Which rooms

    private func isWanted(_ room: Room) -> Bool {
        guard !account.excludedRooms.contains(room.jid.description) else { return false }
        return room.configured != nil || room.joinedByUser || room.bookmark?.autojoin == true
    }

    /// The nick to ask for: the remembered one while it still grows from the wanted one (a suffix after a
    /// conflict), else the config's, the bookmark's or the account's.
    private func nick(for room: Room) -> String {
        let wanted = wantedNick(room)
        if let remembered = room.nick, remembered.hasPrefix(wanted) { return remembered }
        return wanted
    }

    private func wantedNick(_ room: Room) -> String {
        room.configured?.nick ?? room.requestedNick ?? room.bookmark?.nick ?? account.defaultNick
    }

    private func loadBookmarks() async {
        var found: [JID: Bookmark] = [:]
        var answered = false
        do {
            for bookmark in Bookmarks.items(in: try await client.request(Bookmarks.fetchRequest())) { found[bookmark.room] = bookmark }
            answered = true
        } catch {
            if case .stanzaError(let e) = error, e.condition == "item-not-found" { answered = true }
            else { log.debug("\(jid): PEP bookmarks (XEP-0402) not read: \(LogText.quote(error))") }
        }
        // XEP-0048 in private storage: older clients write only there.
        if let legacy = try? await client.request(LegacyBookmarks.fetchRequest()) {
            answered = true
            for bookmark in LegacyBookmarks.items(in: legacy) where found[bookmark.room] == nil { found[bookmark.room] = bookmark }
        }
        guard answered else {
            // Ended by a stop or a dropped link, nothing failed: the next login reads them.
            if client.isConnected { log.warning("\(jid): could not read the bookmarks; joining the rooms known from before") }
            return
        }
        bookmarksLoaded = true
        for (room, state) in rooms where state.bookmark != nil && found[room] == nil {
            await setBookmark(nil, for: room)
        }
        for bookmark in found.values where bookmark != rooms[bookmark.room]?.bookmark || rooms[bookmark.room] == nil {
            await setBookmark(bookmark, for: bookmark.room)
        }
        let autojoin = found.values.filter(\.autojoin).count
        if !bookmarksReported {
            bookmarksReported = true
            log.info("\(jid): \(found.count) bookmarked \(found.count == 1 ? "room" : "rooms") (\(autojoin) to join)")
        }
    }

    private func setBookmark(_ bookmark: Bookmark?, for room: JID) async {
        rooms[room, default: Room(jid: room)].bookmark = bookmark
        routes.know([room])
        if let name = bookmark?.name { rooms[room]?.name = name }
        await submit(room, .bookmark(present: bookmark != nil, name: bookmark?.name, nick: bookmark?.nick,
                                     autojoin: bookmark?.autojoin ?? false, hasPassword: bookmark?.password != nil))
    }

    /// Another client changed the bookmarks: join a room newly marked autojoin, leave one no longer wanted.
    private func bookmarksChanged(_ changes: [Bookmarks.Change]) async {
        for change in changes {
            let room: JID
            switch change {
            case .set(let bookmark):
                room = bookmark.room
                await setBookmark(bookmark, for: room)
                log.info("\(jid): bookmark of \(LogText.quote(room)) \(bookmark.autojoin ? "(autojoin)" : "") changed on another client")
            case .removed(let removed):
                room = removed
                await setBookmark(nil, for: room)
                log.info("\(jid): bookmark of \(LogText.quote(room)) removed on another client")
            }
            guard let state = rooms[room] else { continue }
            if isWanted(state), state.phase == .out, online {
                startJoin(room)
            } else if !isWanted(state), state.phase != .out {
                leave(room)
            }
        }
    }

    private func invited(_ invitation: Invitation, fromContact: Bool) async {
        let room = invitation.room
        if let password = invitation.password { rooms[room, default: Room(jid: room)].invitationPassword = password }
        guard account.acceptInvitations == .contacts, fromContact, invitation.kind == .direct else { return }
        guard !account.excludedRooms.contains(room.description) else { return }
        log.info("\(jid): joining \(LogText.quote(room)): invited by the contact \(LogText.quote(invitation.inviter?.bare.description ?? "?")) (accept_invitations = contacts)")
        _ = await join(room, nick: nil, passwordCommand: nil, bookmark: false, waitFor: nil)
    }

    // MARK: - Joining

    private func startJoin(_ room: JID) {
        Task { await self.join(room) }
    }

    /// `roost rooms join` and an invitation's Join: remember the room (joined again at every start), join it,
    /// optionally bookmark it, and wait for the room's answer.
    func join(_ room: JID, nick: String?, passwordCommand: String?, bookmark: Bool, waitFor timeout: Duration?) async -> JoinResult {
        guard !account.excludedRooms.contains(room.description) else {
            return .failed("\(room) is in exclude_rooms of \(jid) in the config")
        }
        var state = rooms[room] ?? Room(jid: room)
        state.joinedByUser = true
        if let passwordCommand { state.passwordCommand = passwordCommand }
        if let nick { state.nick = nick; state.requestedNick = nick }
        rooms[room] = state
        await submit(room, .joinedByUser(passwordCommand: state.passwordCommand))
        await pipeline.submit([.invitationAnswered(account: jid.description, room: room.description, status: .accepted,
                                                   timestamp: Timestamp.now())])
        if bookmark { await publishBookmark(room, autojoin: true) }
        if case .joined(let current) = state.phase {
            if let nick, nick != current, let occupant = try? room.with(resource: nick) {
                // A nick change (XEP-0045 §7.6): the room answers with 303 and Roost's presence under the new nick.
                try? client.send(Presence(to: occupant))
                return .joined(nick: nick)
            }
            return .joined(nick: current)
        }
        let waiter = OneShot<JoinResult>()
        rooms[room]?.waiters.append(waiter)
        if case .out = rooms[room]?.phase ?? .out { startJoin(room) }
        guard let timeout else { return .joined(nick: nick ?? "") }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            waiter.fulfil(.failed("the room did not answer within \(Int(timeout / .seconds(1))) s; Roost keeps trying"))
        }
        defer { timer.cancel() }
        return await waiter.value
    }

    private func join(_ room: JID) async {
        guard online, var state = rooms[room], state.phase == .out, isWanted(state) else { return }
        state.retry?.cancel()
        state.retry = nil
        let nick = nick(for: state)
        state.phase = .joining(nick: nick)
        state.leaving = false
        rooms[room] = state
        // What the room is (a room that does not exist yet is made by the join and asked again afterwards).
        do {
            let info = Disco.info(in: try await client.request(Disco.infoRequest(to: room), timeout: .seconds(20)))
            rooms[room]?.mam = info?.supports(Namespace.mam) ?? false
            rooms[room]?.nonAnonymous = info?.supports(MUC.nonAnonymousFeature) ?? false
            if let name = info?.identities.first(where: { $0.category == "conference" })?.name, !name.isEmpty {
                rooms[room]?.discoName = name
                if rooms[room]?.name == nil { rooms[room]?.name = name }
            }
        } catch {
            if case .stanzaError(let e) = error, e.condition == "item-not-found" {
                rooms[room]?.mam = nil
            } else if !client.isConnected {
                rooms[room]?.phase = .out
                return
            } else {
                log.debug("\(jid): disco#info of \(LogText.quote(room)) failed: \(LogText.quote(error)); joining anyway")
            }
        }
        guard rooms[room]?.phase == .joining(nick: nick) else { return }
        let (password, source) = await password(for: rooms[room]!)
        guard rooms[room]?.phase == .joining(nick: nick), let occupant = try? room.with(resource: nick) else {
            rooms[room]?.phase = .out
            return
        }
        let mam = rooms[room]?.mam == true
        // With an archive, nothing (it is read next); else what came since the newest stored message, or, the
        // first time, the room's default history.
        var history: MUC.History? = .nothing
        if !mam {
            history = newestStoredMessage(in: room).map { .since(Date(timeIntervalSince1970: Double($0) / 1000)) }
        }
        await submit(room, .joining(nick: nick, passwordSource: source))
        let wanted = rooms[room].map(wantedNick) ?? account.defaultNick
        routes.set(room, RoomRoute(room: room, nick: nick, mentionNames: Array(Set([nick, wanted])), occupantID: nil,
                                   trustsStanzaIDs: mam, joined: false, subject: rooms[room]?.subject, history: !mam))
        do {
            try client.send(MUC.joinPresence(occupant: occupant, password: password, history: history))
        } catch {
            rooms[room]?.phase = .out
            routes.set(room, nil)
            return
        }
        log.debug("\(jid): joining \(LogText.quote(room)) as \(LogText.quote(nick))\(mam ? "" : " (the room keeps no archive: its history since the newest stored message)")")
        Task { [weak self] in
            try? await Task.sleep(for: Self.joinTimeout)
            await self?.joinTimedOut(room, nick: nick)
        }
    }

    private func joinTimedOut(_ room: JID, nick: String) {
        guard rooms[room]?.phase == .joining(nick: nick) else { return }
        rooms[room]?.phase = .out
        routes.set(room, nil)
        log.warning("\(jid): \(LogText.quote(room)) did not answer the join within \(Int(Self.joinTimeout / .seconds(1))) s; trying again later")
        finishWaiters(room, .failed("the room did not answer"))
        scheduleRejoin(room)
    }

    private func joined(_ room: JID, nick: String, occupantID: String?, codes: Set<Int>) async {
        guard var state = rooms[room] else { return }
        let wasJoined = if case .joined = state.phase { true } else { false }
        state.phase = .joined(nick: nick)
        state.nick = nick
        state.occupantID = occupantID ?? state.occupantID
        state.conflicts = 0
        state.rejoinDelay = .seconds(5)
        state.lastError = nil
        rooms[room] = state
        routes.update(room) { route in
            guard var updated = route else { return }
            updated.joined = true
            updated.nick = nick
            updated.occupantID = occupantID ?? updated.occupantID
            if !updated.mentionNames.contains(nick) { updated.mentionNames.append(nick) }
            route = updated
        }
        await submit(room, .joined(nick: nick, occupantID: state.occupantID, mam: state.mam == true, nonAnonymous: state.nonAnonymous == true,
                                   discoName: state.discoName))
        finishWaiters(room, .joined(nick: nick))
        guard !wasJoined else { return }
        log.info("\(jid): joined \(LogText.quote(room)) as \(LogText.quote(nick))\(codes.contains(MUC.Status.roomCreated) ? " (the room was created by this join)" : "")")
        if state.mam == true { enqueueCatchUp(room, afterJoin: true) }
    }

    private func left(_ room: JID, nick: String, codes: Set<Int>, reason: String?, newNick: String?, destroyed: Bool) async {
        guard var state = rooms[room] else { return }
        if codes.contains(MUC.Status.nickChanged), let newNick {
            // Only the nick changed; Roost's presence under the new one follows.
            state.nick = newNick
            rooms[room] = state
            routes.update(room) { $0?.nick = newNick }
            return
        }
        let askedFor = state.leaving
        state.phase = .out
        state.leaving = false
        routes.set(room, nil)
        var why: String?
        var rejoin = isWanted(state)
        if codes.contains(MUC.Status.banned) {
            why = "banned from the room" + (reason.map { ": \($0)" } ?? "")
            rejoin = false
        } else if codes.contains(MUC.Status.kicked) {
            why = "kicked by a moderator" + (reason.map { ": \($0)" } ?? "")
        } else if destroyed {
            why = "the room was destroyed" + (reason.map { ": \($0)" } ?? "")
            rejoin = false
        } else if codes.contains(MUC.Status.affiliationChanged) || codes.contains(MUC.Status.membersOnly) {
            why = "removed from the room (it is members-only, or Roost's affiliation changed)"
        } else if codes.contains(MUC.Status.shutdown) || codes.contains(MUC.Status.technicalError) {
            why = "the room service shut down or failed"
        } else if !askedFor {
            why = "the room dropped Roost"
        }
        state.lastError = why
        rooms[room] = state
        await submit(room, .left(error: why))
        guard !askedFor else {
            log.info("\(jid): left \(LogText.quote(room))")
            return
        }
        log.warning("\(jid): out of \(LogText.quote(room)): \(LogText.quote(why ?? "left"))\(rejoin ? "; joining again" : "")")
        if rejoin { scheduleRejoin(room) }
    }

    private func joinFailed(_ room: JID, nick: String, error: StanzaError) async {
        guard var state = rooms[room], state.phase == .joining(nick: nick) else { return }
        state.phase = .out
        routes.set(room, nil)
        if error.condition == "conflict", state.conflicts < Self.nickAttempts {
            state.conflicts += 1
            let base = wantedNick(state)
            state.nick = state.conflicts == 1 ? "\(base)_" : "\(base)_\(state.conflicts)"
            rooms[room] = state
            log.info("\(jid): the nick \(LogText.quote(nick)) is taken in \(LogText.quote(room)); trying \(LogText.quote(state.nick!))")
            startJoin(room)
            return
        }
        let why = Self.describe(error)
        state.lastError = why
        rooms[room] = state
        await submit(room, .joinFailed(error: why))
        log.warning("\(jid): could not join \(LogText.quote(room)): \(LogText.quote(why))")
        finishWaiters(room, .failed(why))
        scheduleRejoin(room, after: .seconds(1800))
    }

    static func describe(_ error: StanzaError) -> String {
        switch error.condition {
        case "not-authorized": "the room needs a password (set it in the bookmark, a [room] group's password_command, or roost rooms join --password-command)"
        case "forbidden": "Roost's account is banned from the room"
        case "registration-required": "the room is members-only; ask one of its admins to make the account a member"
        case "item-not-found": "the room does not exist and cannot be created"
        case "service-unavailable": "the room is full or refuses new occupants"
        case "not-allowed": "the room service does not allow creating this room"
        case "conflict": "every nick Roost tried is taken"
        default: "the room refused: \(error)"
        }
    }

    private func scheduleRejoin(_ room: JID, after fixed: Duration? = nil) {
        guard var state = rooms[room], isWanted(state) else { return }
        let delay = fixed ?? state.rejoinDelay
        if fixed == nil { state.rejoinDelay = min(state.rejoinDelay * 2, .seconds(600)) }
        state.retry?.cancel()
        state.retry = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.retryJoin(room)
        }
        rooms[room] = state
    }

    private func retryJoin(_ room: JID) async {
        rooms[room]?.retry = nil
        await join(room)
    }

    private func finishWaiters(_ room: JID, _ result: JoinResult) {
        for waiter in rooms[room]?.waiters ?? [] { waiter.fulfil(result) }
        rooms[room]?.waiters.removeAll()
    }

    /// The join password: the config's, the `roost rooms join --password-command`, the bookmark's, an
    /// invitation's; and where it came from (stored — never the password).
    private func password(for room: Room) async -> (String?, String?) {
        if let configured = room.configured?.password {
            do { return (try await configured.resolve(account: jid.description), "config") } catch {
                log.warning("\(jid): the password of \(LogText.quote(room.jid)): \(LogText.quote(error))")
            }
        }
        if let command = room.passwordCommand {
            do { return (try await PasswordSource.command(command).resolve(account: jid.description), "command") } catch {
                log.warning("\(jid): the password of \(LogText.quote(room.jid)): \(LogText.quote(error))")
            }
        }
        if let password = room.bookmark?.password { return (password, "bookmark") }
        if let password = room.invitationPassword { return (password, "invitation") }
        if let reader = try? ArchiveReader(path: archivePath),
           let password = try? reader.invitationPassword(account: jid.description, room: room.jid.description) {
            return (password, "invitation")
        }
        return (nil, nil)
    }

    private func newestStoredMessage(in room: JID) -> Int64? {
        guard let reader = try? ArchiveReader(path: archivePath) else { return nil }
        return (try? reader.newestMessageTime(account: jid.description, conversation: room.description)) ?? nil
    }

    // MARK: - Leaving

    /// `roost rooms leave`: out of the room, not joined at the next start, and the bookmark no longer autojoin.
    func leaveByUser(_ room: JID) async -> Bool {
        guard var state = rooms[room] else { return false }
        let wasIn = state.phase != .out
        state.joinedByUser = false
        state.passwordCommand = nil
        rooms[room] = state
        await submit(room, .leftByUser)
        if state.bookmark?.autojoin == true { await publishBookmark(room, autojoin: false) }
        leave(room)
        return wasIn
    }

    private func leave(_ room: JID) {
        guard var state = rooms[room], state.phase != .out else { return }
        state.retry?.cancel()
        let nick: String = switch state.phase {
        case .joined(let n), .joining(let n): n
        case .out: ""
        }
        state.leaving = true
        rooms[room] = state
        if let occupant = try? room.with(resource: nick) { try? client.send(MUC.leavePresence(occupant: occupant)) }
    }

    /// Publishes the room's bookmark (XEP-0402; XEP-0048 private storage when the server has no PEP bookmarks).
    private func publishBookmark(_ room: JID, autojoin: Bool) async {
        let state = rooms[room]
        var bookmark = state?.bookmark ?? Bookmark(room: room, name: state?.name, nick: state?.nick ?? account.defaultNick)
        bookmark.autojoin = autojoin
        do {
            // Never without `max_items`: on a server whose bookmark node keeps one item that would drop the rest.
            _ = try await client.request(Bookmarks.publishRequest(bookmark))
        } catch {
            log.debug("\(jid): publishing the PEP bookmark of \(LogText.quote(room)) failed (\(LogText.quote(error))); writing private storage (XEP-0048)")
            do {
                var all = LegacyBookmarks.items(in: try await client.request(LegacyBookmarks.fetchRequest()))
                all.removeAll { $0.room == room }
                all.append(bookmark)
                _ = try await client.request(LegacyBookmarks.storeRequest(all))
            } catch {
                log.warning("\(jid): could not save the bookmark of \(LogText.quote(room)): \(LogText.quote(error))")
                return
            }
        }
        await setBookmark(bookmark, for: room)
    }

    /// Declines an invitation: mediated ones through the room (the inviter hears of it); all are marked declined.
    func decline(_ room: JID, inviter: JID?, mediated: Bool) async {
        if mediated { try? client.send(MUC.decline(room: room, inviter: inviter, reason: nil)) }
        // Committed before `roost rooms decline` returns: the invitation it answered is no longer pending when it says so.
        _ = await pipeline.commit([.invitationAnswered(account: jid.description, room: room.description, status: .declined,
                                                   timestamp: Timestamp.now())])
    }

    // MARK: - Self-ping and the rooms' archives

    /// Every `room_ping_seconds`: the bookmarks again (an older client writing XEP-0048 private storage is not
    /// announced by every server), then each joined room.
    private func pingAll() async {
        await loadBookmarks()
        for (room, state) in rooms where online {
            // A room waiting for its retry (refused, kicked) keeps waiting.
            if isWanted(state), state.phase == .out, state.retry == nil { startJoin(room) }
            if !isWanted(state), state.phase != .out { leave(room) }
        }
        for (room, state) in rooms {
            if case .joined = state.phase { await ping(room) }
        }
    }

    private func startPing(_ room: JID) {
        Task { await self.ping(room) }
    }

    /// XEP-0410: still in the room? Then read what its archive has that live delivery may have missed; if not, join again.
    private func ping(_ room: JID) async {
        guard online, case .joined(let nick) = rooms[room]?.phase, let occupant = try? room.with(resource: nick) else { return }
        let outcome: SelfPing.Outcome
        do {
            _ = try await client.request(SelfPing.request(to: occupant), timeout: .seconds(30))
            outcome = .joined
        } catch {
            if case .stanzaError(let e) = error { outcome = SelfPing.outcome(of: e) } else { outcome = .unknown }
        }
        guard rooms[room]?.phase == .joined(nick: nick) else { return }
        switch outcome {
        case .joined:
            log.debug("\(jid): self-ping: still in \(LogText.quote(room))")
            if rooms[room]?.mam == true { enqueueCatchUp(room) }
        case .notJoined:
            log.warning("\(jid): self-ping: \(LogText.quote(room)) no longer counts Roost as an occupant; joining again")
            rooms[room]?.phase = .out
            routes.set(room, nil)
            await submit(room, .left(error: "dropped by the room (noticed by self-ping)"))
            await join(room)
        case .unknown:
            log.debug("\(jid): self-ping of \(LogText.quote(room)) got no clear answer; asking again later")
        }
    }

    private func enqueueCatchUp(_ room: JID, afterJoin: Bool = false) {
        if afterJoin { catchUpsAfterJoin.insert(room) }
        if !catchUpQueue.contains(room) { catchUpQueue.append(room) }
        guard catchUpTask == nil else { return }
        // One room at a time: each catch-up keeps about one page unacknowledged on the server.
        catchUpTask = Task {
            while let next = self.nextCatchUp() { await self.catchUp(next) }
        }
    }

    private func nextCatchUp() -> JID? {
        guard !catchUpQueue.isEmpty, online else {
            catchUpTask = nil
            return nil
        }
        return catchUpQueue.removeFirst()
    }

    private func catchUp(_ room: JID) async {
        let afterJoin = catchUpsAfterJoin.remove(room) != nil
        guard case .joined = rooms[room]?.phase, rooms[room]?.mam == true, let state = rooms[room] else { return }
        let run = ArchiveCatchUp(client: client, archive: room, log: log, commits: commits)
        do {
            let summary = try await run.run(from: state.mark, lastTimestamp: state.markTimestamp, progress: state.mark == nil) { mark in
                await self.advanceMark(room, to: mark)
            }
            if !summary.late.isEmpty { notifications.post(.catchUpFinished(account: jid.description, messages: summary.late)) }
            // Always after a join (what a join missed is known then, even when nothing); after a self-ping only with news.
            if summary.inserted > 0 || afterJoin {
                log.info("\(jid): \(LogText.quote(room)): archive read (\(summary.pages) \(summary.pages == 1 ? "page" : "pages")): \(summary.inserted) new \(summary.inserted == 1 ? "message" : "messages")")
            }
        } catch {
            // A stop or a dropped link ended the query: nothing failed, the next join reads on from the mark.
            guard client.isConnected else {
                log.debug("\(jid): reading the archive of \(LogText.quote(room)) ended with the connection: \(LogText.quote(error))")
                return
            }
            log.warning("\(jid): reading the archive of \(LogText.quote(room)) failed: \(LogText.quote(error)); trying again at the next self-ping")
        }
    }

    private func advanceMark(_ room: JID, to mark: ArchiveCatchUp.Mark) {
        rooms[room]?.mark = mark.id
        if let timestamp = mark.timestamp {
            let newest = max(rooms[room]?.markTimestamp ?? timestamp, timestamp)
            rooms[room]?.markTimestamp = newest
        }
    }

    // MARK: - For the CLI and status

    struct Summary: Sendable, Codable, Equatable {
        var room: String
        var name: String?
        var nick: String?
        var state: String
        var bookmarked: Bool
        var autojoin: Bool
        var wanted: Bool
        var mam: Bool?
        var lastError: String?
    }

    func summaries() -> [Summary] {
        rooms.values.sorted { $0.jid < $1.jid }.map { room in
            let state: String = switch room.phase {
            case .out: "out"
            case .joining: "joining"
            case .joined: "joined"
            }
            let nick: String? = switch room.phase {
            case .joined(let n), .joining(let n): n
            case .out: room.nick
            }
            return Summary(room: room.jid.description, name: room.name ?? room.bookmark?.name, nick: nick, state: state,
                           bookmarked: room.bookmark != nil, autojoin: room.bookmark?.autojoin == true, wanted: isWanted(room),
                           mam: room.mam, lastError: room.lastError)
        }
    }

    /// The real bare JIDs of a room's other occupants, where the room shows them (whom an encrypted message is for).
    nonisolated func members(of room: JID) -> [JID] {
        Set(routes.current[room]?.occupants.values.map(\.bare) ?? []).subtracting([jid.bare]).sorted { $0.description < $1.description }
    }

    /// Roost's occupant JID in a joined room (where `roost send ROOM` goes as group chat).

    func occupant(in room: JID) -> JID? {
        guard case .joined(let nick) = rooms[room]?.phase else { return nil }
        return try? room.with(resource: nick)
    }

    var joinedCount: Int { rooms.values.filter { if case .joined = $0.phase { true } else { false } }.count }

    private func submit(_ room: JID, _ change: RoomUpdate.Change) async {
        await pipeline.submit([.room(RoomUpdate(account: jid.description, room: room.description, change: change,
                                                timestamp: Timestamp.now()))])
    }
}

/// The rooms the router accepts traffic from, shared between the room manager (which writes) and the
/// session's routing (which reads a snapshot before each stanza); and every room the account knows, joined or not
/// (`RoutingContext.knownRooms`).
final class RoomRoutes: Sendable {
    private let routes = Mutex<[JID: RoomRoute]>([:])
    private let known = Mutex<Set<JID>>([])

    var current: [JID: RoomRoute] { routes.withLock { $0 } }

    var knownRooms: Set<JID> { known.withLock { $0 } }

    func know(_ rooms: some Sequence<JID>) { known.withLock { $0.formUnion(rooms) } }

    func set(_ room: JID, _ route: RoomRoute?) {
        if route != nil { know([room]) }
        routes.withLock { $0[room] = route }
    }

    func update(_ room: JID, _ body: (inout RoomRoute?) -> Void) { routes.withLock { body(&$0[room]) } }

    func removeAll() { routes.withLock { $0.removeAll() } }
}
