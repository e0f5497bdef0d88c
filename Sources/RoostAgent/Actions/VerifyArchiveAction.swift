public import RoostCore
import Foundation
import RoostArchive
import RoostXMPP

/// `roost verify`: pages through the account's whole server archive (XEP-0313) and compares it with the
/// local archive; with `repair`, archives what is missing exactly as the agent's catch-up would. Each result is
/// read as catch-up reads it (`ArchivePageRouter.accountResult`): room invitations, which the server archives as
/// messages, are compared with the archive's invitations, not its messages.
///
/// It always logs in itself, on a resource of its own (`<resource>-verify-XXXX`, no presence, no stream
/// management), even while the agent runs: it must read the archive pages from the client's event stream,
/// which in the agent belongs to the account's session. Repairs go through the same archive writer and
/// dedup rules, so racing the agent stores nothing twice.
public struct VerifyArchiveAction: Sendable {
    public var repair: Bool
    public var pageSize: Int

    public init(repair: Bool, pageSize: Int = 250) {
        self.repair = repair
        self.pageSize = pageSize
    }

    /// A server message Roost would store that the archive lacked when its page was read: its archive id, time,
    /// and place among the storable server messages (consecutive places make a missing range).
    struct MissingEntry {
        var sequence: Int
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

    /// Memory stays bounded by one page plus the ids of what is missing: each page is checked against the archive
    /// with one indexed query, what it lacks is checked again at once (revisions, copies without the server's id)
    /// and, with `repair`, stored before the next page is asked for; the server's ids go to a temporary table of
    /// the reader's connection for the orphan check, and the account's stanza-ids are counted by SQLite, never
    /// loaded. (Repairs used to wait for the last page, keeping every missing message's record: 338 MB for a
    /// 100 000-message history into an empty archive.)
    private func verify(client: XMPPClient, account: JID, mailbox: ArchivePageMailbox, config: RoostConfig,
                        log: Logger) async throws(ActionFailure) -> VerifyReport {
        let started = Timestamp.now()
        var report = VerifyReport(account: account.description)
        // Open for the whole run: its temporary table holds the server's ids. Absent when there is no archive
        // yet; then nothing stored before `started` can be an orphan.
        let startReader = try reader(config: config)
        let context = routingContext(config: config, account: account)
        var repairs: Repairs? = nil
        // For the checks of what a page lacks: the start's reader, or one opened once a repair made the archive.
        var checker = startReader
        func currentChecker() throws(ActionFailure) -> ArchiveReader? {
            if checker == nil { checker = try reader(config: config) }
            return checker
        }
        // Only the places and ids of messages still missing are kept, never their records.
        var missing: [MissingEntry] = []
        // Invitations still missing, with their records (a handful: they are checked again at the end).
        var missingInvitations: [(id: String, record: InvitationRecord)] = []
        var storable = 0
        var after: String?
        var pages = 0
        do throws(ActionFailure) {
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
                log.debug("\(account): verify received page \(pages) of the server archive (\(page.results.count) results)")
                var pageEntries: [(entry: MissingEntry, record: MessageRecord)] = []
                var pageInvitations: [(id: String, record: InvitationRecord)] = []
                for element in page.results {
                    guard let result = MAM.result(in: Message(element), archive: account), result.queryID == queryID else {
                        report.rejected += 1
                        continue
                    }
                    report.serverMessages += 1
                    // What catch-up would make of it: an invitation is compared with the archive's invitations.
                    let records: [ArchiveEvent]
                    switch ArchivePageRouter.accountResult(result, context: context, now: started) {
                    case .invitation(let outcome):
                        for case .invitation(let invitation) in outcome.events {
                            report.roomInvitations += 1
                            pageInvitations.append((result.archiveID, invitation))
                        }
                        continue
                    case .messages(let events):
                        records = events
                    }
                    guard let record = records.lazy.compactMap({ event -> MessageRecord? in
                        if case .message(let m) = event { return m } else { return nil }
                    }).first else { continue }
                    report.serverStorable += 1
                    pageEntries.append((MissingEntry(sequence: storable, id: result.archiveID, timestamp: record.timestamp), record))
                    storable += 1
                }
                let ids = pageEntries.map(\.entry.id)
                let stored = try archiveRead(config) { () throws(ArchiveError) -> Set<String> in
                    guard let startReader else { return [] }
                    try startReader.rememberServerIDs(ids)
                    return try startReader.storedTrustedStanzaIDs(account: account.description, among: ids, revisions: false)
                }
                var lacking = pageEntries.filter { !stored.contains($0.entry.id) }
                if !lacking.isEmpty {
                    // Corrections kept as revisions count as stored; so does what the agent stored meanwhile.
                    lacking = try stillAbsent(lacking, reader: currentChecker(), config: config, account: account)
                    if repair, !lacking.isEmpty {
                        if repairs == nil { repairs = try Repairs(config: config, log: log) }
                        try await repairs!.store(lacking.map(\.record))
                        let before = lacking.count
                        lacking = try stillAbsent(lacking, reader: currentChecker(), config: config, account: account)
                        // Counted once they are there (added, or linked to their server id), not when handed over.
                        report.repaired += before - lacking.count
                        log.info("\(account): verify archived \(before - lacking.count) missing messages (\(report.repaired) so far)")
                    }
                    // A copy stored without the server's id (live, before the server stamped it) is not missing.
                    let reader = lacking.isEmpty ? nil : try currentChecker()
                    for item in lacking {
                        if let reader, try archiveRead(config, { () throws(ArchiveError) in try reader.hasUnlinkedCopy(of: item.record) }) {
                            report.unlinked += 1
                        } else if let reader, try archiveRead(config, { () throws(ArchiveError) in
                            try reader.hasOtherCopy(ofRoomPrivate: item.record)
                        }) {
                            report.roomPrivateCopies += 1
                        } else {
                            missing.append(item.entry)
                        }
                    }
                }
                if !pageInvitations.isEmpty {
                    var absent = try invitationsAbsent(pageInvitations, reader: currentChecker(), config: config)
                    if repair, !absent.isEmpty {
                        // Archived as live routing archives them: pending invitations, listed by `roost rooms invites`.
                        if repairs == nil { repairs = try Repairs(config: config, log: log) }
                        try await repairs!.archive.record(absent.map { .invitation($0.record) })
                        let before = absent.count
                        absent = try invitationsAbsent(absent, reader: currentChecker(), config: config)
                        report.roomInvitationsRepaired += before - absent.count
                        log.info("\(account): verify archived \(before - absent.count) missing room invitations")
                    }
                    missingInvitations += absent
                }
                if pages % 40 == 0 { log.info("\(account): verify read \(report.serverMessages) server messages so far") }
                let answer = MAM.fin(in: fin)
                guard let answer, !answer.complete, let next = answer.last, next != after else { break }
                after = next
            }
        } catch {
            await repairs?.finish()
            throw error
        }
        await repairs?.finish()

        // Check once more: the agent may have stored some of them while the server was being paged. (By their
        // server ids only: a copy the agent stored without the server's id after its page was read counts as
        // missing until the agent's next catch-up links it; the records are not kept for the copy check.)
        if !missing.isEmpty, let checker = try currentChecker() {
            var storedSince: Set<String> = []
            for start in stride(from: 0, to: missing.count, by: 1_000) {
                let ids = missing[start..<min(start + 1_000, missing.count)].map(\.id)
                storedSince.formUnion(try archiveRead(config) { () throws(ArchiveError) in
                    try checker.storedTrustedStanzaIDs(account: account.description, among: ids, revisions: true)
                })
            }
            missing.removeAll { storedSince.contains($0.id) }
        }
        report.missing = missing.count
        report.missingRanges = Self.ranges(of: missing)
        missingInvitations = try invitationsAbsent(missingInvitations, reader: currentChecker(), config: config)
        report.roomInvitationsMissing = missingInvitations.count
        report.missingInvitations = missingInvitations.prefix(20).map {
            VerifyReport.Invitation(id: $0.id, room: $0.record.room, inviter: $0.record.inviter, timestamp: $0.record.timestamp)
        }
        if let endReader = try currentChecker() {
            let summary = try archiveRead(config) { () throws(ArchiveError) in
                try endReader.trustedStanzaIDSummary(account: account.description, receivedBefore: started, sampleSize: 10)
            }
            report.localTrusted = summary.count
            report.orphans = summary.orphans
            report.orphanSample = summary.orphanSample
            report.duplicateStanzaIds = try archiveRead(config) { () throws(ArchiveError) in
                try endReader.duplicateTrustedStanzaIDs(account: account.description).map(Self.duplicate)
            }
            report.duplicateFallbackKeys = try archiveRead(config) { () throws(ArchiveError) in
                try endReader.duplicateFallbackKeys(account: account.description).map(Self.duplicate)
            }
        }
        return report
    }

    /// The page's messages the archive still lacks (by server id, corrections kept as revisions included).
    private func stillAbsent(_ items: [(entry: MissingEntry, record: MessageRecord)], reader: ArchiveReader?, config: RoostConfig,
                             account: JID) throws(ActionFailure) -> [(entry: MissingEntry, record: MessageRecord)] {
        guard !items.isEmpty, let reader else { return items }
        let stored = try archiveRead(config) { () throws(ArchiveError) in
            try reader.storedTrustedStanzaIDs(account: account.description, among: items.map(\.entry.id), revisions: true)
        }
        return items.filter { !stored.contains($0.entry.id) }
    }

    /// The invitations the archive does not hold (`ArchiveReader.hasInvitation`); all of them when there is no archive.
    private func invitationsAbsent(_ items: [(id: String, record: InvitationRecord)], reader: ArchiveReader?,
                                   config: RoostConfig) throws(ActionFailure) -> [(id: String, record: InvitationRecord)] {
        guard !items.isEmpty, let reader else { return items }
        var absent: [(id: String, record: InvitationRecord)] = []
        for item in items {
            let held = try archiveRead(config) { () throws(ArchiveError) in try reader.hasInvitation(item.record) }
            if !held { absent.append(item) }
        }
        return absent
    }

    private func archiveRead<T>(_ config: RoostConfig, _ body: () throws(ArchiveError) -> T) throws(ActionFailure) -> T {
        do { return try body() } catch {
            throw ActionFailure(.internalError, "could not read the archive \(config.archivePath): \(error)")
        }
    }

    /// The archive writer for `--repair`, opened at the first page that lacks something: each page's
    /// missing messages are archived in server order and on disk before the next page is read.
    private struct Repairs {
        let writer: ArchiveWriter
        let archive: ActionArchive

        init(config: RoostConfig, log: Logger) throws(ActionFailure) {
            do { writer = try ArchiveWriter(path: config.archivePath, durability: .full, log: log) } catch {
                throw ActionFailure(.internalError, "could not open the archive \(config.archivePath): \(error)")
            }
            archive = ActionArchive(writer: writer)
        }

        /// Archives `records` in batches of 200, each on disk before the next.
        func store(_ records: [MessageRecord]) async throws(ActionFailure) {
            for start in stride(from: 0, to: records.count, by: 200) {
                try await archive.record(records[start..<min(start + 200, records.count)].map { .message($0) })
            }
        }

        func finish() async { await writer.drainAndStop() }
    }

    private func reader(config: RoostConfig) throws(ActionFailure) -> ArchiveReader? {
        guard FileManager.default.fileExists(atPath: config.archivePath) else { return nil }
        do { return try ArchiveReader(path: config.archivePath) } catch {
            throw ActionFailure(.internalError, "could not read the archive \(config.archivePath): \(error)")
        }
    }

    /// Display names and contacts as the agent would know them, from the roster stored in the archive, and the rooms
    /// it knows (the archive's and the config's), so that private messages in rooms and invitations are read as the
    /// agent stores them.
    private func routingContext(config: RoostConfig, account: JID) -> RoutingContext {
        var names: [JID: String] = [:]
        var contacts: Set<JID> = []
        var rooms = Set(config.accounts.first { JID(parsing: $0.jid)?.bare == account }?.rooms.compactMap { JID(parsing: $0.jid)?.bare } ?? [])
        if let reader = try? reader(config: config) {
            for contact in (try? reader.contacts(account: account.description)) ?? [] {
                guard let jid = JID(parsing: contact.jid) else { continue }
                contacts.insert(jid.bare)
                if let name = contact.name { names[jid] = name }
            }
            for room in (try? reader.rooms(account: account.description)) ?? [] {
                if let jid = JID(parsing: room.jid)?.bare { rooms.insert(jid) }
            }
        }
        var context = RoutingContext(account: account, trustsOwnStanzaIDs: true, displayNames: names)
        context.knownRooms = rooms
        context.contacts = contacts
        return context
    }

    /// Runs of consecutive places among the server's storable messages.
    static func ranges(of missing: [MissingEntry]) -> [VerifyRange] {
        var ranges: [VerifyRange] = []
        var open: VerifyRange?
        var previous = -1
        for entry in missing {
            if var range = open, entry.sequence == previous + 1 {
                range.count += 1
                range.lastId = entry.id
                range.lastTimestamp = entry.timestamp
                open = range
            } else {
                if let range = open { ranges.append(range) }
                open = VerifyRange(count: 1, firstId: entry.id, lastId: entry.id, firstTimestamp: entry.timestamp, lastTimestamp: entry.timestamp)
            }
            previous = entry.sequence
        }
        if let open { ranges.append(open) }
        return ranges
    }

    static func duplicate(_ group: DuplicateGroup) -> VerifyReport.Duplicate {
        VerifyReport.Duplicate(key: group.key, rowIds: group.rowIds)
    }
}
