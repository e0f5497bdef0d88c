public import Foundation

/// Imports other clients' histories (Gajim, Dino, Profanity, Pidgin) through the same path and dedup rules as
/// everything else (`BatchCommitter`, `CrossSourceMatch`).
///
/// Nothing half-imported: every source is read through once before the first write (a damaged database or
/// an unknown account stops the import there); then the messages are committed in batches. If the import is
/// interrupted after that (killed, disk full), running it again completes it: what was stored is recognised
/// as duplicates. A dry run does the whole import into a private snapshot of the archive, so its counts are
/// exactly what the real import would do, and the archive is not touched.
public struct ClientImporter: Sendable {
    public struct Options: Sendable {
        /// nil: recognise the client.
        public var format: ClientFormat?
        /// Import only this account's history (a bare JID).
        public var account: String?
        public var dryRun: Bool
        /// The zone of local times that carry no offset (Profanity's logs before 0.13).
        public var timeZone: TimeZone
        /// Names that are the user's in Pidgin's plain-text logs.
        public var ownNames: [String]
        /// Short transactions of about this long, while the agent writes the same archive (see `BatchCommitter`).
        public var transactionBudget: Duration?

        public init(format: ClientFormat? = nil, account: String? = nil, dryRun: Bool = false, timeZone: TimeZone = .current,
                    ownNames: [String] = [], transactionBudget: Duration? = nil) {
            self.format = format
            self.account = account
            self.dryRun = dryRun
            self.timeZone = timeZone
            self.ownNames = ownNames
            self.transactionBudget = transactionBudget
        }
    }

    /// What was found at the path, before anything is imported.
    public struct Found: Sendable {
        public var format: ClientFormat
        public var description: String
        public var accounts: [String]
    }

    public static let reportedRefusalsPerReason = 3

    public let archivePath: String

    public init(archivePath: String) {
        self.archivePath = archivePath
    }

    /// Imports the histories at `path`. `found` hears what was recognised (before the first write);
    /// `progress` hears how far the writing got.
    public func importHistory(at path: String, options: Options, found: ([Found]) -> Void = { _ in },
                              progress: @escaping (ExportProgress) -> Void = { _ in }) throws(ImportError) -> ImportSummary {
        let started = Date()
        let account = try options.account.map { text throws(ImportError) -> String in
            guard let jid = ClientText.bareJID(text) else { throw .accountNeeded(path: path, reason: "\(text) is not a JID") }
            return jid
        }
        var ownNames = OwnNames(given: Set(options.ownNames))
        ownNames.roomNicks = try Self.roomNicks(in: archivePath)
        let sources = try ClientSources.open(path: path, format: options.format, timeZone: options.timeZone, ownNames: ownNames)
        var descriptions: [Found] = []
        var allAccounts: Set<String> = []
        for source in sources {
            let accounts = try source.reader.accounts()
            allAccounts.formUnion(accounts)
            descriptions.append(Found(format: source.format, description: source.reader.description, accounts: accounts))
        }
        if let account, !allAccounts.isEmpty, !allAccounts.contains(account) {
            throw .accountNotInSource(account: account, found: allAccounts.sorted(), path: path)
        }
        found(descriptions)

        // First pass: read everything, count, and stop at the first damaged source before anything is written.
        var summary = ImportSummary()
        var total = 0
        for source in sources {
            try source.reader.read(account: account) { item throws(ImportError) in
                switch item {
                case .message: total += 1
                case .refused(let reason, let location):
                    summary.refused[reason, default: 0] += 1
                    if summary.refused[reason]! <= Self.reportedRefusalsPerReason {
                        summary.refusedExamples.append(ImportRefusal(reason: reason, location: location))
                    }
                case .notMessage(let kind): summary.notMessages[kind, default: 0] += 1
                case .unread(let reason, let location):
                    summary.unread[reason, default: 0] += 1
                    if summary.unread[reason]! <= Self.reportedRefusalsPerReason {
                        summary.unreadExamples.append(ImportRefusal(reason: reason, location: location))
                    }
                case .fileRefused(let reason, let location):
                    summary.pathsRefused += 1
                    if summary.pathsRefusedExamples.count < Self.reportedRefusalsPerReason * 2 {
                        summary.pathsRefusedExamples.append(ImportRefusal(reason: reason, location: location))
                    }
                case .reaction: summary.reactions.read += 1
                case .refusedReaction(let reason, let location):
                    summary.reactions.read += 1
                    summary.reactions.refused[reason, default: 0] += 1
                    if summary.reactions.refused[reason]! <= Self.reportedRefusalsPerReason {
                        summary.reactions.refusedExamples.append(ImportRefusal(reason: reason, location: location))
                    }
                }
            }
        }

        // Second pass: into the archive, or into a private copy of it for a dry run.
        let target = options.dryRun ? try DryRunArchive(of: archivePath) : nil
        let writer: ArchiveWriter
        do throws(ArchiveError) {
            writer = try ArchiveWriter(path: target?.path ?? archivePath, durability: .normal)
        } catch {
            throw .archive(error)
        }
        var done = 0
        var lastReport = Date.distantPast
        let store = FileStore(archivePath: writer.path)
        let reactionsBefore = try Self.newestReaction(in: writer.path)
        var committer = BatchCommitter(writer: writer, transactionBudget: options.transactionBudget,
                                       maximumBatch: ArchiveImporter.batchSize) { events, outcomes in
            summary.count(events, outcomes)
            done += events.count { if case .message = $0 { true } else { false } }
            let now = Date()
            if now.timeIntervalSince(lastReport) >= 0.2 {
                lastReport = now
                progress(ExportProgress(done: done, total: total, elapsedSeconds: now.timeIntervalSince(started)))
            }
        }
        for source in sources {
            // Each source is its own pass: its messages may match those of the sources before it.
            writer.beginImportPass()
            try source.reader.read(account: account) { item throws(ImportError) in
                if case .reaction(let annotation) = item {
                    do throws(ArchiveError) { try committer.add(.annotation(annotation)) } catch { throw .archive(error) }
                    return
                }
                guard case .message(var record) = item else { return }
                summary.lines += 1
                // A file the client still has (its path in `localPath`, outside Roost's folder) is copied into the
                // file store, so the archive no longer depends on the client's folder; one that cannot be read
                // keeps linking the client's copy.
                for index in record.attachments.indices {
                    if let path = record.attachments[index].localPath {
                        _ = store.adopt(&record.attachments[index], from: path, regularOnly: true)
                    }
                }
                do throws(ArchiveError) { try committer.add(.message(record)) } catch { throw .archive(error) }
            }
            do throws(ArchiveError) { try committer.flush() } catch { throw .archive(error) }
        }
        do throws(ArchiveError) { try committer.finish() } catch { throw .archive(error) }
        if summary.reactions.added > 0 { summary.reactions.waiting = try Self.waitingReactions(in: writer.path, after: reactionsBefore) }
        summary.seconds = Date().timeIntervalSince(started)
        progress(ExportProgress(done: done, total: total, elapsedSeconds: summary.seconds))
        return summary
    }
}

extension ClientImporter {
    /// The nicks the archive knows as the user's in each room (`OwnNames`): the one Roost joined with, the bookmark's,
    /// and those of the user's own messages it archived there. Empty for a new archive.
    fileprivate static func roomNicks(in path: String) throws(ImportError) -> [String: Set<String>] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        var nicks: [String: Set<String>] = [:]
        do throws(SQLiteError) {
            let database = try Database(path: path, mode: .readOnly)
            // An archive from before rooms were kept (migrated when the import writes) knows none.
            guard try database.cached("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'rooms'").scalarInt() == 1 else {
                return [:]
            }
            // Per room Roost knows, through the conversation index: the user's own messages there name their nick.
            try database.cached("""
                SELECT a.jid, r.jid, r.nick, r.bookmark_nick,
                       (SELECT group_concat(nick, char(10)) FROM (SELECT DISTINCT substr(m.from_jid, instr(m.from_jid, '/') + 1) AS nick
                            FROM messages m WHERE m.conversation = r.jid AND m.account_id = r.account_id AND m.direction = 'out'
                                AND m.type = 'groupchat' AND instr(m.from_jid, '/') > 0))
                FROM rooms r JOIN accounts a ON a.id = r.account_id
                """).forEachRow { row in
                let key = OwnNames.key(row.text(0), row.text(1))
                let found = [row.optionalText(2), row.optionalText(3)].compactMap { $0 }
                    + (row.optionalText(4)?.split(separator: "\n").map(String.init) ?? [])
                for nick in found where !nick.isEmpty { nicks[key, default: []].insert(nick) }
                return true
            }
        } catch {
            throw .archive(.sqlite(error))
        }
        return nicks
    }

    /// The newest reaction row of the archive, before an import.
    fileprivate static func newestReaction(in path: String) throws(ImportError) -> Int64 {
        do throws(SQLiteError) {
            return try Database(path: path, mode: .readOnly).cached("SELECT coalesce(max(id), 0) FROM reactions").scalarInt() ?? 0
        } catch {
            throw .archive(.sqlite(error))
        }
    }

    /// Reactions the import stored (rows after `row`) whose message is not archived: they are attached when it comes.
    fileprivate static func waitingReactions(in path: String, after row: Int64) throws(ImportError) -> Int {
        do throws(SQLiteError) {
            let count = try Database(path: path, mode: .readOnly)
                .cached("SELECT count(*) FROM reactions WHERE id > ? AND source = 'import' AND message_row IS NULL").scalarInt([.integer(row)])
            return Int(count ?? 0)
        } catch {
            throw .archive(.sqlite(error))
        }
    }
}

/// A private copy of the archive (SQLite's backup API, so a running agent is not disturbed), deleted when
/// dropped: a dry run imports into it for exact counts.
final class DryRunArchive {
    let path: String
    private let folder: String

    init(of archivePath: String) throws(ImportError) {
        folder = NSTemporaryDirectory() + "roost-dry-run-" + UUID().uuidString
        path = folder + "/archive.sqlite"
        guard mkdir(folder, 0o700) == 0 else { throw .unreadable(path: folder, errno: errno) }
        guard FileManager.default.fileExists(atPath: archivePath) else { return }
        do throws(SQLiteError) {
            try Database(path: archivePath, mode: .readOnly).backup(to: path)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw .archive(.sqlite(error))
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
