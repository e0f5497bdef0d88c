import RoostCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What format writers share during one export: options, calendar, names, the staged output, attachment
/// copies, counters and progress.
final class ExportContext {
    let options: ExportOptions
    let clock: ZoneClock
    let contacts: ContactDirectory
    let selection: ExportSelection
    let database: Database
    /// The staged folder of a folder export (html, maildir, any split), nil for one file or a stream.
    let rootFolder: String?
    let attachments: AttachmentCopier?
    /// Whether several accounts are exported, so paths get an account folder.
    let multipleAccounts: Bool
    /// The final path, named in error messages instead of the staging name.
    let displayRoot: String
    var summary = ExportSummary()
    private var openSinks: [ObjectIdentifier: ByteSink] = [:]
    private let progress: (ExportProgress) -> Void
    private let total: Int
    private let started = Date()
    private var lastReport = Date.distantPast

    init(options: ExportOptions, clock: ZoneClock, contacts: ContactDirectory, selection: ExportSelection, database: Database,
         rootFolder: String?, displayRoot: String, attachments: AttachmentCopier?, multipleAccounts: Bool, total: Int,
         progress: @escaping (ExportProgress) -> Void) {
        self.options = options
        self.clock = clock
        self.contacts = contacts
        self.selection = selection
        self.database = database
        self.rootFolder = rootFolder
        self.displayRoot = displayRoot
        self.attachments = attachments
        self.multipleAccounts = multipleAccounts
        self.total = total
        self.progress = progress
    }

    // MARK: Files

    /// Creates a file at `components` under the staged folder (intermediate folders 0700). Names must
    /// already be safe (see `SafeFileName`).
    /// `foldersExist`: the folders were made by `createFolder` (maildir's `cur`), so no `mkdir` per file.
    func createFile(_ components: [String], bufferSize: Int = 1 << 20, foldersExist: Bool = false) throws(ExportError) -> ByteSink {
        guard let rootFolder else { preconditionFailure("a folder export without a staged folder") }
        var path = rootFolder
        for folder in components.dropLast() {
            path += "/" + folder
            if foldersExist { continue }
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .io(path: displayPath(components), operation: "create", errno: errno) }
        }
        let sink = try ByteSink.create(path: path + "/" + components[components.count - 1], displayPath: displayPath(components),
                                       bufferSize: bufferSize)
        openSinks[ObjectIdentifier(sink)] = sink
        return sink
    }

    func createFolder(_ components: [String]) throws(ExportError) {
        guard let rootFolder else { preconditionFailure("a folder export without a staged folder") }
        var path = rootFolder
        for folder in components {
            path += "/" + folder
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .io(path: displayPath(components), operation: "create", errno: errno) }
        }
    }

    /// Tracks a sink created elsewhere (the single output file) so write errors stop the export early.
    func adopt(_ sink: ByteSink) {
        openSinks[ObjectIdentifier(sink)] = sink
    }

    /// Flushes and closes a file; throws its first write error. `modified`: its modification time (milliseconds).
    func close(_ sink: ByteSink, sync: Bool = false, modified: Int64? = nil) throws(ExportError) {
        openSinks[ObjectIdentifier(sink)] = nil
        try sink.finish(sync: sync, modified: modified)
        summary.files += 1
        summary.bytes += sink.bytesWritten
    }

    /// Stops the export at the first failed write (a full disk should not cost the rest of a long export).
    func checkWrites() throws(ExportError) {
        if let isCancelled = options.isCancelled, isCancelled() { throw .cancelled }
        for sink in openSinks.values {
            if let failure = sink.failure { throw failure }
        }
    }

    private func displayPath(_ components: [String]) -> String {
        ([displayRoot] + components).joined(separator: "/")
    }

    // MARK: Naming

    /// Path components of a conversation's file inside its partition: an account folder when several
    /// accounts are exported, then the conversation. `ext` nil for folders (maildir).
    func conversationComponents(_ slice: ConversationSlice, ext: String?, allocator: inout [String: FileNameAllocator],
                                in parent: [String] = []) -> [String] {
        var components = parent
        if multipleAccounts { components.append(SafeFileName.component(slice.account)) }
        let folderKey = components.joined(separator: "/")
        var names = allocator[folderKey] ?? FileNameAllocator()
        names.reserve("index.html")
        names.reserve("attachments")
        names.reserve("avatars")
        components.append(names.unique(SafeFileName.component(slice.conversation), extension: ext))
        allocator[folderKey] = names
        return components
    }

    // MARK: Progress

    func messageWritten() {
        summary.messages += 1
        if summary.messages & 255 == 0 { reportProgress(force: false) }
    }

    func reportProgress(force: Bool) {
        let now = Date()
        guard force || now.timeIntervalSince(lastReport) >= 0.2 else { return }
        lastReport = now
        progress(ExportProgress(done: summary.messages, total: total, elapsedSeconds: now.timeIntervalSince(started)))
    }
}

