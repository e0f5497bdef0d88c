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
/// writer like the rest; messages are acknowledged after commit by the session, as always.
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

    let client: XMPPClient
    let account: AccountConfig
    let jid: JID
    let writer: ArchiveWriter
    let log: Logger
    let commits: PageCommits
    let notifications: NotificationHub
    let pingInterval: Duration
    let archivePath: String
    var rooms: [JID: Room] = [:]
    var online = false
    var bookmarksLoaded = false
    var bookmarksReported = false
    var pingTask: Task<Void, Never>?
    var catchUpQueue: [JID] = []
    /// Rooms whose next catch-up follows a join: its summary is logged even when it found nothing.
    var catchUpsAfterJoin: Set<JID> = []
    var catchUpTask: Task<Void, Never>?

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
        /// When a read of the room's archive last completed in this run (UTC milliseconds; `roost rooms --json`).
        var archiveRead: Int64?
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

    init(account: AccountConfig, jid: JID, client: XMPPClient, writer: ArchiveWriter, log: Logger, commits: PageCommits,
         notifications: NotificationHub, pingInterval: Duration, archivePath: String) {
        self.account = account
        self.jid = jid
        self.client = client
        self.writer = writer
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

    func isWanted(_ room: Room) -> Bool {
        guard !account.excludedRooms.contains(room.jid.description) else { return false }
        return room.configured != nil || room.joinedByUser || room.bookmark?.autojoin == true
    }

    /// The nick to ask for: the remembered one while it still grows from the wanted one (a suffix after a
    /// conflict), else the config's, the bookmark's or the account's.
    func nick(for room: Room) -> String {
        let wanted = wantedNick(room)
        if let remembered = room.nick, remembered.hasPrefix(wanted) { return remembered }
        return wanted
    }

    func wantedNick(_ room: Room) -> String {
        room.configured?.nick ?? room.requestedNick ?? room.bookmark?.nick ?? account.defaultNick
    }

    func loadBookmarks() async {
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

    func setBookmark(_ bookmark: Bookmark?, for room: JID) async {
        rooms[room, default: Room(jid: room)].bookmark = bookmark
        routes.know([room])
        if let name = bookmark?.name { rooms[room]?.name = name }
        await submit(room, .bookmark(present: bookmark != nil, name: bookmark?.name, nick: bookmark?.nick,
                                     autojoin: bookmark?.autojoin ?? false, hasPassword: bookmark?.password != nil))
    }

    /// Another client changed the bookmarks: join a room newly marked autojoin, leave one no longer wanted.
    func bookmarksChanged(_ changes: [Bookmarks.Change]) async {
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

    func invited(_ invitation: Invitation, fromContact: Bool) async {
        let room = invitation.room
        if let password = invitation.password { rooms[room, default: Room(jid: room)].invitationPassword = password }
        guard account.acceptInvitations == .contacts, fromContact, invitation.kind == .direct else { return }
        guard !account.excludedRooms.contains(room.description) else { return }
        log.info("\(jid): joining \(LogText.quote(room)): invited by the contact \(LogText.quote(invitation.inviter?.bare.description ?? "?")) (accept_invitations = contacts)")
        _ = await join(room, nick: nil, passwordCommand: nil, bookmark: false, waitFor: nil)
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
        var archiveRead: Int64?
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
                           mam: room.mam, lastError: room.lastError, archiveRead: room.archiveRead)
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

    func submit(_ room: JID, _ change: RoomUpdate.Change) async {
        await writer.submit([.room(RoomUpdate(account: jid.description, room: room.description, change: change,
                                                timestamp: Timestamp.now()))])
    }
}

/// The rooms the router accepts traffic from, shared between the room manager (which writes) and the
/// session's routing (which reads a snapshot before each stanza); and every room the account knows, joined or not
/// (`RoutingContext.knownRooms`).
final class RoomRoutes: Sendable {
    let routes = Mutex<[JID: RoomRoute]>([:])
    let known = Mutex<Set<JID>>([])

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
