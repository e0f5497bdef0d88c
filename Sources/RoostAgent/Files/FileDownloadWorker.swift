public import RoostCore
import Foundation
public import RoostArchive
import RoostNotify
import RoostXMPP
import Synchronization

/// Downloads attachments into the file store, on threads of its own: never on the ingest path, and a slow
/// or huge download never delays archiving.
///
/// It hears about new attachments from their submitters once the archive writer has committed them (the
/// session's `settle`, `ActionArchive.record`), keeps a bounded queue of row ids, and when the queue overflows or a retry falls
/// due it reads the due rows from the archive again — the archive, not memory, holds the work, so nothing is
/// lost to a full queue or a restart. Each outcome is written back to the attachment row: `stored` with its
/// hash, `too-large`, `refused:<reason>`, or `failed:<reason>` with the next attempt scheduled by exponential
/// backoff (`[files] retry_seconds`, doubling up to a day, at most `FilesSettings.maxAttempts` tries). The row is
/// written by the archive writer's thread: a download thread sends it the update and waits for the answer
/// (`ArchiveWriter.update`), never touching the connection itself.
///
/// No contact can hold the downloads: each transfer has a deadline and a minimum rate (`FileFetcher.Limits`), one
/// conversation (a contact, or a room) has at most `FilesSettings.slotsPerSender` transfers at a time (its other
/// files wait while the other threads serve everyone else), and the store's quotas (in all, per conversation) and
/// the free-space floor bound what downloads may write. `[files]` settings read again on SIGHUP apply to the next
/// download (`update(settings:)`).
public final class FileDownloadWorker: Sendable {
    /// Ids held in memory at most; more wait in the archive until a rescan.
    static let queueLimit = 512

    private struct State {
        var queue: [Int64] = []
        var queued: Set<Int64> = []
        /// Requested explicitly (`roost files fetch`): the `download` policy does not apply.
        var forced: Set<Int64> = []
        var inFlight: Set<Int64> = []
        var rescan = true
        /// When the earliest scheduled retry is due (ms), as of the last look.
        var nextDue: Int64?
        var stopping = false
        var threads = 0
        /// Fulfilled, and replaced, by each change that may give an idle thread work (`change`): the threads wait
        /// for the one current when they found nothing to do.
        var wake = OneShot<Void>()
        /// Given the state each of these attachments ends in (fetch requests, notifications waiting for a picture).
        var waiters: [Int64: [OneShot<AttachmentState?>]] = [:]
        /// Transfers in flight per sender (`senderKey`), and the ids waiting for one of that sender's slots.
        var busySenders: [String: Int] = [:]
        var deferred: [String: [(id: Int64, forced: Bool)]] = [:]
        var deferredCount = 0
    }

    private let state = Mutex(State())
    /// The last thread's end (`stop` waits for it).
    private let threadsEnded = OneShot<Void>()
    private let writer: ArchiveWriter
    private let reader: ArchiveReader
    private let store: FileStore
    /// Replaced when the agent reloads its config (SIGHUP); each download reads it once, at its start.
    private let settingsNow: Mutex<FilesSettings>
    private var settings: FilesSettings { settingsNow.withLock { $0 } }
    /// Per account, how its HTTP downloads verify TLS; replaced when the agent reloads its config.
    private let trust: Mutex<[String: HTTPTrust]>
    private let log: Logger
    private let threadCount: Int

    public init(writer: ArchiveWriter, settings: FilesSettings, accounts: [AccountConfig], log: Logger,
                threads: Int = FilesSettings.threads) throws(ArchiveError) {
        self.writer = writer
        reader = try ArchiveReader(path: writer.path)
        store = FileStore(archivePath: writer.path)
        settingsNow = Mutex(settings)
        var trust: [String: HTTPTrust] = [:]
        for account in accounts { trust[account.jid.lowercased()] = HTTPTrust(account: account) }
        self.trust = Mutex(trust)
        self.log = log
        threadCount = max(1, threads)
    }

    /// The accounts after a config reload (`roost run`'s SIGHUP): their `ca_file` and `fingerprint` for downloads.
    public func update(accounts: [AccountConfig]) {
        var table: [String: HTTPTrust] = [:]
        for account in accounts { table[account.jid.lowercased()] = HTTPTrust(account: account) }
        trust.withLock { $0 = table }
    }

    /// The `[files]` settings after a config reload: every one applies from the next download on (the number of
    /// download threads is fixed). Refused or too-large files are not looked at again by themselves: `roost files
    /// fetch` asks for them.
    public func update(settings: FilesSettings) {
        let changed = settingsNow.withLock { old -> Bool in
            defer { old = settings }
            return old != settings
        }
        if changed {
            log.info("files: [files] settings reloaded (download \(settings.download.rawValue), max_size \(FileSize.text(settings.maxSize)), "
                     + "quota \(Self.limitText(settings.quota)), per contact \(Self.limitText(settings.quotaPerContact)), "
                     + "min_free \(FileSize.text(settings.minFree)))")
            change { $0.rescan = true }
        }
    }

    private static func limitText(_ bytes: Int64) -> String { bytes > 0 ? FileSize.text(bytes) : "none" }

    /// Starts the threads; they first look for work left from earlier runs.
    public func start() {
        store.removeStaleTemporaryFiles()
        state.withLock { $0.threads = threadCount }
        for index in 0..<threadCount {
            startThread(named: "roost.files.\(index)") { [self] in
                self.run()
                let last = self.state.withLock { s -> Bool in
                    s.threads -= 1
                    return s.threads == 0
                }
                if last { self.threadsEnded.fulfil(()) }
            }
        }
    }

    /// New attachment rows to download (their submitters, once committed). Never blocks; ids beyond the
    /// queue's limit are picked up by the next rescan.
    public func enqueue(_ ids: [Int64]) {
        change { s in
            for id in ids where !s.queued.contains(id) && !s.inFlight.contains(id) {
                guard s.queue.count < Self.queueLimit else {
                    s.rescan = true
                    break
                }
                s.queue.append(id)
                s.queued.insert(id)
            }
        }
    }

    /// Downloads `ids` now, whoever sent them (the size, address and hash rules still apply), and returns
    /// each one's resulting state (nil when the row does not exist or the worker stopped).
    public func fetch(_ ids: [Int64]) async -> [Int64: AttachmentState?] {
        await withTaskGroup(of: (Int64, AttachmentState?).self) { group in
            for id in Set(ids) {
                group.addTask {
                    let outcome = OneShot<AttachmentState?>()
                    let accepted = self.change { s -> Bool in
                        guard !s.stopping else { return false }
                        s.waiters[id, default: []].append(outcome)
                        s.forced.insert(id)
                        if !s.queued.contains(id) && !s.inFlight.contains(id) {
                            s.queue.insert(id, at: 0)
                            s.queued.insert(id)
                        }
                        return true
                    }
                    if !accepted { outcome.fulfil(nil) }
                    return (id, await outcome.value)
                }
            }
            var results: [Int64: AttachmentState?] = [:]
            for await (id, state) in group { results[id] = state }
            return results
        }
    }

    /// Waits (at most `timeout`) until the attachment is no longer pending, e.g. for a notification that
    /// wants to show the picture; returns its state then, or nil on timeout.
    func settled(_ id: Int64, timeout: Duration) async -> AttachmentState? {
        if let current = try? reader.file(id: id)?.attachment.state, current != .pending { return current }
        let seconds = max(1, Int(timeout / .seconds(1)))
        return await Deadline.race(seconds: seconds, timedOut: nil) { once in
            let registered = state.withLock { s -> Bool in
                guard !s.stopping else { return false }
                s.waiters[id, default: []].append(once)
                return true
            }
            if !registered { once.fulfil(nil) }
            // It may have finished between the first look and the registration.
            if let current = try? reader.file(id: id)?.attachment.state, current != .pending { once.fulfil(current) }
        }
    }

    /// The first picture a message shared once stored (its `localPath` and `size` known), waiting at most `timeout`
    /// for its download.
    func storedPicture(ofMessage messageID: Int64, timeout: Duration) async -> AttachmentRecord? {
        guard let rows = try? reader.files(ofMessage: messageID),
              let picture = rows.first(where: { ($0.attachment.mime ?? MediaType.guess(name: $0.attachment.displayName, sample: []))?.hasPrefix("image/") == true })
        else { return nil }
        guard await settled(picture.id, timeout: timeout) == .stored else { return nil }
        return (try? reader.file(id: picture.id))?.attachment
    }

    /// Ends the transfers in flight (their rows stay as they were, to be retried next time) and the threads.
    public func stop() async {
        let (waiters, running) = change { s -> ([OneShot<AttachmentState?>], Bool) in
            s.stopping = true
            defer { s.waiters.removeAll() }
            return (s.waiters.values.flatMap { $0 }, s.threads > 0)
        }
        for waiter in waiters { waiter.fulfil(nil) }
        // The last thread to end fulfils it (none runs when `start` was never called).
        if running { await threadsEnded.value }
    }

    // MARK: - Threads

    /// Changes the state and wakes the idle threads: the wake-up they wait for is fulfilled and replaced under the
    /// same lock as the change, so a thread that found nothing to do before it holds the one this fulfils.
    @discardableResult
    private func change<T>(_ body: (inout State) -> T) -> T {
        let (result, wake) = state.withLock { s -> (T, OneShot<Void>) in
            let result = body(&s)
            defer { s.wake = OneShot() }
            return (result, s.wake)
        }
        wake.fulfil(())
        return result
    }

    private enum Work {
        case download(Int64, forced: Bool)
        case rescan
        case stop
    }

    private func run() {
        while true {
            switch nextWork() {
            case .stop:
                return
            case .rescan:
                rescan()
            case .download(let id, let forced):
                let result = process(id, forced: forced)
                if case .deferred = result {
                    state.withLock { _ = $0.inFlight.remove(id) }
                    continue
                }
                let state: AttachmentState? = if case .done(let state) = result { state } else { nil }
                let waiters = self.state.withLock { s -> [OneShot<AttachmentState?>] in
                    s.inFlight.remove(id)
                    return s.waiters.removeValue(forKey: id) ?? []
                }
                for waiter in waiters { waiter.fulfil(state) }
            }
        }
    }

    /// Blocks until there is something to do: a queued id, a rescan, a retry falling due, or stopping.
    private func nextWork() -> Work {
        while true {
            let (work, wake, due) = state.withLock { s -> (Work?, OneShot<Void>, Int64?) in
                (Self.take(&s), s.wake, s.nextDue)
            }
            if let work { return work }
            // Woken by the next `change`, or when the earliest retry falls due.
            wake.wait(until: due.map { Date(timeIntervalSince1970: Double($0) / 1000 + 0.01) })
        }
    }

    /// The next work in `s`, taken out of it; nil when there is none now.
    private static func take(_ s: inout State) -> Work? {
        if s.stopping { return .stop }
        if let index = s.queue.firstIndex(where: { !s.inFlight.contains($0) }) {
            let id = s.queue.remove(at: index)
            s.queued.remove(id)
            s.inFlight.insert(id)
            return .download(id, forced: s.forced.remove(id) != nil)
        }
        if s.rescan {
            s.rescan = false
            return .rescan
        }
        if let due = s.nextDue, due <= Self.now() {
            s.nextDue = nil
            return .rescan
        }
        return nil
    }

    /// Reads due rows from the archive into the queue.
    private func rescan() {
        let ids: [Int64]
        let next: Int64?
        do {
            ids = try reader.dueFiles(now: Self.now(), limit: Self.queueLimit)
            next = try reader.nextScheduledFileAttempt()
        } catch {
            log.error("files: reading the download queue failed: \(LogText.quote(error)); trying again in a minute")
            change { $0.nextDue = Self.now() + 60_000 }
            return
        }
        change { s in
            for id in ids where !s.queued.contains(id) && !s.inFlight.contains(id) && s.queue.count < Self.queueLimit {
                s.queue.append(id)
                s.queued.insert(id)
            }
            if ids.count >= Self.queueLimit { s.rescan = true }
            if let next, next > Self.now() { s.nextDue = min(s.nextDue ?? next, next) }
        }
    }

    // MARK: - One download

    private enum Processed {
        /// The attachment's state afterwards (nil: no row, or nothing recorded).
        case done(AttachmentState?)
        /// Its sender's slots are taken: it waits for one (`State.deferred`).
        case deferred
    }

    /// The sender a download counts against (slots, `quota_per_contact`): the conversation — the contact, or the
    /// room as a whole (a room's occupants choose and change their nicks at will).
    static func senderKey(_ row: FileRow) -> String {
        row.account.lowercased() + " " + row.conversation.lowercased()
    }

    /// Decides and downloads one attachment and records the outcome; its state afterwards, or `.deferred` when its
    /// sender already has `FilesSettings.slotsPerSender` transfers in flight.
    private func process(_ id: Int64, forced: Bool) -> Processed {
        let row: FileRow
        do {
            guard let found = try reader.file(id: id) else { return .done(nil) }
            row = found
        } catch {
            log.error("files: reading attachment \(id) failed: \(LogText.quote(error))")
            return .done(nil)
        }
        let attachment = row.attachment
        let due: Bool
        switch attachment.state {
        case .stored: return .done(.stored)
        case .pending: due = true
        case .failed: due = row.nextAttemptAt.map { $0 <= Self.now() } ?? false
        case .tooLarge, .refused: due = false
        }
        guard due || forced else { return .done(attachment.state) }
        let sender = Self.senderKey(row)
        let admitted = change { s -> Bool in
            guard s.busySenders[sender, default: 0] >= FilesSettings.slotsPerSender else {
                s.busySenders[sender, default: 0] += 1
                return true
            }
            if s.deferredCount < Self.queueLimit {
                s.deferred[sender, default: []].append((id, forced))
                s.deferredCount += 1
                s.queued.insert(id)
            } else {
                // Too many wait: this one stays due in the archive and comes back with a rescan.
                s.rescan = true
            }
            return false
        }
        guard admitted else { return .deferred }
        defer {
            change { s in
                let left = s.busySenders[sender, default: 1] - 1
                s.busySenders[sender] = left > 0 ? left : nil
                if var waiting = s.deferred[sender], !waiting.isEmpty {
                    let next = waiting.removeFirst()
                    s.deferred[sender] = waiting.isEmpty ? nil : waiting
                    s.deferredCount -= 1
                    s.queued.remove(next.id)
                    if !s.inFlight.contains(next.id) {
                        s.queue.insert(next.id, at: 0)
                        s.queued.insert(next.id)
                        if next.forced { s.forced.insert(next.id) }
                    }
                }
            }
        }
        return .done(download(row, forced: forced))
    }

    private func download(_ row: FileRow, forced: Bool) -> AttachmentState? {
        let id = row.id
        let attachment = row.attachment
        let settings = self.settings
        let what = "\(row.account): \(LogText.quote(attachment.displayName)) from \(LogText.quote(Self.bare(row.from)))"
        if !forced, let refusal = policyRefusal(row, settings: settings) {
            log.info("files: \(what) not downloaded (\(refusal == "downloads-off" ? "[files] download = none" : "not a contact; [files] download = contacts"))")
            return record(AttachmentUpdate(id: id, state: .refused(refusal), attempts: row.attempts))
        }
        if let size = attachment.size, size > settings.maxSize {
            log.info("files: \(what) not downloaded: \(FileSize.text(size)) is more than [files] max_size (\(FileSize.text(settings.maxSize)))")
            return record(AttachmentUpdate(id: id, state: .tooLarge, attempts: row.attempts))
        }
        let budget: Budget
        switch self.budget(for: row, settings: settings) {
        case .room(let bytes): budget = bytes
        case .none(let limit):
            return refuseForSpace(row, what: what, limit: limit, settings: settings)
        }
        if let size = attachment.size, size > budget.bytes {
            return refuseForSpace(row, what: what, limit: budget.limit, settings: settings)
        }
        var limits = FileFetcher.Limits(maxSize: settings.maxSize, allowPrivateAddresses: settings.allowPrivateAddresses)
        limits.maxTransferSeconds = settings.maxTransferSeconds
        limits.minRate = settings.minRate
        limits.budget = budget.bytes
        let accountTrust = trust.withLock { $0[row.account.lowercased()] } ?? HTTPTrust()
        let fetcher = FileFetcher(limits: limits, trust: accountTrust, store: store,
                                  isCancelled: { [self] in self.state.withLock { $0.stopping } })
        let attempts = row.attempts + 1
        switch fetcher.fetch(attachment) {
        case .stored(let file, let served):
            var mime = MediaType.normalized(attachment.mime)
            if MediaType.isGeneric(mime) { mime = MediaType.isGeneric(served) ? nil : served }
            if MediaType.isGeneric(mime) { mime = MediaType.guess(name: attachment.displayName, path: file.path) }
            log.info("files: \(what): kept \(FileSize.text(file.size))\(mime.map { ", \(LogText.quote($0))" } ?? "")")
            return record(AttachmentUpdate(id: id, state: .stored, sha256: file.sha256, size: file.size, mime: mime, attempts: attempts))
        case .tooLarge:
            log.info("files: \(what) not kept: larger than [files] max_size (\(FileSize.text(settings.maxSize)))")
            return record(AttachmentUpdate(id: id, state: .tooLarge, attempts: attempts))
        case .refused("quota"):
            return refuseForSpace(row, what: what, limit: budget.limit, settings: settings, attempts: attempts)
        case .refused(let reason):
            log.warning("files: \(what) refused (\(Self.explain(reason))): \(FileFetcher.loggable(attachment.url))")
            return record(AttachmentUpdate(id: id, state: .refused(reason), attempts: attempts))
        case .failed(let reason, let retry):
            return recordFailure(row, what: what, reason: reason, retry: retry, attempts: attempts, settings: settings)
        case .cancelled:
            return nil
        }
    }

    /// Which limit leaves a file the least room.
    private enum SpaceLimit {
        case quota, perContact, freeSpace
    }

    private struct Budget {
        var bytes: Int64
        var limit: SpaceLimit
    }

    private enum BudgetAnswer {
        case room(Budget)
        case none(SpaceLimit)
    }

    /// What the quotas and the free-space floor leave for one more file of `row`'s conversation.
    private func budget(for row: FileRow, settings: FilesSettings) -> BudgetAnswer {
        var best = Budget(bytes: .max, limit: .quota)
        func consider(_ bytes: Int64, _ limit: SpaceLimit) {
            if bytes < best.bytes { best = Budget(bytes: bytes, limit: limit) }
        }
        do {
            if settings.quota > 0 { consider(settings.quota - (try reader.storedBytes()), .quota) }
            if settings.quotaPerContact > 0 {
                consider(settings.quotaPerContact - (try reader.storedBytes(account: row.account, conversation: row.conversation)), .perContact)
            }
        } catch {
            log.error("files: reading the file store's size failed: \(LogText.quote(error))")
        }
        var space = statvfs()
        if statvfs(store.root.isEmpty ? "." : (store.root as NSString).deletingLastPathComponent, &space) == 0 {
            consider(Int64(space.f_bavail) * Int64(space.f_frsize) - settings.minFree, .freeSpace)
        }
        return best.bytes > 0 ? .room(best) : .none(best.limit)
    }

    /// A file the quotas leave no room for is refused (`roost files fetch` asks again once a quota is raised); one
    /// the free-space floor leaves no room for fails and is retried later (space may come back).
    private func refuseForSpace(_ row: FileRow, what: String, limit: SpaceLimit, settings: FilesSettings, attempts: Int? = nil) -> AttachmentState? {
        switch limit {
        case .quota:
            log.warning("files: \(what) not kept: the file store holds its [files] quota (\(FileSize.text(settings.quota)))")
            return record(AttachmentUpdate(id: row.id, state: .refused("quota"), attempts: attempts ?? row.attempts))
        case .perContact:
            log.warning("files: \(what) not kept: the files of \(LogText.quote(row.conversation)) reach [files] quota_per_contact "
                        + "(\(FileSize.text(settings.quotaPerContact)))")
            return record(AttachmentUpdate(id: row.id, state: .refused("quota"), attempts: attempts ?? row.attempts))
        case .freeSpace:
            return recordFailure(row, what: what + " (it would leave less than [files] min_free, \(FileSize.text(settings.minFree)), free on the disk)",
                                 reason: "disk-space", retry: true, attempts: attempts ?? row.attempts + 1, settings: settings)
        }
    }

    private func recordFailure(_ row: FileRow, what: String, reason: String, retry: Bool, attempts: Int, settings: FilesSettings) -> AttachmentState? {
        var next: Int64?
        if retry && attempts < FilesSettings.maxAttempts {
            let delay = min(Int64(settings.retrySeconds) << Int64(min(attempts - 1, 20)), 86_400)
            next = Self.now() + delay * 1000
        }
        log.warning("files: \(what): download failed (\(LogText.quote(Self.explain(reason))))"
                    + (next.map { "; trying again in \(($0 - Self.now() + 999) / 1000) s" } ?? "; not retrying"))
        let result = record(AttachmentUpdate(id: row.id, state: .failed(reason), attempts: attempts, nextAttemptAt: next))
        if let next { change { s in s.nextDue = min(s.nextDue ?? next, next) } }
        return result
    }

    /// Why the `download` policy keeps Roost from fetching this file, or nil when it may.
    private func policyRefusal(_ row: FileRow, settings: FilesSettings) -> String? {
        switch settings.download {
        case .none: return "downloads-off"
        case .all: return nil
        case .contacts:
            if row.direction == .outgoing { return nil }
            if row.kind == .groupchat { return "not-a-contact" }
            let contact = try? reader.contact(account: row.account, jid: Self.bare(row.from))
            let subscribed = contact.map { $0.inRoster && ["to", "from", "both"].contains($0.subscription ?? "") } ?? false
            return subscribed ? nil : "not-a-contact"
        }
    }

    private func record(_ update: AttachmentUpdate) -> AttachmentState? {
        do {
            try writer.update(update)
            return update.state
        } catch .writerStopped {
            // The agent is stopping: the row stays due and the next run looks at it again.
            log.debug("files: attachment \(update.id) not recorded: the archive writer has stopped")
            return nil
        } catch {
            // The row stays due; wait before the next look rather than spin on a broken archive.
            log.error("files: recording attachment \(update.id) failed: \(LogText.quote(error))")
            change { $0.nextDue = Self.now() + 60_000 }
            return nil
        }
    }

    static func explain(_ reason: String) -> String {
        switch reason {
        case "private-address": return "it points to a private or local address; [files] allow_private_addresses = false"
        case "hash-mismatch": return "the bytes do not match the advertised hash"
        case "scheme": return "not an http or https URL"
        case "redirects": return "too many redirects"
        case "quota": return "the file store's quota is reached; [files] quota, quota_per_contact"
        case "too-slow": return "too-slow: slower than [files] min_rate"
        case "timeout": return "timeout: not done within [files] max_transfer_seconds"
        default: return reason
        }
    }

    static func now() -> Int64 { Timestamp.now() }

    static func bare(_ jid: String) -> String {
        JID(parsing: jid)?.bare.description ?? jid
    }
}
