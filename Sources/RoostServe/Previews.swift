import Foundation
import RoostArchive
import RoostNotify

/// Smaller copies of large pictures for the pages: a 12 MB phone photo shows through a copy of at most
/// `ArchiveBrowser.previewSide` pixels, as in the html export (same thresholds, same `ThumbnailMaker`,
/// gdk-pixbuf), and the full file is one click away. A picture under the thresholds is sent as it is.
///
/// Copies are made one at a time on a worker thread (a large JPEG takes a few hundred milliseconds, which the
/// server's thread must not spend), each file once (by its SHA-256), into a private temporary folder that
/// goes with the server: the view writes nothing next to the archive. The folder holds at most
/// `cacheBytes` of copies (`PreviewCache`: the least recently shown go first, and are made again when asked
/// for), so a server that runs for months while its user browses years of pictures does not fill the disk;
/// it is removed when the server stops. When no copy can be made (not a picture gdk-pixbuf reads, no folder)
/// or too many wait, the picture itself is sent.
final class Previews {
    private let maker: any ThumbnailMaker
    private let thread: GMainThread
    private let cache: PreviewCache?
    /// SHA-256 of pictures shown as they are (small enough, or no copy could be made).
    private var asTheyAre = Set<String>()
    /// Pictures remembered as shown as they are, at most (then the set starts again: each costs a header read).
    static let asTheyAreLimit = 10_000
    /// Bytes of copies kept on disk, at most.
    static let cacheBytes: Int64 = 64 << 20
    /// Requests waiting for the copy of a file (by SHA-256), each with the picture's own path and its answer.
    private var waiting: [String: [(exchange: HTTPExchange, source: String, send: (String) -> Void)]] = [:]
    private var queue: [(sha256: String, source: String)] = []
    private var busy = false
    /// Files waiting for a copy, at most; more are answered with the picture itself.
    static let queueLimit = 64

    init(maker: any ThumbnailMaker, thread: GMainThread) {
        self.maker = maker
        self.thread = thread
        cache = PreviewCache(byteLimit: Self.cacheBytes)
    }

    /// Removes the copies and their folder (the server stops).
    func stop() {
        cache?.removeAll()
    }

    /// Answers `exchange` with what a page shows of the stored picture at `source`: `send` answers with a file
    /// (the copy, or `source`).
    func serve(_ exchange: HTTPExchange, sha256: String, source: String, send: @escaping (String) -> Void) {
        if asTheyAre.contains(sha256) { return send(source) }
        if let copy = cache?.path(for: sha256) { return send(copy) }
        if waiting[sha256] != nil {
            exchange.pause()
            waiting[sha256]?.append((exchange, source, send))
            return
        }
        // Small enough as it is? (Reads the file's size and its picture header only.)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: source)[.size] as? Int64) ?? 0
        let pixels = maker.dimensions(of: source).map { max($0.width, $0.height) } ?? 0
        guard cache != nil, pixels > 0, bytes > ArchiveBrowser.previewAboveBytes || pixels > ArchiveBrowser.previewAbovePixels else {
            remember(asItIs: sha256)
            return send(source)
        }
        guard queue.count < Self.queueLimit else { return send(source) }
        exchange.pause()
        waiting[sha256] = [(exchange, source, send)]
        queue.append((sha256, source))
        next()
    }

    private func next() {
        guard !busy, let folder = cache?.folder, !queue.isEmpty else { return }
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

    private func remember(asItIs sha256: String) {
        if asTheyAre.count >= Self.asTheyAreLimit { asTheyAre.removeAll(keepingCapacity: true) }
        asTheyAre.insert(sha256)
    }

    private func finish(_ sha256: String, copy: String?) {
        busy = false
        if let copy { cache?.add(sha256, path: copy) } else { remember(asItIs: sha256) }
        for request in waiting.removeValue(forKey: sha256) ?? [] where !request.exchange.finished {
            request.send(copy ?? request.source)
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
    /// could not remove its folder (killed with SIGKILL, a crash) has it removed by the next one (`sweep`).
    init?(byteLimit: Int64, parent: String = NSTemporaryDirectory()) {
        Self.sweep(parent)
        var template = Array((parent + "/" + Self.folderPrefix + "\(getpid())-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({ String(cString: $0) }) else { return nil }
        folder = made
        self.byteLimit = byteLimit
    }

    /// Removes the preview folders in `parent` of servers that no longer run: this user's folders named with a
    /// process id that no process has (a reused id keeps a folder until a later sweep: harmless).
    static func sweep(_ parent: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names where name.hasPrefix(folderPrefix) {
            let fields = name.dropFirst(folderPrefix.count).split(separator: "-")
            guard fields.count == 2, let pid = pid_t(fields[0]), pid > 0, pid != getpid() else { continue }
            var info = stat()
            guard lstat(parent + "/" + name, &info) == 0, info.st_uid == getuid(), (info.st_mode & S_IFMT) == S_IFDIR,
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: parent + "/" + name)
        }
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
