import Foundation
import RoostArchive
import RoostXMPP
import Synchronization

/// XEP-0313 catch-up: pages through the account's server archive from the last id the local archive is
/// known complete up to, until the server says `complete`. No cap on count or age.
///
/// The mark only advances through catch-up pages, never through live messages: a live message proves
/// nothing about the messages before it (they may have gone to offline storage while Roost, at priority
/// -1, was not offered them), so each catch-up re-reads from the mark and dedup drops what is already here.
/// The pages themselves reach the archive through the session's event stream (`ArchivePageRouter`), in
/// stream order with live traffic, so the stream-management count persisted with them stays exact.
struct ArchiveCatchUp {
    let client: XMPPClient
    let account: JID
    let log: Logger
    var pageSize = 250
    /// When the server no longer knows the mark (`item-not-found`), re-read this far before the newest stored message.
    var fallbackWindow: Int64 = 7 * 24 * 3600 * 1000

    struct Summary: Sendable {
        var pages = 0
        var lastID: String?
    }

    func run(from mark: String?, lastTimestamp: Int64?, progress: Bool) async throws(ClientError) -> Summary {
        var summary = Summary(lastID: mark)
        var after = mark
        var start: String?
        while true {
            let queryID = StanzaID.make()
            let fin: IQ
            do {
                fin = try await client.queryArchive(MAM.query(queryID: queryID, afterID: after, start: start, pageSize: pageSize), queryID: queryID)
            } catch {
                guard case .stanzaError(let e) = error, e.condition == "item-not-found", after != nil else { throw error }
                let since = max(0, (lastTimestamp ?? 0) - fallbackWindow)
                log.warning("\(account): the server no longer knows archive id \(after ?? ""); re-reading from \(XMPPDateTime.format(milliseconds: since))")
                after = nil
                start = XMPPDateTime.format(milliseconds: since)
                continue
            }
            let result = MAM.fin(in: fin)
            summary.pages += 1
            if progress, let count = result?.count, count > pageSize {
                log.info("\(account): reading the server archive: page \(summary.pages) of about \((count + pageSize - 1) / pageSize)")
            }
            summary.lastID = result?.last ?? summary.lastID
            guard let result, !result.complete, let next = result.last else { break }
            after = next
            start = nil
        }
        return summary
    }
}

/// Turns one archive page into archive events: each result is accepted only from the account's own
/// archive and for the page's query id (CVE-2019-16237 class); the page's last id becomes the new mark.
enum ArchivePageRouter {
    static func events(for page: ArchivePage, context: RoutingContext, now: Int64) -> (events: [ArchiveEvent], accepted: Int, rejected: Int) {
        let account = context.account
        var events: [ArchiveEvent] = []
        var accepted = 0
        var rejected = 0
        var newest: Int64?
        for element in page.results {
            guard let result = MAM.result(in: Message(element), archive: account), result.queryID == page.queryID else {
                rejected += 1
                continue
            }
            accepted += 1
            let inner = result.message
            let outgoing = inner.from?.bare == account.bare
            let records = StanzaRouter.records(for: inner, direction: outgoing ? .outgoing : .incoming, source: .mam, context: context,
                                               now: now, stanzaIDSource: inner, archiveID: result.archiveID)
            for case .message(let m) in records { newest = max(newest ?? m.timestamp, m.timestamp) }
            events.append(contentsOf: records)
        }
        if page.fin.type == .result, let last = MAM.fin(in: page.fin)?.last {
            events.append(.syncState(SyncStateRecord(account: account.description, lastStanzaId: last, lastTimestamp: newest)))
        }
        return (events, accepted, rejected)
    }
}

/// Counts inserts reported by pipeline completions (which run on the pipeline thread).
final class InsertCounter: Sendable {
    private let count = Mutex<Int>(0)
    func add(_ n: Int) { count.withLock { $0 += n } }
    var value: Int { count.withLock { $0 } }
}
