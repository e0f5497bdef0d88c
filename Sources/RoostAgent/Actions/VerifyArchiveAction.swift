import Foundation
import RoostArchive
import RoostXMPP

/// `roost verify`: pages through the account's whole server archive (XEP-0313) and compares it with the
/// local archive; with `repair`, archives what is missing exactly as the agent's catch-up would.
///
/// It always logs in itself, on a resource of its own (`<resource>-verify-XXXX`, no presence, no stream
/// management), even while the agent runs: it must read the archive pages from the client's event stream,
/// which in the agent belongs to the account's session. Repairs go through the same ingest pipeline and
/// dedup rules, so racing the agent stores nothing twice.
public struct VerifyArchiveAction: Sendable {
    public var repair: Bool
    public var pageSize: Int

    public init(repair: Bool, pageSize: Int = 250) {
        self.repair = repair
        self.pageSize = pageSize
    }

    /// A server message Roost would store: its archive id, time, and the record catch-up would build.
    struct ServerEntry {
        var id: String
        var timestamp: Int64
    }

    public func run(account: AccountConfig, config: RoostConfig, log: Logger) async throws(ActionFailure) -> VerifyReport {
        let client = try await OneShotLogin.quietLogin(account: account, config: config, resourceTag: "verify", log: log)
        let configuration = client.configuration
        let mailbox = ArchivePageMailbox()
        let consumer = Task {
            for await event in client.events {
                switch event {
                case .archivePage(let page): await mailbox.deliver(page)
                case .disconnected: await mailbox.close()
                case .stanza, .resumptionState, .connected, .acknowledged, .unconfirmed: continue
                }
            }
            await mailbox.close()
        }
        defer { consumer.cancel() }
        let result: Result<VerifyReport, ActionFailure>
        do { result = .success(try await verify(client: client, account: configuration.jid.bare, mailbox: mailbox, config: config, log: log)) } catch {
            result = .failure(error)
        }
        await client.disconnect()
        return try result.get()
    }

    private func verify(client: XMPPClient, account: JID, mailbox: ArchivePageMailbox, config: RoostConfig,
                        log: Logger) async throws(ActionFailure) -> VerifyReport {
        let started = ActionArchive.now()
        var report = VerifyReport(account: account.description)
        let before = try localIDs(config: config, account: account)
        let context = routingContext(config: config, account: account)
        var entries: [ServerEntry] = []
        // Only records of messages not already here are kept: a full history would not fit in memory as records.
        var candidates: [String: MessageRecord] = [:]
        var after: String?
        var pages = 0
        while true {
            let queryID = StanzaID.make()
            let fin: IQ
            do {
                fin = try await client.queryArchive(MAM.query(queryID: queryID, afterID: after, pageSize: pageSize), queryID: queryID)
            } catch {
                throw ActionFailure.from(error, doing: "reading the server archive of \(account)")
            }
            guard let page = await mailbox.take(queryID) else {
                throw ActionFailure(.connection, "the connection ended while reading the server archive of \(account)")
            }
            pages += 1
            for element in page.results {
                guard let result = MAM.result(in: Message(element), archive: account), result.queryID == queryID else {
                    report.rejected += 1
                    continue
                }
                report.serverMessages += 1
                let inner = result.message
                let direction: MessageDirection = inner.from?.bare == account ? .outgoing : .incoming
                let records = StanzaRouter.records(for: inner, direction: direction, source: .mam, context: context, now: started,
                                                   stanzaIDSource: inner, archiveID: result.archiveID,
                                                   stamp: result.stamp)
                guard let record = records.lazy.compactMap({ event -> MessageRecord? in
                    if case .message(let m) = event { return m } else { return nil }
                }).first else { continue }
                report.serverStorable += 1
                entries.append(ServerEntry(id: result.archiveID, timestamp: record.timestamp))
                if before[result.archiveID] == nil { candidates[result.archiveID] = record }
            }
            if pages % 40 == 0 { log.info("\(account): verify read \(report.serverMessages) server messages so far") }
            let answer = MAM.fin(in: fin)
            guard let answer, !answer.complete, let next = answer.last, next != after else { break }
            after = next
        }

        // Read again: the agent may have stored some candidates while the server was being paged.
        var local = try localIDs(config: config, account: account)
        var absent = candidates.filter { local[$0.key] == nil }
        if repair, !absent.isEmpty {
            report.repaired = try await store(entries.compactMap { absent[$0.id] }, config: config, log: log)
            local = try localIDs(config: config, account: account)
            absent = absent.filter { local[$0.key] == nil }
        }
        if !absent.isEmpty, let reader = try reader(config: config) {
            for (id, record) in absent {
                if (try? reader.hasUnlinkedCopy(of: record)) == true {
                    report.unlinked += 1
                    absent[id] = nil
                }
            }
        }
        report.localTrusted = local.count
        report.missing = absent.count
        report.missingRanges = Self.ranges(of: Set(absent.keys), in: entries)
        let onServer = Set(entries.map(\.id))
        let orphans = local.values.filter { !onServer.contains($0.stanzaId) && $0.receivedAt < started }.sorted { $0.timestamp < $1.timestamp }
        report.orphans = orphans.count
        report.orphanSample = orphans.prefix(10).map(\.stanzaId)
        if let reader = try reader(config: config) {
            do {
                report.duplicateStanzaIds = try reader.duplicateTrustedStanzaIDs(account: account.description).map(Self.duplicate)
                report.duplicateFallbackKeys = try reader.duplicateFallbackKeys(account: account.description).map(Self.duplicate)
            } catch {
                throw ActionFailure(.internalError, "could not read the archive \(config.archivePath): \(error)")
            }
        }
        return report
    }

    /// Archives the records in server order through the agent's ingest pipeline; returns how many rows were
    /// added or linked to their server id.
    private func store(_ records: [MessageRecord], config: RoostConfig, log: Logger) async throws(ActionFailure) -> Int {
        let writer: ArchiveWriter
        do { writer = try ArchiveWriter(path: config.archivePath, durability: .full) } catch {
            throw ActionFailure(.internalError, "could not open the archive \(config.archivePath): \(error)")
        }
        let pipeline = IngestPipeline(writer: writer, log: log)
        let archive = ActionArchive(pipeline: pipeline)
        var failure: ActionFailure?
        for start in stride(from: 0, to: records.count, by: 200) {
            do { try await archive.record(records[start..<min(start + 200, records.count)].map { .message($0) }) } catch {
                failure = error
                break
            }
        }
        await pipeline.drainAndStop()
        if let failure { throw failure }
        return records.count
    }

    private func reader(config: RoostConfig) throws(ActionFailure) -> ArchiveReader? {
        guard FileManager.default.fileExists(atPath: config.archivePath) else { return nil }
        do { return try ArchiveReader(path: config.archivePath) } catch {
            throw ActionFailure(.internalError, "could not read the archive \(config.archivePath): \(error)")
        }
    }

    private func localIDs(config: RoostConfig, account: JID) throws(ActionFailure) -> [String: LocalStanzaID] {
        guard let reader = try reader(config: config) else { return [:] }
        do {
            return Dictionary(try reader.trustedStanzaIDs(account: account.description).map { ($0.stanzaId, $0) }) { first, _ in first }
        } catch {
            throw ActionFailure(.internalError, "could not read the archive \(config.archivePath): \(error)")
        }
    }

    /// Display names as the agent would use them, from the roster stored in the archive.
    private func routingContext(config: RoostConfig, account: JID) -> RoutingContext {
        var names: [JID: String] = [:]
        if let reader = try? reader(config: config), let contacts = try? reader.contacts(account: account.description) {
            for contact in contacts {
                if let name = contact.name, let jid = JID(parsing: contact.jid) { names[jid] = name }
            }
        }
        return RoutingContext(account: account, trustsOwnStanzaIDs: true, displayNames: names)
    }

    static func ranges(of missing: Set<String>, in entries: [ServerEntry]) -> [VerifyRange] {
        var ranges: [VerifyRange] = []
        var open: VerifyRange?
        for entry in entries {
            if missing.contains(entry.id) {
                if var range = open {
                    range.count += 1
                    range.lastId = entry.id
                    range.lastTimestamp = entry.timestamp
                    open = range
                } else {
                    open = VerifyRange(count: 1, firstId: entry.id, lastId: entry.id, firstTimestamp: entry.timestamp, lastTimestamp: entry.timestamp)
                }
            } else if let range = open {
                ranges.append(range)
                open = nil
            }
        }
        if let open { ranges.append(open) }
        return ranges
    }

    static func duplicate(_ group: DuplicateGroup) -> VerifyReport.Duplicate {
        VerifyReport.Duplicate(key: group.key, rowIds: group.rowIds)
    }
}
