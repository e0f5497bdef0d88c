#if canImport(Glibc)
import Glibc
#endif

/// Reads a file line by line in large chunks, handing each line (without its LF or CRLF, and without a UTF-8
/// byte order mark at the start of the file) to a closure as bytes, so import memory does not grow with the
/// file: a line longer than `maxLineBytes` is not kept but skipped to its end and reported as such. Only
/// regular files (the importer reads them twice, the second time from where it stopped keeping decoded lines;
/// `/dev/zero` or a pipe would never end). Owns its descriptor.
final class LineReader {
    /// 16 MiB: far beyond any message (servers cap stanzas at a few hundred KiB), far below memory trouble.
    static let defaultMaxLineBytes = 16 << 20

    private let descriptor: Int32
    let path: String
    let maxLineBytes: Int
    private let chunkSize = 1 << 20
    private(set) var bytesRead: Int64 = 0
    /// During `forEachLine`'s call for a line: the file offset just past that line's end (its LF, or the end of the
    /// file) — where a later `forEachLine(from:)` goes on with the next line.
    private(set) var lineEnd: Int64 = 0

    init(path: String, maxLineBytes: Int = LineReader.defaultMaxLineBytes) throws(ImportError) {
        descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if descriptor < 0 { throw .unreadable(path: path, errno: errno) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw .notARegularFile(path: path)
        }
        self.path = path
        self.maxLineBytes = max(1, maxLineBytes)
    }

    deinit { close(descriptor) }

    var size: Int64 {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int64(status.st_size) : 0
    }

    /// Calls `body(lineNumber, bytes)` for every line from the file offset `offset` (0, or a `lineEnd`; line numbers
    /// count from there), with nil bytes for a line longer than `maxLineBytes`; `body` returns false to stop.
    func forEachLine(from offset: Int64 = 0, _ body: (Int, UnsafeBufferPointer<UInt8>?) throws -> Bool) throws {
        if lseek(descriptor, off_t(offset), SEEK_SET) < 0 { throw ImportError.unreadable(path: path, errno: errno) }
        bytesRead = offset
        let chunk = UnsafeMutablePointer<UInt8>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        var carry: [UInt8] = []
        // Set while the rest of an overlong line is read past.
        var overlong = false
        var lineNumber = 0
        func emit(_ line: UnsafeBufferPointer<UInt8>) throws -> Bool {
            lineNumber += 1
            var line = line
            if lineNumber == 1, offset == 0, line.count >= 3, line[0] == 0xEF, line[1] == 0xBB, line[2] == 0xBF {
                line = UnsafeBufferPointer(rebasing: line.dropFirst(3))
            }
            if let last = line.last, last == 0x0D { line = UnsafeBufferPointer(rebasing: line.dropLast()) }
            return try body(lineNumber, line)
        }
        func emitOverlong() throws -> Bool {
            lineNumber += 1
            overlong = false
            return try body(lineNumber, nil)
        }
        while true {
            let count = read(descriptor, chunk, chunkSize)
            if count < 0 {
                if errno == EINTR { continue }
                throw ImportError.unreadable(path: path, errno: errno)
            }
            if count == 0 { break }
            let chunkOffset = bytesRead
            bytesRead += Int64(count)
            var start = 0
            for index in 0..<count where chunk[index] == 0x0A {
                lineEnd = chunkOffset + Int64(index) + 1
                let keepGoing: Bool
                if overlong {
                    keepGoing = try emitOverlong()
                } else if carry.count + (index - start) > maxLineBytes + 1 {
                    // (+1: the CR of a CRLF line end is not part of the line.)
                    carry = []
                    keepGoing = try emitOverlong()
                } else if carry.isEmpty {
                    keepGoing = try emit(UnsafeBufferPointer(start: chunk + start, count: index - start))
                } else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: chunk + start, count: index - start))
                    keepGoing = try carry.withUnsafeBufferPointer { try emit($0) }
                    carry.removeAll(keepingCapacity: carry.capacity <= 4 * chunkSize)
                }
                if !keepGoing { return }
                start = index + 1
            }
            if start < count, !overlong {
                if carry.count + (count - start) > maxLineBytes + 1 {
                    carry = []
                    overlong = true
                } else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: chunk + start, count: count - start))
                }
            }
        }
        lineEnd = bytesRead
        if overlong {
            _ = try emitOverlong()
        } else if !carry.isEmpty {
            _ = try carry.withUnsafeBufferPointer { try emit($0) }
        }
    }
}
