#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Somewhere text goes: a file descriptor in the program, a buffer in tests.
protocol TextSink: Sendable {
    func write(_ text: String)
    /// UTF-8 text as bytes (the lines of a transcript, written without making Strings).
    func write(bytes: UnsafeRawBufferPointer)
}

extension TextSink {
    func write(bytes: UnsafeRawBufferPointer) {
        write(String(decoding: bytes, as: UTF8.self))
    }
}

/// Writes straight to a file descriptor, retrying short writes and EINTR, so output is never half-lost
/// and always in order between stdout and stderr.
struct FileDescriptorSink: TextSink {
    let descriptor: Int32

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    func write(bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return // stdout closed or full disk: nothing sensible left to report it to
            }
            offset += written
        }
    }
}

/// Gathers text for another sink into writes of 64 KiB until `flush()`: for commands that print many lines and
/// then end (a transcript, all matches of a search), where one `write(2)` per line was most of their system
/// time. `Output.buffered()` makes one and flushes it before anything goes to stderr, so the two stay in order.
final class BufferedSink: TextSink {
    private let target: any TextSink
    private let pending = Mutex<[UInt8]>([])
    private static let capacity = 1 << 16

    init(target: any TextSink) {
        self.target = target
    }

    func write(_ text: String) {
        append { $0.append(contentsOf: text.utf8) }
    }

    func write(bytes: UnsafeRawBufferPointer) {
        append { $0.append(contentsOf: bytes) }
    }

    /// Lets `build` append UTF-8 text straight into the buffer.
    func append(_ build: (inout [UInt8]) -> Void) {
        let full = pending.withLock { pending -> [UInt8]? in
            build(&pending)
            guard pending.count >= Self.capacity else { return nil }
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        full?.withUnsafeBytes { target.write(bytes: $0) }
    }

    func flush() {
        let bytes = pending.withLock { pending -> [UInt8] in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        if !bytes.isEmpty { bytes.withUnsafeBytes { target.write(bytes: $0) } }
    }
}

/// Stderr behind a `BufferedSink` stdout: what stdout holds is written first.
struct FlushingSink: TextSink {
    let first: BufferedSink
    let target: any TextSink

    func write(_ text: String) {
        first.flush()
        target.write(text)
    }
}
