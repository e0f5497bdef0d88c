#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Somewhere text goes: a file descriptor in the program, a buffer in tests.
protocol TextSink: Sendable {
    func write(_ text: String)
}

/// Writes straight to a file descriptor, retrying short writes and EINTR, so output is never half-lost
/// and always in order between stdout and stderr.
struct FileDescriptorSink: TextSink {
    let descriptor: Int32

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
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
    private let pending = Mutex<String>("")
    private static let capacity = 1 << 16

    init(target: any TextSink) {
        self.target = target
    }

    func write(_ text: String) {
        let full = pending.withLock { pending -> String? in
            pending += text
            guard pending.utf8.count >= Self.capacity else { return nil }
            defer { pending = "" }
            return pending
        }
        if let full { target.write(full) }
    }

    func flush() {
        let text = pending.withLock { pending -> String in
            defer { pending = "" }
            return pending
        }
        if !text.isEmpty { target.write(text) }
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
