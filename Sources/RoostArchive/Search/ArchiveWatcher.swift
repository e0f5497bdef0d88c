import Foundation
import RoostCore
import Synchronization
internal import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// Tells a reader when another connection committed to the archive: the one change watcher, used by `roost serve`
/// (`LiveHub`, live pages) and `roost log --follow`.
///
/// What wakes it: inotify on the archive's folder, for writes to the archive or its write-ahead log (every commit of
/// any writer — the agent, `roost import`, `roost read` — touches one of them), so whichever process writes, nothing
/// polls. What confirms a change: `PRAGMA data_version` on the reader's connection, which moves only when another
/// connection committed (a checkpoint or the reader's own reads do not count). SQLite publishes a commit in the WAL's
/// shared-memory index after the write that raised the file event (an fsync later), and no file event follows, so a
/// wake-up that shows no new version yet is looked at again after 20, 100, 400 and 1500 ms; a file event meanwhile
/// starts the looks again. `changed` is called once per confirmed change, on the watcher's thread
/// (`roost.archive.watch`), however many commits it covers.
///
/// A writer of the same process (the agent's, for the web view in `roost run`) needs no look: given as `writer`, each
/// of its commits, once published, wakes the thread through its pipe (`ArchiveWriter.onCommit`) and the data version
/// is read at once. The file events and their looks stay for the commits of other processes (`roost read`,
/// `roost import`), which no event follows once published, and which their file events cannot be told apart from.
public final class ArchiveWatcher: Sendable {
    /// How long after a file event the data version is looked at, each time it shows nothing new (milliseconds).
    static let looks: [Int] = [20, 100, 400, 1500]

    private let inotify: Int32
    private let wakeUp: WakePipe
    private let flags = Flags()
    /// The thread's end (`stop` waits for it).
    private let end = OneShot<Void>()
    /// The thread's id in the kernel (`/proc/self/task/ID`), once it runs: what a test watches go away after `stop`.
    let kernelThread = OneShot<Int32>()

    /// What the pipe's byte means: `stop`, or (from `writer`'s commits) a commit to look at; one byte is pending at most.
    private final class Flags: Sendable {
        let state = Mutex((stopping: false, committed: false))
    }

    /// nil when inotify cannot watch the archive's folder.
    public convenience init?(reader: ArchiveReader, writer: ArchiveWriter? = nil, changed: @escaping @Sendable () -> Void) {
        self.init(reader: reader, writer: writer, looks: Self.looks, changed: changed)
    }

    /// `looks`: after a file event (tests leave them out to see the writer's wake-ups alone).
    init?(reader: ArchiveReader, writer: ArchiveWriter?, looks: [Int], changed: @escaping @Sendable () -> Void) {
        let path = reader.path
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let names: Set<String> = [name, name + "-wal"]
        let inotify = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard inotify >= 0 else { return nil }
        guard inotify_add_watch(inotify, folder, UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)) >= 0,
              let wakeUp = WakePipe() else {
            close(inotify)
            return nil
        }
        self.inotify = inotify
        self.wakeUp = wakeUp
        // Read before the thread starts: a commit from now on is a change.
        let version = (try? reader.dataVersion()) ?? 0
        let (end, flags, kernelThread) = (end, flags, kernelThread)
        writer?.onCommit {
            // Called on the writer's thread after each commit: a byte only when none is pending (the writer never waits).
            let first = flags.state.withLock { s in defer { s.committed = true }; return !s.committed && !s.stopping }
            if first { wakeUp.wake() }
        }
        startThread(named: "roost.archive.watch") {
            kernelThread.fulfil(roost_thread_id())
            Self.run(reader: reader, inotify: inotify, wake: wakeUp, flags: flags, names: names, version: version, looks: looks,
                     changed: changed)
            end.fulfil(())
        }
    }

    /// Ends the thread and waits for it: no `changed` call follows. Idempotent.
    public func stop() {
        let already = flags.state.withLock { s in defer { s.stopping = true }; return s.stopping }
        if !already { wakeUp.wake() }
        end.wait()
    }

    deinit {
        stop()
        close(inotify)
    }

    /// Waits in `poll(2)` for a file event, the next look, or a byte on `wake`: `stop`'s, or a commit of the writer.
    private static func run(reader: ArchiveReader, inotify: Int32, wake: WakePipe, flags: Flags, names: Set<String>, version: Int64,
                            looks schedule: [Int], changed: @Sendable () -> Void) {
        var version = version
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // The looks left since the first file event not yet confirmed, and when the next is due; a file event
        // during them (another commit) starts them again after the next look, which it never delays.
        var looks: ArraySlice<Int> = []
        var due = ContinuousClock.now
        var eventSinceLook = false
        while true {
            var descriptors = [pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
            var timeout: Int32 = -1
            if !looks.isEmpty {
                let left = due - ContinuousClock.now
                timeout = left <= .zero ? 0 : Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            }
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0 && errno != EINTR { return }
            if descriptors[1].revents != 0 {
                wake.drain()
                let (stopping, committed) = flags.state.withLock { s in defer { s.committed = false }; return (s.stopping, s.committed) }
                if stopping { return }
                // The writer's commit is published: one look, now.
                if committed {
                    let current = (try? reader.dataVersion()) ?? version
                    if current != version { changed() }
                    version = current
                }
                continue
            }
            if descriptors[0].revents != 0 {
                var mentioned = false
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { break }
                    if Self.mentions(names, in: buffer[0..<count]) { mentioned = true }
                }
                if mentioned && looks.isEmpty, let first = schedule.first {
                    looks = schedule[...]
                    due = ContinuousClock.now + .milliseconds(first)
                } else if mentioned {
                    eventSinceLook = true
                }
                continue
            }
            guard !looks.isEmpty, ContinuousClock.now >= due else { continue }
            looks.removeFirst()
            let current = (try? reader.dataVersion()) ?? version
            let moved = current != version
            version = current
            if moved { changed() }
            if eventSinceLook {
                eventSinceLook = false
                looks = schedule[...]
            } else if moved {
                looks = []
            }
            if let next = looks.first { due = ContinuousClock.now + .milliseconds(next) }
        }
    }

    /// Whether one of the `inotify_event`s in `bytes` is about a file named in `names`.
    private static func mentions(_ names: Set<String>, in bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= bytes.endIndex {
            let length = bytes.withUnsafeBytes { raw in
                raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex + 12, as: UInt32.self)
            }
            let nameStart = offset + header
            let nameEnd = min(nameStart + Int(length), bytes.endIndex)
            let name = String(decoding: bytes[nameStart..<nameEnd].prefix { $0 != 0 }, as: UTF8.self)
            if names.contains(name) { return true }
            offset = nameStart + Int(length)
        }
        return false
    }
}

extension ArchiveReader {
    /// Changes whenever another connection (the agent, an import) committed to the archive since the last call
    /// (`PRAGMA data_version`): what `ArchiveWatcher` confirms a file event with.
    public func dataVersion() throws(ArchiveError) -> Int64 {
        try withDatabase { database throws(SQLiteError) in
            try database.cached("PRAGMA data_version").scalarInt() ?? 0
        }
    }
}
