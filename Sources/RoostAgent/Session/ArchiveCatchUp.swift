import RoostCore
import Foundation
import RoostArchive
import RoostNotify
import RoostXMPP
import Synchronization

/// XEP-0313 catch-up: pages through a server archive (the account's, or a room's) from the last id the
/// local archive is known complete up to, until the server says `complete`. No cap on count or age.
///
/// The mark only advances through catch-up pages, never through live messages: a live message proves
/// nothing about the messages before it (they may have gone to offline storage while Roost, at priority
/// -1, was not offered them), so each catch-up re-reads from the mark and dedup drops what is already here.
/// The pages themselves reach the archive through the session's event stream (`ArchivePageRouter`), in
/// stream order with live traffic, so the stream-management count persisted with them stays exact; the
/// next page is asked for only once the previous one is committed, which paces the server.
struct ArchiveCatchUp {
    let client: XMPPClient
    /// Whose archive: the account's bare JID, or a room.
    let archive: JID
    let log: Logger
    let commits: PageCommits
    var pageSize = 250
    /// When the server no longer knows the mark (`item-not-found`), re-read this far before the newest stored message.
    var fallbackWindow: Int64 = 7 * 24 * 3600 * 1000

    struct Summary: Sendable {
        var pages = 0
        var inserted = 0
        /// New incoming messages of a room's archive, for its one catch-up summary (the account's go to the backlog).
        var late: [IncomingMessage] = []
    }

    /// Where the local archive is complete up to, once a page carrying it has committed.
    struct Mark: Sendable {
        var id: String
        var timestamp: Int64?
    }

    /// - Parameter committed: called after each committed page that moved the mark.
    func run(from mark: String?, lastTimestamp: Int64?, progress: Bool,
             committed: @Sendable (Mark) async -> Void) async throws(ClientError) -> Summary {
        var summary = Summary()
        var after = mark
        var start: String?
        let isOwnArchive = archive == client.configuration.jid.bare
        while true {
            let queryID = StanzaID.make()
            let settled = commits.expect(queryID, archive: archive)
            let fin: IQ
            do {
                fin = try await client.queryArchive(MAM.query(queryID: queryID, afterID: after, start: start, pageSize: pageSize,
                                                              to: isOwnArchive ? nil : archive), queryID: queryID)
            } catch {
                commits.forget(queryID)
                guard case .stanzaError(let e) = error, e.condition == "item-not-found", after != nil else { throw error }
                let since = max(0, (lastTimestamp ?? 0) - fallbackWindow)
                log.warning("\(archive): the server no longer knows archive id \(LogText.quote(after ?? "")); re-reading from \(XMPPDateTime.format(milliseconds: since))")
                after = nil
                start = XMPPDateTime.format(milliseconds: since)
                continue
            }
            // The page went into the event stream before the answer; wait until the archive has it.
            guard case .committed(let inserted, let newest, let late) = await settled.value else {
                throw .disconnected("the archive stopped before the server archive page was stored")
            }
            let result = MAM.fin(in: fin)
            summary.pages += 1
            summary.inserted += inserted
            summary.late += late
            if let last = result?.last { await committed(Mark(id: last, timestamp: newest)) }
            if progress, let count = result?.count, count > pageSize {
                let pages = (count + pageSize - 1) / pageSize
                let percent = min(99, summary.pages * 100 / pages)
                log.progress("\(archive): reading the server archive: \(percent)% (page \(summary.pages) of about \(pages))",
                             milestone: summary.pages == 1 || summary.pages % max(1, pages / 10) == 0)
            }
            guard let result, !result.complete, let next = result.last else { break }
            after = next
            start = nil
        }
        return summary
    }
}

/// What the catch-up waits for: each page's commit, settled by the session when the archive writer's message
/// about the page arrives.
/// It also knows which archive each open query reads (the account's, or a room's), so a page is checked
/// against the archive it was asked of.
final class PageCommits: Sendable {
    enum Settled: Sendable {
        /// Stored: how many new messages, the newest message time of the page, and (rooms) its new incoming messages.
        case committed(inserted: Int, newest: Int64?, late: [IncomingMessage])
        case abandoned
    }

    private let waiting = Mutex<[String: (archive: JID, shot: OneShot<Settled>)]>([:])

    func expect(_ queryID: String, archive: JID) -> OneShot<Settled> {
        let shot = OneShot<Settled>()
        waiting.withLock { $0[queryID] = (archive, shot) }
        return shot
    }

    /// The archive an open query reads; nil for a query id nobody asked.
    func archive(of queryID: String) -> JID? {
        waiting.withLock { $0[queryID]?.archive }
    }

    func forget(_ queryID: String) {
        _ = waiting.withLock { $0.removeValue(forKey: queryID) }
    }

    func settle(_ queryID: String, _ outcome: Settled) {
        waiting.withLock { $0.removeValue(forKey: queryID) }?.shot.fulfil(outcome)
    }
}

/// Turns one archive page into archive events: each result is accepted only from the archive queried and
/// for the page's query id (CVE-2019-16237 class); the page's last id becomes the new mark, in the same
/// transaction. A room's archive (`archive` ≠ the account) must answer from the room's JID itself, and each
/// result must be a message of that room; its results are group chat messages with the room's ids.
enum ArchivePageRouter {
    struct Routed {
        var events: [ArchiveEvent] = []
        var newest: Int64?
        var rejected = 0
        /// Indexes of group chat messages that mention the user.
        var mentions: Set<Int> = []
        /// The page read a room Roost is no longer in: nothing of it was stored, and its mark must not move.
        var roomGone = false
        /// Invitations found in the account's archive (the server archives them; Roost, at priority -1, is
        /// not offered those sent to the bare JID): the event index of each, with what the room manager hears.
        var invitations: [(eventIndex: Int, note: RoomNote)] = []
    }

    static func events(for page: ArchivePage, archive: JID, context: RoutingContext, now: Int64) -> Routed {
        let account = context.account
        let isRoom = archive.bare != account.bare
        var routed = Routed()
        let room = isRoom ? context.rooms[archive.bare] : nil
        if isRoom && room == nil {
            routed.roomGone = true
            return routed
        }
        for element in page.results {
            guard let result = MAM.result(in: Message(element), archive: archive, fromRequired: isRoom), result.queryID == page.queryID else {
                routed.rejected += 1
                continue
            }
            let inner = result.message
            let records: [ArchiveEvent]
            if let room {
                guard inner.from?.bare == archive.bare else {
                    routed.rejected += 1
                    continue
                }
                records = RoomRouter.groupchatRecords(inner, room: room, source: .mam, context: context, now: now,
                                                      archiveID: result.archiveID, stamp: result.stamp)
                for (offset, event) in records.enumerated() {
                    if case .message(let m) = event, m.direction == .incoming, RoomRouter.mentions(inner, body: m.body, room: room, account: account) {
                        routed.mentions.insert(routed.events.count + offset)
                    }
                }
            } else {
                switch accountResult(result, context: context, now: now) {
                case .invitation(let outcome):
                    routed.invitations += outcome.notes.compactMap { if case .room(let note) = $0 { (routed.events.count, note) } else { nil } }
                    records = outcome.events
                case .messages(let events):
                    records = events
                }
            }
            for case .message(let m) in records { routed.newest = max(routed.newest ?? m.timestamp, m.timestamp) }
            routed.events.append(contentsOf: records)
        }
        if page.fin.type == .result, let last = MAM.fin(in: page.fin)?.last {
            if isRoom {
                routed.events.append(.room(RoomUpdate(account: account.description, room: archive.bare.description,
                                                      change: .mark(id: last, timestamp: routed.newest), timestamp: now)))
            } else {
                routed.events.append(.syncState(SyncStateRecord(account: account.description, lastStanzaId: last, lastTimestamp: routed.newest)))
            }
        }
        return routed
    }

    /// What one result of the account's own archive is.
    enum AccountResult {
        /// A room invitation (XEP-0249 direct or XEP-0045 mediated), as live routing handles it: its
        /// `.invitation` record, and what the room manager and the notifications hear.
        case invitation(StanzaRouter.Outcome)
        /// The records Roost stores of any other message (none for receipts, chat states and the like).
        case messages([ArchiveEvent])
    }

    /// The one place that decides what a result of the account's own archive is: catch-up stores what it says and
    /// `roost verify` compares (and repairs) by it. The server archives invitations as messages (Roost, at
    /// priority -1, is not offered those sent to the bare JID, so catch-up is where it learns of them); they are
    /// invitations here, never chat messages. `result` must be the account's (`MAM.result(in:archive:)` checked it).
    static func accountResult(_ result: MAM.Result, context: RoutingContext, now: Int64) -> AccountResult {
        let account = context.account
        let inner = result.message
        if inner.from?.bare != account.bare, let invitation = MUC.mediatedInvitation(in: inner) ?? DirectInvitation.invitation(in: inner) {
            let time = MessageTime(inner, serverStamp: result.stamp, account: account, receivedAt: now, offlineDelivery: false)
            return .invitation(RoomRouter.invitation(invitation, message: inner, context: context, now: time.timestamp))
        }
        let outgoing = inner.from?.bare == account.bare
        return .messages(StanzaRouter.records(for: inner, direction: outgoing ? .outgoing : .incoming, source: .mam, context: context,
                                              now: now, stanzaIDSource: inner, archiveID: result.archiveID, stamp: result.stamp))
    }
}
