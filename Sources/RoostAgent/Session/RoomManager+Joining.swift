import RoostCore
import Foundation
import RoostArchive
import RoostNotify
import RoostXMPP

/// Joining a room (disco, password, nick conflicts, timeouts, rejoining after a drop) and leaving it.
extension RoomManager {
    // MARK: - Joining

    func startJoin(_ room: JID) {
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
        await writer.submit([.invitationAnswered(account: jid.description, room: room.description, status: .accepted,
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

    func join(_ room: JID) async {
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

    func joinTimedOut(_ room: JID, nick: String) {
        guard rooms[room]?.phase == .joining(nick: nick) else { return }
        rooms[room]?.phase = .out
        routes.set(room, nil)
        log.warning("\(jid): \(LogText.quote(room)) did not answer the join within \(Int(Self.joinTimeout / .seconds(1))) s; trying again later")
        finishWaiters(room, .failed("the room did not answer"))
        scheduleRejoin(room)
    }

    func joined(_ room: JID, nick: String, occupantID: String?, codes: Set<Int>) async {
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

    func left(_ room: JID, nick: String, codes: Set<Int>, reason: String?, newNick: String?, destroyed: Bool) async {
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

    func joinFailed(_ room: JID, nick: String, error: StanzaError) async {
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

    func scheduleRejoin(_ room: JID, after fixed: Duration? = nil) {
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

    func retryJoin(_ room: JID) async {
        rooms[room]?.retry = nil
        await join(room)
    }

    func finishWaiters(_ room: JID, _ result: JoinResult) {
        for waiter in rooms[room]?.waiters ?? [] { waiter.fulfil(result) }
        rooms[room]?.waiters.removeAll()
    }

    /// The join password: the config's, the `roost rooms join --password-command`, the bookmark's, an
    /// invitation's; and where it came from (stored — never the password).
    func password(for room: Room) async -> (String?, String?) {
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

    func newestStoredMessage(in room: JID) -> Int64? {
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

    func leave(_ room: JID) {
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
    func publishBookmark(_ room: JID, autojoin: Bool) async {
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
        _ = await writer.commit([.invitationAnswered(account: jid.description, room: room.description, status: .declined,
                                                   timestamp: Timestamp.now())])
    }
}
