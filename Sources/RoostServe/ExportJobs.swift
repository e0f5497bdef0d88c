import Foundation
import RoostArchive
import RoostCore

/// Exports started from a conversation page. Each runs on a worker thread (`ServerWorkers`) with its own read-only
/// connection (a long export never holds up the pages), writes under a private temporary folder, and is answered
/// as a download: the file, or a tar archive of the folder that html and maildir write. The temporary files are
/// removed once the answer holds them (the body is mapped, so it outlives the unlink); folders that a killed
/// server left behind are removed by the next one (`PrivateTemporaryFolder`). When the server stops, a running
/// export is cancelled and waited for.
final class ExportJobs {
    private let archivePath: String
    private let timeZone: TimeZone
    private let workers: ServerWorkers
    private let log: ServeLog
    private var running = 0
    /// Exports at once; more are asked to wait (each holds a read snapshot and disk space).
    static let limit = 2
    static let folderPrefix = "roost-serve-export-"

    init(archivePath: String, timeZone: TimeZone, workers: ServerWorkers, log: ServeLog) {
        self.archivePath = archivePath
        self.timeZone = timeZone
        self.workers = workers
        self.log = log
        PrivateTemporaryFolder.sweep(prefix: Self.folderPrefix)
    }

    func start(_ exchange: HTTPExchange, format: ExportFormat, account: String, conversation: String, include: Set<ExportInclusion>) {
        guard running < Self.limit, !workers.stopping else {
            exchange.setHeader("Retry-After", "10")
            return exchange.respond(status: 503, contentType: "text/html; charset=utf-8",
                                    body: WebPages.message(title: "Busy", text: "Other exports are running; try again when they are done."))
        }
        guard let folder = PrivateTemporaryFolder.make(prefix: Self.folderPrefix) else {
            return exchange.respond(status: 500, contentType: "text/html; charset=utf-8",
                                    body: WebPages.message(title: "Export failed", text: "No temporary folder could be made."))
        }
        running += 1
        exchange.pause()
        // The name inside the folder (and the archive) is the conversation's, made safe; never an option for tar.
        let stem = Self.stem(conversation)
        // The conversation by value: a JID or a room nick written into query text would be read as query language.
        let selected = ExportOptions(format: format, account: account, conversation: conversation, include: include, timeZone: timeZone)
        let archivePath = self.archivePath
        workers.start(name: "roost-serve-export", { cancellation -> (file: String, failure: String?) in
            var options = selected
            options.isCancelled = { cancellation.isCancelled }
            let output = folder + "/" + stem + (format.canStream ? "." + format.rawValue : "")
            let summary: ExportSummary
            do {
                summary = try ArchiveExporter(reader: ArchiveReader(path: archivePath)).export(options, to: .path(output))
            } catch ExportError.cancelled {
                return (output, "The web view is stopping; the export was cancelled.")
            } catch {
                return (output, "\(error)")
            }
            if summary.messages == 0 { return (output, "The conversation holds no messages to export.") }
            guard !format.canStream else { return (output, nil) }
            let file = output + "-\(format.rawValue).tar"
            return (file, Self.pack(folder: folder, name: stem, into: file))
        }, done: { [self] result in finish(exchange, file: result.file, failure: result.failure, folder: folder) })
    }

    /// The file name an export of `conversation` gets: letters, digits and `@._-` kept, anything else `_`, and never
    /// a leading `-` or `.` (an option for tar, a hidden file).
    static func stem(_ conversation: String) -> String {
        var stem = String(conversation.unicodeScalars.map {
            CharacterSet.alphanumerics.contains($0) || "@._-".unicodeScalars.contains($0) ? Character($0) : "_"
        })
        if stem.first == "-" || stem.first == "." || stem.isEmpty { stem = "_" + stem }
        return stem
    }

    /// Packs `folder/name` into the tar archive `file` with Debian's tar, through Roost's one process runner: nil, or
    /// what went wrong. `--` ends tar's options whatever the name. The folder holds hard links to the file store,
    /// and another export linking the same stored file meanwhile changes its link count, hence its ctime, which GNU
    /// tar reports as "file changed as we read it" (exit status 1). A stored file never changes (its name is its
    /// SHA-256) and the folder is private, so that change, told apart by tar saying nothing else, is no failure.
    static func pack(folder: String, name: String, into file: String) -> String? {
        let tar = ProcessRunner.runSynchronously(argv: ["tar", "--warning=no-file-changed", "-C", folder, "-cf", file, "--", name],
                                                 output: .capture(limit: 4096), timeout: .seconds(600), errorsInOutput: true)
        if let failure = tar.launchFailure { return "tar could not pack the export: \(failure)" }
        let said = String(decoding: tar.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if tar.status == 0 || (tar.status == 1 && said.isEmpty) { return nil }
        return "tar could not pack the export (exit status \(tar.status)): " + (said.isEmpty ? "no reason given" : said)
    }

    private func finish(_ exchange: HTTPExchange, file: String, failure: String?, folder: String) {
        running -= 1
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard !exchange.finished else { return }
        if let failure {
            log.warning("export failed: \(failure)")
            exchange.respond(status: 500, contentType: "text/html; charset=utf-8", body: WebPages.message(title: "Export failed", text: failure))
        } else {
            let name = URL(fileURLWithPath: file).lastPathComponent
            exchange.setHeader("Content-Disposition", "attachment; filename=\"\(name)\"")
            if !exchange.respond(status: 200, contentType: "application/octet-stream", file: file) {
                exchange.respond(status: 500, contentType: "text/html; charset=utf-8",
                                 body: WebPages.message(title: "Export failed", text: "The export could not be read back."))
            }
        }
        exchange.resume()
    }
}
