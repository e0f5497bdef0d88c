import Foundation

/// The container of a backup: a POSIX tar (ustar headers, a pax `x` header for a member of 8 GiB or more), so
/// `tar tvf` lists it and `tar xf` unpacks it with nothing but the standard tools.
///
/// Written and read here rather than through libarchive: Roost takes no package dependencies, libarchive's
/// headers are not on these machines, and the subset a backup needs is small — regular files with short,
/// fixed names (`BackupMember`), one after another, then the two zero blocks that end a tar. The reader accepts
/// only that subset and checks every header's checksum and field, so a truncated or damaged file is an error
/// (`BackupError`), never a crash and never an unbounded allocation.
enum BackupTar {
    static let block = 512
    /// A ustar size field holds 11 octal digits: up to 8 GiB − 1. Larger members carry their size in a pax header.
    static let largestOctalSize: Int64 = 0o77777777777

    /// The 512-byte ustar header of a regular file (`typeflag` "0"), or of a pax extended header ("x").
    static func header(name: String, size: Int64, mtime: Int64, typeflag: UInt8 = UInt8(ascii: "0")) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: block)
        func put(_ text: String, at offset: Int, width: Int) {
            for (i, byte) in text.utf8.prefix(width).enumerated() { header[offset + i] = byte }
        }
        func octal(_ value: Int64, at offset: Int, width: Int) {
            // width − 1 digits, zero-padded, then NUL.
            let digits = String(value, radix: 8)
            put(String(repeating: "0", count: max(0, width - 1 - digits.count)) + digits, at: offset, width: width - 1)
        }
        put(name, at: 0, width: 100)
        octal(0o600, at: 100, width: 8)
        octal(Int64(getuid()), at: 108, width: 8)
        octal(Int64(getgid()), at: 116, width: 8)
        octal(min(size, largestOctalSize), at: 124, width: 12)
        octal(max(0, mtime), at: 136, width: 12)
        header[156] = typeflag
        put("ustar\u{0}00", at: 257, width: 8)
        for i in 148..<156 { header[i] = 0x20 }
        let sum = header.reduce(0) { $0 + Int64($1) }
        octal(sum, at: 148, width: 7)
        header[154] = 0
        header[155] = 0x20
        return header
    }

    /// The data of a pax extended header that gives a member's size: one "LEN size=N\n" record.
    static func paxSizeRecord(_ size: Int64) -> [UInt8] {
        let body = " size=\(size)\n"
        // The length counts its own digits.
        var length = body.utf8.count + 1
        while String(length).utf8.count + body.utf8.count != length { length += 1 }
        return Array("\(length)\(body)".utf8)
    }

    /// Zero bytes that pad `size` up to a whole block.
    static func padding(after size: Int64) -> Int {
        let rest = Int(size % Int64(block))
        return rest == 0 ? 0 : block - rest
    }

    /// Writes all of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>, path: String) throws(BackupError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: path, operation: "write", errno: errno)
            }
            offset += n
        }
    }

    /// What a header says, once its checksum and fields are checked.
    struct Header {
        let name: String
        let size: Int64
        let typeflag: UInt8
    }

    /// Parses one header block; nil for a block of zeros (the end of the archive).
    static func parse(_ bytes: [UInt8]) throws(BackupError) -> Header? {
        guard bytes.count == block else { throw .damaged("a header is cut short") }
        if bytes.allSatisfy({ $0 == 0 }) { return nil }
        guard bytes[257..<262].elementsEqual("ustar".utf8) else { throw .damaged("a member header is not a ustar header (not a Roost backup, or damaged)") }
        // The checksum field exactly as written here: six digits, NUL, space.
        guard bytes[154] == 0, bytes[155] == 0x20, let stored = octalValue(bytes[148..<154]) else { throw .damaged("a member header's checksum field is not a number") }
        var sum: Int64 = 0
        for (i, byte) in bytes.enumerated() { sum += (148..<156).contains(i) ? 0x20 : Int64(byte) }
        guard sum == stored else { throw .damaged("a member header's checksum does not match (damaged)") }
        guard let size = octalValue(bytes[124..<136]) else { throw .damaged("a member header's size is not a number") }
        let nameBytes = bytes[0..<100].prefix { $0 != 0 }
        guard let name = String(validating: nameBytes, as: UTF8.self) else { throw .damaged("a member name is not UTF-8") }
        return Header(name: name, size: size, typeflag: bytes[156])
    }

    /// An octal field (digits, optionally surrounded by spaces and ended by NUL); nil for anything else.
    static func octalValue(_ field: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        var ended = false
        for byte in field {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "7") where !ended:
                digits += 1
                guard digits <= 12 else { return nil }
                value = value * 8 + Int64(byte - UInt8(ascii: "0"))
            case 0, 0x20:
                if digits > 0 { ended = true }
            default:
                return nil
            }
        }
        return digits > 0 ? value : nil
    }

    /// The size a pax extended header's records give (`size=`), or nil when they give none.
    static func paxSize(_ data: [UInt8]) throws(BackupError) -> Int64? {
        var size: Int64?
        var rest = data[...]
        while !rest.isEmpty {
            guard let space = rest.firstIndex(of: 0x20), let length = Int(String(decoding: rest[rest.startIndex..<space], as: UTF8.self)),
                  length > 0, length <= rest.count else { throw .damaged("a pax header record is malformed") }
            let record = rest[(space + 1)..<(rest.startIndex + length)]
            let text = String(decoding: record, as: UTF8.self)
            if text.hasPrefix("size="), text.hasSuffix("\n") {
                guard let value = Int64(text.dropFirst(5).dropLast()), value >= 0 else { throw .damaged("a pax size is not a number") }
                size = value
            }
            rest = rest[(rest.startIndex + length)...]
        }
        return size
    }
}

/// Streams members into a tar file through one buffer, hashing each member's bytes as they pass.
final class BackupTarWriter {
    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []
    private(set) var bytesWritten: Int64 = 0
    private static let bufferSize = BackupCipher.chunkSize

    private let cipher: BackupCipher?
    private var chunks: UInt64 = 0

    /// `cipher`: the tar is encrypted (`BackupCipher`), its header first.
    init(fd: Int32, path: String, cipher: BackupCipher? = nil) throws(BackupError) {
        self.fd = fd
        self.path = path
        self.cipher = cipher
        buffer.reserveCapacity(Self.bufferSize)
        if let cipher { try BackupTar.writeAll(fd, cipher.header[...], path: path) }
    }

    /// Adds the file at `source` under `name`; returns its size and SHA-256 (lowercase hex). A file that changes
    /// size while it is read is an error: members are snapshots or files that never change (the file store).
    func addFile(name: String, source: String, mtime: Int64) throws(BackupError) -> (size: Int64, sha256: String) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .io(path: source, operation: "open", errno: errno) }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw .io(path: source, operation: "stat", errno: errno) }
        let size = Int64(info.st_size)
        try startMember(name: name, size: size, mtime: mtime)
        let digest = FileDigest(algorithm: "sha-256")!
        var chunk = [UInt8](repeating: 0, count: Self.bufferSize)
        var remaining = size
        while remaining > 0 {
            let wanted = Int(min(Int64(chunk.count), remaining))
            let n = chunk.withUnsafeMutableBytes { read(input, $0.baseAddress, wanted) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(path: source, operation: "read", errno: errno)
            }
            guard n > 0 else { throw .changed(path: source) }
            chunk.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            try append(chunk[0..<n])
            remaining -= Int64(n)
        }
        try append([UInt8](repeating: 0, count: BackupTar.padding(after: size))[...])
        return (size, Hex.string(digest.finish()))
    }

    /// Adds `data` under `name`.
    func addData(name: String, data: [UInt8], mtime: Int64) throws(BackupError) {
        try startMember(name: name, size: Int64(data.count), mtime: mtime)
        try append(data[...])
        try append([UInt8](repeating: 0, count: BackupTar.padding(after: Int64(data.count)))[...])
    }

    /// The two zero blocks that end a tar, then everything flushed and synced to the disk.
    func finish() throws(BackupError) {
        try append([UInt8](repeating: 0, count: 2 * BackupTar.block)[...])
        try flush(last: true)
        guard fsync(fd) == 0 else { throw .io(path: path, operation: "fsync", errno: errno) }
    }

    private func startMember(name: String, size: Int64, mtime: Int64) throws(BackupError) {
        if size > BackupTar.largestOctalSize {
            let record = BackupTar.paxSizeRecord(size)
            try append(BackupTar.header(name: "PaxHeaders/" + name, size: Int64(record.count), mtime: mtime, typeflag: UInt8(ascii: "x"))[...])
            try append(record[...])
            try append([UInt8](repeating: 0, count: BackupTar.padding(after: Int64(record.count)))[...])
        }
        try append(BackupTar.header(name: name, size: size, mtime: mtime)[...])
    }

    private func append(_ bytes: ArraySlice<UInt8>) throws(BackupError) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Writes the buffer; encrypted, only whole chunks until the `last`, which is shorter (possibly empty).
    private func flush(last: Bool = false) throws(BackupError) {
        guard let cipher else {
            try BackupTar.writeAll(fd, buffer[...], path: path)
            bytesWritten += Int64(buffer.count)
            buffer.removeAll(keepingCapacity: true)
            return
        }
        var start = 0
        while buffer.count - start >= BackupCipher.chunkSize {
            try BackupTar.writeAll(fd, try cipher.seal(buffer[start..<(start + BackupCipher.chunkSize)], index: chunks, last: false)[...], path: path)
            chunks += 1
            start += BackupCipher.chunkSize
        }
        if last {
            try BackupTar.writeAll(fd, try cipher.seal(buffer[start...], index: chunks, last: true)[...], path: path)
            start = buffer.count
        }
        bytesWritten += Int64(start)
        buffer.removeFirst(start)
    }
}

/// Reads a backup's members one after another, each as a stream of chunks.
final class BackupTarReader {
    private let source: BackupByteSource
    private var chunk = [UInt8](repeating: 0, count: 1 << 20)

    init(source: BackupByteSource) {
        self.source = source
    }

    /// The next member's name and size, or nil at the end of the archive (its first zero block).
    func next() throws(BackupError) -> (name: String, size: Int64)? {
        guard let header = try BackupTar.parse(try readExactly(BackupTar.block)) else {
            // The second zero block must follow: without it the file was cut.
            guard try readExactly(BackupTar.block).allSatisfy({ $0 == 0 }) else { throw .damaged("data after the end of the archive") }
            return nil
        }
        var size = header.size
        var name = header.name
        if header.typeflag == UInt8(ascii: "x") {
            guard header.size <= 1 << 16 else { throw .damaged("a pax header is too large") }
            let records = try readExactly(Int(header.size))
            guard try readExactly(BackupTar.padding(after: header.size)).allSatisfy({ $0 == 0 }) else { throw .damaged("a pax header's padding is not zeros") }
            guard let member = try BackupTar.parse(try readExactly(BackupTar.block)) else { throw .damaged("a pax header describes no member") }
            size = try BackupTar.paxSize(records) ?? member.size
            name = member.name
            guard member.typeflag == UInt8(ascii: "0") || member.typeflag == 0 else { throw .damaged("member \(member.name) is not a regular file") }
        } else {
            guard header.typeflag == UInt8(ascii: "0") || header.typeflag == 0 else { throw .damaged("member \(header.name) is not a regular file") }
        }
        return (name, size)
    }

    /// Passes the member's `size` bytes to `body` chunk by chunk, then skips its padding.
    func readMember(size: Int64, _ body: (ArraySlice<UInt8>) throws(BackupError) -> Void) throws(BackupError) {
        var remaining = size
        while remaining > 0 {
            let wanted = Int(min(Int64(chunk.count), remaining))
            try fill(wanted)
            try body(chunk[0..<wanted])
            remaining -= Int64(wanted)
        }
        // Padding is zeros: a changed byte anywhere in the file is seen.
        guard try readExactly(BackupTar.padding(after: size)).allSatisfy({ $0 == 0 }) else { throw .damaged("a member's padding is not zeros") }
    }

    /// True when nothing follows (the file ends where the archive ends).
    func atEndOfFile() throws(BackupError) -> Bool {
        var byte: [UInt8] = [0]
        return try source.read(into: &byte, at: 0, count: 1) == 0
    }

    private func readExactly(_ count: Int) throws(BackupError) -> [UInt8] {
        try fill(count)
        return Array(chunk[0..<count])
    }

    /// Reads `count` bytes (at most the chunk's size) into the start of `chunk`.
    private func fill(_ count: Int) throws(BackupError) {
        var offset = 0
        while offset < count {
            let n = try source.read(into: &chunk, at: offset, count: count - offset)
            guard n > 0 else { throw .damaged("the file ends in the middle of the archive (truncated)") }
            offset += n
        }
    }
}
