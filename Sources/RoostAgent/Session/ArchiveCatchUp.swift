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
struct ArchiveCatchUp {
    let client: XMPPClient
    let account: JID
    let pipeline: IngestPipeline
    let log: Logger
    var pageSize = 250
    /// When the server no longer knows the mark (`item-not-found`), re-read this far before the newest stored message.
    var fallbackWindow: Int64 = 7 * 24 * 3600 * 1000

    struct Summary: Sendable {
        var pages = 0
        var received = 0
        var inserted = 0
        var lastID: String?
    }

    func run(from mark: String?, lastTimestamp: Int64?, context: RoutingContext, progress: Bool) async throws(ClientError) -> Summary {
        var summary = Summary(lastID: mark)
        var after = mark
        var start: String?
        let counter = InsertCounter()
        while true {
            let queryID = StanzaID.make()
            let page: (results: [InboundStanza], fin: IQ)
            do {
                page = try await client.queryArchive(MAM.query(queryID: queryID, afterID: after, start: start, pageSize: pageSize), queryID: queryID)
            } catch .stanzaError(let error) where error.condition == "item-not-found" && after != nil {
                let since = (lastTimestamp ?? 0) - fallbackWindow
                log.warning("\(account): the server no longer knows archive id \(after ?? ""); re-reading from \(XMPPDateTime.format(milliseconds: since))")
                after = nil
                start = XMPPDateTime.format(milliseconds: max(0, since))
                continue
            }
            let fin = MAM.fin(in: page.fin)
            var events: [ArchiveEvent] = []
            var sequences: [UInt64] = []
            var newestTimestamp: Int64?
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            for stanza in page.results {
                sequences.append(stanza.sequence)
                guard let result = MAM.result(in: Message(stanza.element), archive: account), result.queryID == queryID else {
                    log.debug("\(account): ignored an archive result that is not from the account's own archive or query")
                    continue
                }
                let inner = result.message
                let outgoing = inner.from?.bare == account.bare
                let records = StanzaRouter.records(for: inner, direction: outgoing ? .outgoing : .incoming, source: .mam, context: context,
                                                   now: now, stanzaIDSource: inner, archiveID: result.archiveID)
                for case .message(let m) in records { newestTimestamp = max(newestTimestamp ?? m.timestamp, m.timestamp) }
                events.append(contentsOf: records)
            }
            summary.pages += 1
            summary.received += page.results.count
            let last = fin?.last ?? after
            if let last {
                events.append(.syncState(SyncStateRecord(account: account.description, lastStanzaId: last, lastTimestamp: newestTimestamp)))
            }
            let client = self.client
            let handled = sequences
            pipeline.submit(events) { result in
                if case .success(let outcomes) = result {
                    counter.add(outcomes.reduce(0) { if case .inserted = $1 { $0 + 1 } else { $0 } })
                    for sequence in handled { client.acknowledge(sequence) }
                }
            }
            if progress {
                log.info("\(account): catching up from the server archive: \(summary.received) messages read\(fin?.count.map { " of \($0)" } ?? "")")
            }
            summary.lastID = last
            guard let fin, !fin.complete, !page.results.isEmpty, let next = fin.last else { break }
            after = next
            start = nil
        }
        await pipeline.flush()
        summary.inserted = counter.value
        return summary
    }
}

/// Counts inserts reported by pipeline completions (which run on the pipeline thread).
final class InsertCounter: Sendable {
    private let count = Mutex<Int>(0)
    func add(_ n: Int) { count.withLock { $0 += n } }
    var value: Int { count.withLock { $0 } }
}
