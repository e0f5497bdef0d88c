import Foundation

/// Imports a jsonl export (`roost export --format jsonl`) into an archive, new or existing, through
/// `ArchiveWriter` with the archive's own dedup rules, so importing twice adds nothing and
/// export → import → export gives the same bytes.
///
/// The file is read twice: first every line is checked (nothing is written if any is invalid, unless
/// `skipInvalid`), then the events are committed in batches — short ones (`transactionBudget`) while the
/// agent writes the same archive, so its commits, and with them the acknowledgements to the servers, are
/// never held up for long.
public struct ArchiveImporter: Sendable {
    public static let reportedProblemLimit = 20
    public static let batchSize = 5_000

    public let archivePath: String

    public init(archivePath: String) {
        self.archivePath = archivePath
    }

    /// With `dryRun` the lines go into a private copy of the archive (see `DryRunArchive`): exact counts, no change.
    public func importJSONLines(from path: String, skipInvalid: Bool = false, transactionBudget: Duration? = nil, dryRun: Bool = false,
                                progress: @escaping (ExportProgress) -> Void = { _ in }) throws(ImportError) -> ImportSummary {
        let started = Date()
        let lines = try LineReader(path: path)
        var summary = ImportSummary()
        var problems: [ImportProblem] = []
        var invalid = 0
        var valid = 0
        do {
            try lines.forEachLine { number, bytes in
                if Self.isBlank(bytes) { return true }
                do throws(ImportFields.Problem) {
                    _ = try ImportLineDecoder.decode(bytes)
                    valid += 1
                } catch {
                    invalid += 1
                    if problems.count < Self.reportedProblemLimit { problems.append(ImportProblem(line: number, reason: error.reason)) }
                }
                return true
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw .unreadable(path: path, errno: 5)
        }
        if invalid > 0 && !skipInvalid { throw .invalidLines(problems, invalidCount: invalid, path: path) }
        summary.skipped = problems
        summary.skippedCount = invalid

        let copy = dryRun ? try DryRunArchive(of: archivePath) : nil
        let writer: ArchiveWriter
        let deduplicator: ImportDeduplicator
        do throws(ArchiveError) {
            writer = try ArchiveWriter(path: copy?.path ?? archivePath, durability: .normal)
            deduplicator = try ImportDeduplicator(reader: try ArchiveReader(path: copy?.path ?? archivePath))
        } catch {
            throw .archive(error)
        }
        let store = FileStore(archivePath: archivePath)
        let folder = (path as NSString).deletingLastPathComponent
        var done = 0
        var lastReport = Date.distantPast
        var committer = BatchCommitter(writer: writer, transactionBudget: transactionBudget, maximumBatch: Self.batchSize) { events, outcomes in
            summary.count(events, outcomes)
            let now = Date()
            if now.timeIntervalSince(lastReport) >= 0.2 {
                lastReport = now
                progress(ExportProgress(done: done, total: valid, elapsedSeconds: now.timeIntervalSince(started)))
            }
        }
        do {
            try lines.forEachLine { _, bytes in
                if Self.isBlank(bytes) { return true }
                summary.lines += 1
                guard let item = try? ImportLineDecoder.decode(bytes) else { return true }
                done += 1
                switch item {
                case .message(let events):
                    var restored: [ArchiveEvent] = []
                    for event in events {
                        guard case .message(var record) = event, !record.attachments.isEmpty else {
                            restored.append(event)
                            continue
                        }
                        for index in record.attachments.indices {
                            restore(&record.attachments[index], beside: folder, store: store, summary: &summary)
                        }
                        restored.append(.message(record))
                    }
                    try committer.add(restored)
                case .chatState(let record):
                    try committer.add(.chatState(record))
                case .presence(let record):
                    do throws(ArchiveError) {
                        if try deduplicator.isDuplicate(record) { break }
                    } catch {
                        throw ImportError.archive(error)
                    }
                    try committer.add(.presence(record))
                case .subscription(let record):
                    do throws(ArchiveError) {
                        if try deduplicator.isDuplicate(record) { break }
                    } catch {
                        throw ImportError.archive(error)
                    }
                    try committer.add(.subscription(record))
                case .contact(let roster, let removedAt, let vCard):
                    let newer: (roster: Bool, vCard: Bool)
                    do throws(ArchiveError) {
                        newer = try deduplicator.hasNewer(account: roster?.account ?? vCard?.account ?? "",
                                                          jid: roster?.jid ?? vCard?.jid ?? "",
                                                          rosterUpdatedAt: roster?.timestamp, vCardFetchedAt: vCard?.fetchedAt)
                    } catch {
                        throw ImportError.archive(error)
                    }
                    if let roster, !newer.roster {
                        var events: [ArchiveEvent] = [.rosterItem(roster)]
                        if let removedAt { events.append(.rosterRemoval(account: roster.account, jid: roster.jid, timestamp: removedAt)) }
                        try committer.add(events)
                    }
                    if let vCard, !newer.vCard { try committer.add(.vCard(vCard)) }
                    summary.contacts += 1
                }
                return true
            }
            try committer.flush()
        } catch let error as ImportError {
            throw error
        } catch let error as ArchiveError {
            throw .archive(error)
        } catch {
            throw .unreadable(path: path, errno: 5)
        }
        summary.seconds = Date().timeIntervalSince(started)
        progress(ExportProgress(done: done, total: valid, elapsedSeconds: summary.seconds))
        return summary
    }

    /// Brings an attachment's file into the store: the export's copy (`file`, relative to the jsonl file's
    /// folder), checked against its recorded SHA-256, or the store's own copy when it already has one.
    /// A stored file that cannot be restored goes back to `pending` (the agent downloads it again if the
    /// link still works), keeping its SHA-256 as an advertised hash so that the download is checked.
    /// An absolute `local_path` (a file outside the store, from an old archive) is kept as it was.
    private func restore(_ attachment: inout AttachmentRecord, beside folder: String, store: FileStore, summary: inout ImportSummary) {
        if attachment.sha256 == nil, attachment.localPath?.hasPrefix("/") == true { return }
        let source = attachment.localPath.map { $0.hasPrefix("/") ? $0 : folder + "/" + $0 }
        attachment.localPath = nil
        if let sha256 = attachment.sha256, store.contains(sha256: sha256) {
            attachment.state = .stored
            return
        }
        let expected = attachment.sha256.flatMap(Hex.bytes).map { Data($0).base64EncodedString() }.map { [FileHash(algorithm: "sha-256", base64: $0)] } ?? []
        if let source, store.adopt(&attachment, from: source, checking: expected) { return }
        guard source != nil || attachment.state == .stored else { return }
        summary.filesMissing += 1
        attachment.state = .pending
        if let hash = expected.first, !attachment.hashes.contains(where: { $0.algorithm == "sha-256" }) { attachment.hashes.append(hash) }
        attachment.sha256 = nil
    }

    private static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }
}
