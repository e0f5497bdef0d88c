import Foundation
import RoostArchive
import RoostNotify

/// Smaller copies of large pictures for the pages: a 12 MB phone photo shows through a copy of at most
/// `ArchiveBrowser.previewSide` pixels, as in the html export (same thresholds, same `ThumbnailMaker`,
/// gdk-pixbuf), and the full file is one click away. A picture under the thresholds is sent as it is.
///
/// Copies are made one at a time on a worker thread (a large JPEG takes a few hundred milliseconds, which the
/// server's thread must not spend), each file once (by its SHA-256), into a private temporary folder that
/// goes with the server: the view writes nothing next to the archive. When no copy can be made (not a
/// picture gdk-pixbuf reads, no folder) or too many wait, the picture itself is sent.
final class Previews {
    private let maker: any ThumbnailMaker
    private let thread: GMainThread
    private let folder: String?
    /// SHA-256 → the copy, or nil when the picture itself is shown.
    private var made: [String: String?] = [:]
    /// Requests waiting for the copy of a file (by SHA-256), each with the picture's own path and its answer.
    private var waiting: [String: [(exchange: HTTPExchange, source: String, send: (String) -> Void)]] = [:]
    private var queue: [(sha256: String, source: String)] = []
    private var busy = false
    /// Files waiting for a copy, at most; more are answered with the picture itself.
    static let queueLimit = 64

    init(maker: any ThumbnailMaker, thread: GMainThread) {
        self.maker = maker
        self.thread = thread
        var template = Array((NSTemporaryDirectory() + "/roost-serve-previews-XXXXXX").utf8CString)
        folder = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }.map { String(cString: $0) }
    }

    deinit {
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Answers `exchange` with what a page shows of the stored picture at `source`: `send` answers with a file
    /// (the copy, or `source`).
    func serve(_ exchange: HTTPExchange, sha256: String, source: String, send: @escaping (String) -> Void) {
        if let known = made[sha256] { return send(known ?? source) }
        if waiting[sha256] != nil {
            exchange.pause()
            waiting[sha256]?.append((exchange, source, send))
            return
        }
        // Small enough as it is? (Reads the file's size and its picture header only.)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: source)[.size] as? Int64) ?? 0
        let pixels = maker.dimensions(of: source).map { max($0.width, $0.height) } ?? 0
        guard folder != nil, pixels > 0, bytes > ArchiveBrowser.previewAboveBytes || pixels > ArchiveBrowser.previewAbovePixels else {
            made[sha256] = .some(nil)
            return send(source)
        }
        guard queue.count < Self.queueLimit else { return send(source) }
        exchange.pause()
        waiting[sha256] = [(exchange, source, send)]
        queue.append((sha256, source))
        next()
    }

    private func next() {
        guard !busy, let folder, !queue.isEmpty else { return }
        busy = true
        let job = queue.removeFirst()
        let maker = self.maker
        let me = OnServerThread(value: self)
        let worker = Thread {
            let copy = maker.thumbnail(of: job.source, to: folder + "/" + job.sha256, maxSide: ArchiveBrowser.previewSide)?.path
            me.value.thread.run { me.value.finish(job.sha256, copy: copy) }
        }
        worker.name = "roost-serve-preview"
        worker.start()
    }

    private func finish(_ sha256: String, copy: String?) {
        busy = false
        made[sha256] = .some(copy)
        for request in waiting.removeValue(forKey: sha256) ?? [] where !request.exchange.finished {
            request.send(copy ?? request.source)
            request.exchange.resume()
        }
        next()
    }
}
