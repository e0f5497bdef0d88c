import Foundation
import RoostArchive
import RoostCore

/// Smaller copies of large pictures for the pages: a 12 MB phone photo shows through a copy of at most
/// `ArchiveBrowser.previewSide` pixels, as in the html export (same thresholds, same `ThumbnailMaker`,
/// gdk-pixbuf), and the full file is one click away. A picture under the thresholds is sent as it is.
///
/// Nothing reads a picture on the server's thread: its header (the size), like the copy, is read on a worker
/// (`ServerWorkers`), one picture at a time (a large JPEG takes a few hundred milliseconds), each file once (by its
/// SHA-256), into a private temporary folder that goes with the server: the view writes nothing next to the archive.
/// The folder holds at most `cacheBytes` of copies (`PreviewCache`: the least recently shown go first, and are made
/// again when asked for), so a server that runs for months while its user browses years of pictures does not fill
/// the disk; it is removed when the server stops. When no copy can be made (not a picture gdk-pixbuf reads, no
/// folder) or too many wait, the picture itself is sent; a picture too large to decode (`ThumbnailLimits`: a
/// 20000×20000 PNG) is not shown at all (422), its link still opens it.
final class Previews {
    private let maker: any ThumbnailMaker
    private let workers: ServerWorkers
    private let cache: PreviewCache?
    /// SHA-256 of pictures shown as they are (small enough, or no copy could be made).
    private var asTheyAre = Set<String>()
    /// SHA-256 of pictures too large to decode, with their size.
    private var tooLarge: [String: (width: Int, height: Int)] = [:]
    /// Pictures remembered as shown as they are (or too large), at most (then the set starts again: each costs a header read).
    static let asTheyAreLimit = 10_000
    /// Bytes of copies kept on disk, at most.
    static let cacheBytes: Int64 = 64 << 20
    /// Requests waiting for the copy of a file (by SHA-256), each with the picture's own path and its answer.
    private var waiting: [String: [(exchange: HTTPExchange, source: String, send: (String) -> Void)]] = [:]
    private var queue: [(sha256: String, source: String, bytes: Int64)] = []
    private var busy = false
    /// Files waiting for a copy, at most; more are answered with the picture itself.
    static let queueLimit = 64

    /// What the worker found.
    private enum Outcome {
        case copy(String)
        case asItIs
        case tooLarge(width: Int, height: Int)
    }

    init(maker: any ThumbnailMaker, workers: ServerWorkers) {
        self.maker = maker
        self.workers = workers
        cache = PreviewCache(byteLimit: Self.cacheBytes)
    }

    /// Removes the copies and their folder (the server stops, its workers are back).
    func stop() {
        cache?.removeAll()
    }

    /// Answers `exchange` with what a page shows of the stored picture at `source` (`bytes` long): `send` answers
    /// with a file (the copy, or `source`).
    func serve(_ exchange: HTTPExchange, sha256: String, source: String, bytes: Int64, send: @escaping (String) -> Void) {
        if asTheyAre.contains(sha256) { return send(source) }
        if let size = tooLarge[sha256] { return refuse(exchange, size) }
        if let copy = cache?.path(for: sha256) { return send(copy) }
        if waiting[sha256] != nil {
            exchange.pause()
            waiting[sha256]?.append((exchange, source, send))
            return
        }
        guard cache != nil, queue.count < Self.queueLimit, !workers.stopping else { return send(source) }
        exchange.pause()
        waiting[sha256] = [(exchange, source, send)]
        queue.append((sha256, source, bytes))
        next()
    }

    private func refuse(_ exchange: HTTPExchange, _ size: (width: Int, height: Int)) {
        exchange.respond(status: 422, contentType: "text/plain; charset=utf-8",
                         body: "The picture is too large to show here (\(size.width)×\(size.height) pixels); its link opens the file.\n")
    }

    private func next() {
        guard !busy, let folder = cache?.folder, !queue.isEmpty else { return }
        let job = queue.removeFirst()
        let maker = self.maker
        let started = workers.start(name: "roost-serve-preview", { cancellation -> Outcome in
            // Small enough as it is? (The file's size and its picture header only.)
            guard let probe = maker.probe(job.source) else { return .asItIs }
            guard probe.decodable else { return .tooLarge(width: probe.width, height: probe.height) }
            guard job.bytes > ArchiveBrowser.previewAboveBytes || max(probe.width, probe.height) > ArchiveBrowser.previewAbovePixels else {
                return .asItIs
            }
            let copy = maker.thumbnail(of: job.source, to: folder + "/" + job.sha256, maxSide: ArchiveBrowser.previewSide,
                                       isCancelled: { cancellation.isCancelled })
            return copy.map { .copy($0.path) } ?? .asItIs
        }, done: { [self] outcome in finish(job.sha256, outcome) })
        busy = started
        if !started { finish(job.sha256, .asItIs) }
    }

    private func remember(_ sha256: String, _ outcome: Outcome) {
        if asTheyAre.count + tooLarge.count >= Self.asTheyAreLimit {
            asTheyAre.removeAll(keepingCapacity: true)
            tooLarge.removeAll(keepingCapacity: true)
        }
        switch outcome {
        case .copy(let path): cache?.add(sha256, path: path)
        case .asItIs: asTheyAre.insert(sha256)
        case .tooLarge(let width, let height): tooLarge[sha256] = (width, height)
        }
    }

    private func finish(_ sha256: String, _ outcome: Outcome) {
        busy = false
        remember(sha256, outcome)
        for request in waiting.removeValue(forKey: sha256) ?? [] where !request.exchange.finished {
            switch outcome {
            case .copy(let path): request.send(path)
            case .asItIs: request.send(request.source)
            case .tooLarge(let width, let height): refuse(request.exchange, (width, height))
            }
            request.exchange.resume()
        }
        next()
    }
}

/// The copies of `Previews` in their private temporary folder: at most `byteLimit` bytes of them, the least
/// recently used removed first (the newest copy stays even when it alone is larger). Removing a copy while it
/// is being sent is harmless: a file answer is mapped, so it outlives the unlink. `removeAll` removes the folder.
final class PreviewCache {
    let folder: String
    let byteLimit: Int64
    private(set) var bytes: Int64 = 0
    private var entries: [String: (path: String, bytes: Int64, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    static let folderPrefix = "roost-serve-previews-"

    /// nil when no temporary folder could be made. The folder's name carries this process's id, so a server that
    /// could not remove its folder (killed with SIGKILL, a crash) has it removed by the next one.
    init?(byteLimit: Int64, parent: String = NSTemporaryDirectory()) {
        PrivateTemporaryFolder.sweep(prefix: Self.folderPrefix, parent: parent)
        guard let made = PrivateTemporaryFolder.make(prefix: Self.folderPrefix, parent: parent) else { return nil }
        folder = made
        self.byteLimit = byteLimit
    }

    var count: Int { entries.count }

    /// The copy of `key`, if kept (and still on disk); it becomes the most recently used.
    func path(for key: String) -> String? {
        guard let entry = entries[key] else { return nil }
        guard FileManager.default.fileExists(atPath: entry.path) else {
            forget(key)
            return nil
        }
        clock += 1
        entries[key]?.used = clock
        return entry.path
    }

    /// Keeps the copy at `path` (a file in `folder`) for `key`, then removes the least recently used copies
    /// until the total is within `byteLimit`.
    func add(_ key: String, path: String) {
        if entries[key] != nil { forget(key) }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
        clock += 1
        entries[key] = (path, size, clock)
        bytes += size
        while bytes > byteLimit, entries.count > 1,
              let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key, oldest != key {
            try? FileManager.default.removeItem(atPath: entries[oldest]!.path)
            forget(oldest)
        }
    }

    private func forget(_ key: String) {
        if let entry = entries.removeValue(forKey: key) { bytes -= entry.bytes }
    }

    func removeAll() {
        entries.removeAll()
        bytes = 0
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Private folders of the web view under `$TMPDIR`, named `PREFIX<pid>-XXXXXX` (mkdtemp: mode 0700, a name nobody
/// else could have chosen), and the sweep that removes those of servers that are gone: a server killed before it
/// could remove its own (SIGKILL, a crash) leaves them to the next one.
enum PrivateTemporaryFolder {
    static func make(prefix: String, parent: String = NSTemporaryDirectory()) -> String? {
        var template = Array((parent + "/" + prefix + "\(getpid())-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) })
    }

    /// Removes this user's folders in `parent` named with `prefix` and the id of a process that no longer runs (a
    /// reused id keeps a folder until a later sweep: harmless), and those of older versions, named without an id,
    /// untouched for a day.
    static func sweep(prefix: String, parent: String = NSTemporaryDirectory()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where name.hasPrefix(prefix) {
            var info = stat()
            guard lstat(parent + "/" + name, &info) == 0, info.st_uid == getuid(), (info.st_mode & S_IFMT) == S_IFDIR else { continue }
            let fields = name.dropFirst(prefix.count).split(separator: "-")
            if fields.count == 2, let pid = pid_t(fields[0]), pid > 0 {
                guard pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            } else {
                guard fields.count == 1, time(nil) - info.st_mtim.tv_sec > 86_400 else { continue }
            }
            try? FileManager.default.removeItem(atPath: parent + "/" + name)
        }
    }
}
