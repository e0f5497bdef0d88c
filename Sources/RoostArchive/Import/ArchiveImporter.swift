import Foundation

/// Imports a jsonl export (`roost export --format jsonl`) into an archive, new or existing, through
/// `ArchiveWriter` with the archive's own dedup rules, so importing twice adds nothing and
/// export → import → export gives the same bytes.
///
/// Every line is checked before anything is written (nothing is written if any is invalid, unless `skipInvalid`),
/// then the events are committed in batches — short ones (`transactionBudget`) while the agent writes the same
/// archive, so its commits, and with them the acknowledgements to the servers, are never held up for long.
/// Each line is decoded once: the check pass keeps what it decoded for the write pass, up to `retainedBytes`
/// (the lines' bytes); past that, the write pass reads the file again from the first line it did not keep and
/// decodes the rest a second time, so memory stays bounded whatever the file's size.
public struct ArchiveImporter: Sendable {
    public static let reportedProblemLimit = 20
    public static let defaultMaxLineBytes = LineReader.defaultMaxLineBytes
    /// Events per transaction when no agent writes (with one, `BatchCommitter` keeps each commit near its budget).
    /// Large, because each commit writes to the log, and again at its checkpoint, every page it changed: the last
    /// leaf of each conversation in `messages_account_conversation`, the table's pages that corrections update, the
    /// random-key indexes' leaves where they are kept. 1M messages into an empty archive wrote 2.78× the archive
    /// with 20 000, 2.47× with 50 000 (+30 MB peak RSS), 2.30× with 100 000 (+120 MB); 100k into the 1M archive
    /// (indexes kept) 2.77× → 1.83× and 8 % less CPU (docs/performance-history.md, "Where the bytes of a 1M import
    /// go").
    public static let batchSize = 50_000
    /// How many bytes of lines the check pass keeps decoded for the write pass (see above). Decoded, a line takes
    /// about 1.5 times its bytes (100 000 lines of the benchmark's history, 120 MB with a raw stanza on each, held
    /// 184 MB), so this is ~200 MB at most, released line by line as the write pass hands them on.
    public static let defaultRetainedBytes = 128 << 20

    public let archivePath: String

    public init(archivePath: String) {
        self.archivePath = archivePath
    }

    /// With `dryRun` the lines go into a private copy of the archive (see `DryRunArchive`): exact counts, no change.
    /// A line longer than `maxLineBytes` is an invalid line (its bytes are read past, never held).
    public func importJSONLines(from path: String, skipInvalid: Bool = false, transactionBudget: Duration? = nil, dryRun: Bool = false,
                                maxLineBytes: Int = ArchiveImporter.defaultMaxLineBytes,
                                retainedBytes: Int = ArchiveImporter.defaultRetainedBytes,
                                progress: @escaping (ExportProgress) -> Void = { _ in }) throws(ImportError) -> ImportSummary {
        let started = Date()
        let lines = try LineReader(path: path, maxLineBytes: maxLineBytes)
        var summary = ImportSummary()
        var problems: [ImportProblem] = []
        var invalid = 0
        var valid = 0
        let addresses = AddressCache()
        // The decoded lines kept for the write pass, the bytes they came from, and where the write pass reads on.
        var retained: [ImportItem] = []
        var retainedSize = 0
        var retaining = true
        var resumeOffset: Int64 = 0
        var retainedLines = 0
        do {
            try lines.forEachLine { number, bytes in
                if let bytes, Self.isBlank(bytes) {
                    if retaining { resumeOffset = lines.lineEnd }
                    return true
                }
                do throws(ImportFields.Problem) {
                    guard let bytes else {
                        let limit = maxLineBytes % (1 << 20) == 0 ? "\(maxLineBytes >> 20) MiB" : "\(maxLineBytes) bytes"
                        throw ImportFields.Problem(reason: "longer than \(limit), the most an import reads as one line "
                                                   + "(raise it with --max-line-size)")
                    }
                    let item = try ImportLineDecoder.decode(bytes, addresses: addresses)
                    valid += 1
                    if retaining {
                        retainedSize += bytes.count
                        if retainedSize <= retainedBytes {
                            retained.append(item)
                            retainedLines += 1
                            resumeOffset = lines.lineEnd
                        } else {
                            retaining = false
                        }
                    }
                } catch {
                    invalid += 1
                    if problems.count < Self.reportedProblemLimit { problems.append(ImportProblem(line: number, reason: error.reason)) }
                    if retaining {
                        // The write pass skips it as well (and counts it among the lines when it was read at all).
                        if bytes != nil { retainedLines += 1 }
                        resumeOffset = lines.lineEnd
                    }
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
        let dataFolder = (archivePath as NSString).deletingLastPathComponent
        // Absolute, so an export's relative `file` names are found (and checked) beside a file given as `x.jsonl`.
        let folder = ((path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path) as NSString)
            .deletingLastPathComponent
        var done = 0
        var lastReport = Date.distantPast
        var committer = BatchCommitter(writer: writer, transactionBudget: transactionBudget, maximumBatch: Self.batchSize,
                                       expectedMessages: valid) { events, outcomes in
            summary.count(events, outcomes)
            let now = Date()
            if now.timeIntervalSince(lastReport) >= 0.2 {
                lastReport = now
                progress(ExportProgress(done: done, total: valid, elapsedSeconds: now.timeIntervalSince(started)))
            }
        }
        func write(_ item: ImportItem) throws {
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
                if var vCard, !newer.vCard {
                    // Only a photo inside this archive's folder (its avatars/) is kept; another machine's path,
                    // or any other file, is dropped (the photo hash stays; the agent fetches it again).
                    if let photo = vCard.photoPath, !FileStore.resolves(photo, inside: dataFolder) {
                        summary.pathsRefused += 1
                        vCard.photoPath = nil
                    }
                    try committer.add(.vCard(vCard))
                }
                summary.contacts += 1
            }
        }
        do {
            summary.lines += retainedLines
            retained.reverse()
            while let item = retained.popLast() { try write(item) }
            if !retaining {
                try lines.forEachLine(from: resumeOffset) { _, bytes in
                    guard let bytes else { return true }
                    if Self.isBlank(bytes) { return true }
                    summary.lines += 1
                    guard let item = try? ImportLineDecoder.decode(bytes, addresses: addresses) else { return true }
                    summary.linesDecodedTwice += 1
                    try write(item)
                    return true
                }
            }
            try committer.finish()
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
    /// folder and inside it), checked against its recorded SHA-256, or the store's own copy when it already has
    /// one. An absolute path (`local_path` of an old archive) is only read when it lies inside this archive's
    /// file store: anything else (`/etc/passwd`) is dropped and counted, never kept as a reference that later
    /// exports would copy or link. A stored file that cannot be restored goes back to `pending` (the agent
    /// downloads it again if the link still works), keeping its SHA-256 as an advertised hash so that the
    /// download is checked.
    private func restore(_ attachment: inout AttachmentRecord, beside folder: String, store: FileStore, summary: inout ImportSummary) {
        // An old archive's reference inside the store stays as it was (an export checks it again before copying).
        if attachment.sha256 == nil, let path = attachment.localPath, path.hasPrefix("/"), FileStore.resolves(path, inside: store.root) { return }
        var source = attachment.localPath.map { $0.hasPrefix("/") ? $0 : folder + "/" + $0 }
        if let path = attachment.localPath, let candidate = source,
           !FileStore.resolves(candidate, inside: path.hasPrefix("/") ? store.root : folder) {
            summary.pathsRefused += 1
            source = nil
        }
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
