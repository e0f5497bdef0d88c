#if canImport(Glibc)
import Glibc
#endif

/// Wakes a thread that waits in `poll(2)`: `wake` writes one byte to the pipe (never blocking: a pipe too full to
/// take it wakes the thread anyway), the thread polls `descriptor` and `drain`s it. The archive-change watcher's and
/// the mail mirror's `stop`, and the mirror's wake-up after each commit of the archive writer.
package final class WakePipe: Sendable {
    /// The read end, for `poll(2)`.
    package let descriptor: Int32
    private let writeEnd: Int32

    /// nil when no pipe can be made (out of descriptors).
    package init?() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        descriptor = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(descriptor)
        close(writeEnd)
    }

    package func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Reads every byte written so far.
    package func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }
}
