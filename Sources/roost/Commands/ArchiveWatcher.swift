import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Wakes `roost log --follow` when the archive changes: inotify on the archive's folder, for writes to the
/// archive or its write-ahead log (every commit of any writer touches one of them). A wake-up, not polling;
/// bursts of commits coalesce because the reader drains every pending event before it yields once.
final class ArchiveWatcher: Sendable {
    let changes: AsyncStream<Void>
    private let descriptor: Int32

    init?(archivePath: String) {
        let folder = (archivePath as NSString).deletingLastPathComponent
        let names: Set<String> = [(archivePath as NSString).lastPathComponent, (archivePath as NSString).lastPathComponent + "-wal"]
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, folder, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        changes = stream
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                if Self.mentions(names, in: buffer[0..<count]) { continuation.yield() }
            }
            continuation.finish()
        }
        thread.name = "roost.follow"
        thread.start()
    }

    deinit { close(descriptor) }

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
