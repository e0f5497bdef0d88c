import Foundation
import RoostArchive
import RoostNotify

/// Exports started from a conversation page. Each runs on a thread of its own with its own read-only
/// connection (a long export never holds up the pages), writes under a private temporary folder, and is
/// answered as a download: the file, or a tar archive of the folder that html and maildir write. The
/// temporary files are removed once the answer holds them (the body is mapped, so it outlives the unlink).
final class ExportJobs {
    private let archivePath: String
    private let timeZone: TimeZone
    private let thread: GMainThread
    private let log: ServeLog
    private var running = 0
    /// Exports at once; more are asked to wait (each holds a read snapshot and disk space).
    static let limit = 2

    init(archivePath: String, timeZone: TimeZone, thread: GMainThread, log: ServeLog) {
        self.archivePath = archivePath
        self.timeZone = timeZone
        self.thread = thread
        self.log = log
    }

    func start(_ exchange: HTTPExchange, format: ExportFormat, account: String, conversation: String, include: Set<ExportInclusion>) {
        guard running < Self.limit else {
            exchange.setHeader("Retry-After", "10")
            return exchange.respond(status: 503, contentType: "text/html; charset=utf-8",
                                    body: WebPages.message(title: "Busy", text: "Other exports are running; try again when they are done."))
        }
        var template = Array((NSTemporaryDirectory() + "/roost-serve-export-XXXXXX").utf8CString)
        guard let folder = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else {
            return exchange.respond(status: 500, contentType: "text/html; charset=utf-8",
                                    body: WebPages.message(title: "Export failed", text: "No temporary folder could be made."))
        }
        running += 1
        exchange.pause()
        let stem = String(conversation.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || "@._-".unicodeScalars.contains($0) ? Character($0) : "_" })
        // The conversation by value: a JID or a room nick written into query text would be read as query language.
        let options = ExportOptions(format: format, account: account, conversation: conversation, include: include, timeZone: timeZone)
        let job = OnServerThread(value: (exchange, self))
        let archivePath = self.archivePath
        let thread = self.thread
        let worker = Thread {
            let output = folder + "/" + stem + (format.canStream ? "." + format.rawValue : "")
            let outcome: Result<ExportSummary, any Error>
            do {
                outcome = .success(try ArchiveExporter(reader: ArchiveReader(path: archivePath)).export(options, to: .path(output)))
            } catch {
                outcome = .failure(error)
            }
            Task {
                var file = output
                var failure: String?
                switch outcome {
                case .failure(let error): failure = "\(error)"
                case .success(let summary) where summary.messages == 0: failure = "The conversation holds no messages to export."
                case .success where !format.canStream:
                    file = output + "-\(format.rawValue).tar"
                    let tar = await ProcessRunner.run(argv: ["tar", "-C", folder, "-cf", file, stem], output: .capture(limit: 4096),
                                                      timeout: .seconds(600))
                    if tar.status != 0 {
                        failure = "tar could not pack the export: " + (tar.launchFailure ?? String(decoding: tar.output, as: UTF8.self))
                    }
                case .success: break
                }
                let result = OnServerThread(value: (file, failure))
                thread.run {
                    let (exchange, jobs) = job.value
                    jobs.finish(exchange, file: result.value.0, failure: result.value.1, folder: folder)
                }
            }
        }
        worker.name = "roost-serve-export"
        worker.start()
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
