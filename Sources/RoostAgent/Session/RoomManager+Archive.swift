import RoostCore
import Foundation
import RoostArchive
import RoostNotify
import RoostXMPP

/// Each joined room self-pinged (XEP-0410) every `room_ping_seconds`, and its own archive (XEP-0313 on the room
/// JID) read from its mark, one room at a time.
extension RoomManager {
    // MARK: - Self-ping and the rooms' archives

    /// Every `room_ping_seconds`: the bookmarks again (an older client writing XEP-0048 private storage is not
    /// announced by every server), then each joined room.
    func pingAll() async {
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

    func startPing(_ room: JID) {
        Task { await self.ping(room) }
    }

    /// XEP-0410: still in the room? Then read what its archive has that live delivery may have missed; if not, join again.
    func ping(_ room: JID) async {
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

    func enqueueCatchUp(_ room: JID, afterJoin: Bool = false) {
        if afterJoin { catchUpsAfterJoin.insert(room) }
        if !catchUpQueue.contains(room) { catchUpQueue.append(room) }
        guard catchUpTask == nil else { return }
        // One room at a time: each catch-up keeps about one page unacknowledged on the server.
        catchUpTask = Task {
            while let next = self.nextCatchUp() { await self.catchUp(next) }
        }
    }

    func nextCatchUp() -> JID? {
        guard !catchUpQueue.isEmpty, online else {
            catchUpTask = nil
            return nil
        }
        return catchUpQueue.removeFirst()
    }

    func catchUp(_ room: JID) async {
        let afterJoin = catchUpsAfterJoin.remove(room) != nil
        guard case .joined = rooms[room]?.phase, rooms[room]?.mam == true, let state = rooms[room] else { return }
        let run = ArchiveCatchUp(client: client, archive: room, log: log, commits: commits)
        do {
            let summary = try await run.run(from: state.mark, lastTimestamp: state.markTimestamp, progress: state.mark == nil) { mark in
                await self.advanceMark(room, to: mark)
            }
            if !summary.late.isEmpty { notifications.post(.catchUpFinished(account: jid.description, messages: summary.late)) }
            rooms[room]?.archiveRead = Timestamp.now()
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

    func advanceMark(_ room: JID, to mark: ArchiveCatchUp.Mark) {
        rooms[room]?.mark = mark.id
        if let timestamp = mark.timestamp {
            let newest = max(rooms[room]?.markTimestamp ?? timestamp, timestamp)
            rooms[room]?.markTimestamp = newest
        }
    }
}
