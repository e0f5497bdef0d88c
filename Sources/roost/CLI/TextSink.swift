#if canImport(Glibc)
import Glibc
#endif

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
