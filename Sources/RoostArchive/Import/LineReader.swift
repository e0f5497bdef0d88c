#if canImport(Glibc)
import Glibc
#endif

/// Reads a file line by line in large chunks, handing each line (without its LF or CRLF) to a closure as
/// bytes, so import memory does not grow with the file. Owns its descriptor.
final class LineReader {
    private let descriptor: Int32
    let path: String
    private let chunkSize = 1 << 20
    private(set) var bytesRead: Int64 = 0

    init(path: String) throws(ImportError) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 { throw .unreadable(path: path, errno: errno) }
        self.path = path
    }

    deinit { close(descriptor) }

    var size: Int64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int64(status.st_size) : 0
    }

    /// Calls `body(lineNumber, bytes)` for every line; `body` returns false to stop.
    func forEachLine(_ body: (Int, UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        if lseek(descriptor, 0, SEEK_SET) < 0 { throw ImportError.unreadable(path: path, errno: errno) }
        bytesRead = 0
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        var carry: [UInt8] = []
        var lineNumber = 0
        func emit(_ line: UnsafeBufferPointer<UInt8>) throws -> Bool {
            lineNumber += 1
            var line = line
            if let last = line.last, last == 0x0D { line = UnsafeBufferPointer(rebasing: line.dropLast()) }
            return try body(lineNumber, line)
        }
        while true {
            let count = read(descriptor, chunk, chunkSize)
            if count < 0 {
                if errno == EINTR { continue }
                throw ImportError.unreadable(path: path, errno: errno)
            }
            if count == 0 { break }
            bytesRead += Int64(count)
            var start = 0
            for index in 0..<count where chunk[index] == 0x0A {
                let keepGoing: Bool
                if carry.isEmpty {
                    keepGoing = try emit(UnsafeBufferPointer(start: chunk + start, count: index - start))
                } else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: chunk + start, count: index - start))
                    keepGoing = try carry.withUnsafeBufferPointer { try emit($0) }
                    carry.removeAll(keepingCapacity: true)
                }
                if !keepGoing { return }
                start = index + 1
            }
            if start < count { carry.append(contentsOf: UnsafeBufferPointer(start: chunk + start, count: count - start)) }
        }
        if !carry.isEmpty { _ = try carry.withUnsafeBufferPointer { try emit($0) } }
    }
}
