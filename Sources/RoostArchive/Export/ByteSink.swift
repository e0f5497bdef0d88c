#if canImport(Glibc)
import Glibc
#endif
import RoostCore

/// A buffered writer to a file descriptor, for output that may be gigabytes. Appends never throw (they are
/// on the hot path of every message); the first write error is kept in `failure`, later output is dropped,
/// and `finish()` reports it. Owns and closes the descriptor when it opened it.
final class ByteSink {
    /// The file's final name (or "standard output"), for messages.
    let displayPath: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let capacity: Int
    private let buffer: UnsafeMutablePointer<UInt8>
    private var count = 0
    private(set) var bytesWritten: Int64 = 0
    private(set) var failure: ExportError?
    private var closed = false
    /// Set for a sink in memory (`memory()`): what `drain` would write is kept here instead.
    private var kept: [UInt8]?

    /// Creates a new file (never follows or replaces an existing one), readable by the owner only: an export
    /// holds private conversations.
    static func create(path: String, displayPath: String? = nil, bufferSize: Int = 1 << 20) throws(ExportError) -> ByteSink {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor < 0 { throw .io(path: displayPath ?? path, operation: "create", errno: errno) }
        return ByteSink(descriptor: descriptor, owns: true, displayPath: displayPath ?? path, bufferSize: bufferSize)
    }

    init(descriptor: Int32, owns: Bool, displayPath: String, bufferSize: Int = 1 << 20) {
        capacity = bufferSize
        self.descriptor = descriptor
        self.ownsDescriptor = owns
        self.displayPath = displayPath
        buffer = .allocate(capacity: capacity)
    }

    /// A sink that keeps its bytes in memory (one `--json` line of the CLI): read them with `takeBytes()`.
    static func memory() -> ByteSink {
        let sink = ByteSink(descriptor: -1, owns: false, displayPath: "memory", bufferSize: 4096)
        sink.kept = []
        return sink
    }

    /// What a `memory()` sink holds, which it then forgets.
    func takeBytes() -> [UInt8] {
        drain()
        defer { kept = [] }
        return kept ?? []
    }

    deinit {
        buffer.deallocate()
        if ownsDescriptor && !closed { close(descriptor) }
    }

    @inline(__always)
    func append(_ byte: UInt8) {
        if count == capacity { drain() }
        buffer[count] = byte
        count += 1
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard var source = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            if count == capacity { drain() }
            let chunk = min(remaining, capacity - count)
            (buffer + count).update(from: source.assumingMemoryBound(to: UInt8.self), count: chunk)
            count += chunk
            source += chunk
            remaining -= chunk
        }
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Writes out the buffer, keeping the first error.
    func drain() {
        defer { count = 0 }
        guard failure == nil else { return }
        if kept != nil {
            kept?.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
            bytesWritten += Int64(count)
            return
        }
        var offset = 0
        while offset < count {
            let written = write(descriptor, buffer + offset, count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                failure = .io(path: displayPath, operation: "write", errno: errno)
                return
            }
            offset += written
        }
        bytesWritten += Int64(count)
    }

    /// Flushes, optionally syncs to disk, and closes. Throws the first write error, if any. `modified`: the file's
    /// modification (and access) time to set, in milliseconds since 1970 (a Maildir message's: see `MailWriter`).
    func finish(sync: Bool, modified: Int64? = nil) throws(ExportError) {
        drain()
        if let failure { closeNow(); throw failure }
        if let modified {
            let (seconds, milliseconds) = CivilTime.floorDivide(modified, 1000)
            let time = timespec(tv_sec: Int(seconds), tv_nsec: Int(milliseconds) * 1_000_000)
            var times = (time, time)
            // Best effort: a file system that cannot hold the time (a year 9999 message) keeps the file, at its own time.
            _ = withUnsafePointer(to: &times) { $0.withMemoryRebound(to: timespec.self, capacity: 2) { futimens(descriptor, $0) } }
        }
        if sync && fsync(descriptor) != 0 && errno != EINVAL && errno != EROFS {
            let code = errno
            closeNow()
            throw .io(path: displayPath, operation: "write", errno: code)
        }
        if ownsDescriptor && !closed {
            closed = true
            if close(descriptor) != 0 && errno != EINTR { throw .io(path: displayPath, operation: "close", errno: errno) }
        }
    }

    private func closeNow() {
        if ownsDescriptor && !closed {
            closed = true
            close(descriptor)
        }
    }
}
