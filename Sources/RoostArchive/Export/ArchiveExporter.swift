import RoostCore
import Foundation

/// Writes a selection of the archive to files in one of the `ExportFormat`s (see docs/export.md).
///
/// Everything is read from one snapshot through cursors, so memory stays flat however large the archive;
/// output is built under a temporary name and renamed into place only when complete.
public struct ArchiveExporter: Sendable {
    public let reader: ArchiveReader

    public init(reader: ArchiveReader) {
        self.reader = reader
    }

    /// Exports and returns what was written. `progress` is called a few times per second from this thread.
    public func export(_ options: ExportOptions, to destination: ExportDestination,
                       progress: @escaping (ExportProgress) -> Void = { _ in }) throws(ExportError) -> ExportSummary {
        let writesFolder = !options.format.canStream || options.split != .none
        var staged: StagedOutput?
        var single: ByteSink?
        var attachmentsFolder: StagedOutput?
        var copier: AttachmentCopier?
        let displayRoot: String
        switch destination {
        case .stream(let descriptor):
            if !options.format.canStream {
                throw .needsPath(reason: "--format \(options.format.rawValue) writes a folder; give --output PATH")
            }
            if options.split != .none {
                throw .needsPath(reason: "--split \(options.split.rawValue) writes one file per part; give --output FOLDER")
            }
            single = ByteSink(descriptor: descriptor, owns: false, displayPath: "standard output")
            displayRoot = "standard output"
        case .path(let path):
            let archiveFolder = (reader.path as NSString).deletingLastPathComponent
            let output = try StagedOutput(finalPath: path, isFolder: writesFolder, force: options.force)
            staged = output
            displayRoot = output.finalPath
            if writesFolder {
                if options.copyAttachments {
                    let root = output.stagingPath
                    copier = AttachmentCopier(linkBase: "", archiveFolder: archiveFolder) { () throws(ExportError) -> String in root }
                }
            } else {
                single = try ByteSink.create(path: output.stagingPath, displayPath: output.finalPath)
                if options.copyAttachments {
                    let name = URL(fileURLWithPath: output.finalPath).lastPathComponent + "_files"
                    let folderPath = URL(fileURLWithPath: output.finalPath).deletingLastPathComponent().path + "/" + name
                    let force = options.force
                    copier = AttachmentCopier(linkBase: name + "/", archiveFolder: archiveFolder) { () throws(ExportError) -> String in
                        if let attachmentsFolder { return attachmentsFolder.stagingPath }
                        let folder = try StagedOutput(finalPath: folderPath, isFolder: true, force: force)
                        attachmentsFolder = folder
                        return folder.stagingPath
                    }
                }
            }
        }

        var summary: ExportSummary
        do {
            summary = try reader.withSnapshot(mapped: true) { database in
                try run(options, database: database, rootFolder: writesFolder ? staged?.stagingPath : nil,
                        displayRoot: displayRoot, single: single, copier: copier, progress: progress)
            }
        } catch let error as ExportError {
            throw error
        } catch let error as ArchiveError {
            throw .archive(error)
        } catch {
            // Not expected: the snapshot turns SQLite failures into ArchiveError and writers throw ExportError.
            throw .archive(.invalidRecord("\(error)"))
        }
        try attachmentsFolder?.commit()
        try staged?.commit()
        summary.outputPath = staged?.finalPath
        return summary
    }

    private func run(_ options: ExportOptions, database: Database, rootFolder: String?, displayRoot: String,
                     single: ByteSink?, copier: AttachmentCopier?,
                     progress: @escaping (ExportProgress) -> Void) throws -> ExportSummary {
        let clock = ZoneClock(timeZone: options.timeZone)
        let compiled = try reader.compile(options.query, now: options.now, timeZone: options.timeZone, account: options.account,
                                          conversation: options.conversation, database: database)
        // `--since-last`: the cursor and the newest change are read in the export's snapshot.
        var feed: (after: Int64?, upTo: Int64)?
        if let name = options.sinceCursor { feed = (try ChangeFeed.cursor(name, database), try ChangeFeed.latest(database)) }
        var selection = try ExportSelection(compiled: compiled, account: options.account,
                                            everything: options.selectsEverything && feed?.after == nil, database: database)
        if let feed, let after = feed.after { selection.changed = (after, feed.upTo) }
        let writer = Self.writer(for: options.format)
        var planner = ExportPlanner(selection: selection, database: database, clock: clock)
        if options.format == .jsonl { planner.withoutMessages = options.include.intersection([.states, .presence]) }
        let partitions = try planner.plan(split: options.split, listConversations: writer.byConversation)
        let contacts = try ContactDirectory(database: database, selection: selection)
        let accountsInPlan = Set(partitions.flatMap { $0.slices.map(\.accountID) })
        let total = partitions.reduce(0) { $0 + $1.messageCount }
        let context = ExportContext(
            options: options, clock: clock, contacts: contacts, selection: selection, database: database,
            rootFolder: rootFolder, displayRoot: displayRoot, attachments: copier, multipleAccounts: accountsInPlan.count > 1,
            total: total, progress: progress)
        let stream = ExportEventStream(
            database: database, selection: selection,
            reading: try MessageRowReading(database, accounts: selection.accounts, rows: total),
            includeRaw: writer.needsRawStanzas, includeStates: options.include.contains(.states),
            includePresence: options.include.contains(.presence), windows: nil)
        var names: [String: FileNameAllocator] = [:]
        if let single { context.adopt(single) }

        for partition in partitions {
            let windowed = selection.everything ? stream : stream.restricted(to: partition.slices)
            let target: PartitionTarget
            var partitionSink: ByteSink?
            if let single {
                target = .file(single, depth: 0)
            } else if let ext = options.format.fileExtension {
                let components: [String]
                if let slice = partition.single {
                    components = context.conversationComponents(slice, ext: ext, allocator: &names)
                } else {
                    var allocator = names[""] ?? FileNameAllocator()
                    components = [allocator.unique(partition.month ?? "export", extension: ext)]
                    names[""] = allocator
                }
                let sink = try context.createFile(components)
                partitionSink = sink
                target = .file(sink, depth: components.count - 1)
            } else {
                target = .folder(partition.month.map { [$0] } ?? [])
            }
            try writer.beginPartition(partition, target: target, context: context)
            if writer.byConversation {
                for slice in partition.slices {
                    try writer.beginConversation(slice, context: context)
                    try windowed.run(scope: .init(slice: slice, timeRange: partition.timeRange)) { event in
                        try writer.write(event, context: context)
                        try context.checkWrites()
                        return true
                    }
                    try writer.endConversation(slice, context: context)
                }
            } else {
                try windowed.run(scope: .init(slice: partition.single, timeRange: partition.timeRange)) { event in
                    try writer.write(event, context: context)
                    try context.checkWrites()
                    return true
                }
            }
            try writer.endPartition(context: context)
            if let partitionSink { try context.close(partitionSink) }
        }
        try writer.finish(context: context)
        if let single {
            try context.close(single, sync: rootFolder == nil && !isStream(single))
        }
        if !partitions.contains(where: { $0.countedMessages != nil }) {
            context.summary.conversations = Set(partitions.flatMap { $0.slices.map(\.key) }).count
        }
        context.summary.attachmentsCopied += copier?.copiedCount ?? 0
        context.summary.attachmentsMissing += copier?.missingCount ?? 0
        context.reportProgress(force: true)
        context.summary.feedPosition = feed?.upTo
        return context.summary
    }

    private func isStream(_ sink: ByteSink) -> Bool { sink.displayPath == "standard output" }

    static func writer(for format: ExportFormat) -> any ExportWriter {
        switch format {
        case .jsonl: JSONLinesWriter()
        case .txt: TextTranscriptWriter()
        case .md: MarkdownWriter()
        case .csv: CSVWriter()
        case .html: HTMLWriter()
        case .mbox: MailWriter(layout: .mbox)
        case .maildir: MailWriter(layout: .maildir)
        }
    }
}

extension ExportEventStream {
    /// The same stream limited to a partial selection's conversations and their messages' span.
    func restricted(to slices: [ConversationSlice]) -> ExportEventStream {
        var windows: [SliceKey: ClosedRange<Int64>] = [:]
        for slice in slices {
            if let first = slice.firstTimestamp, let last = slice.lastTimestamp { windows[slice.key] = first...last }
        }
        return ExportEventStream(database: database, selection: selection, reading: reading, includeRaw: includeRaw,
                                 includeStates: includeStates, includePresence: includePresence, windows: windows)
    }
}
