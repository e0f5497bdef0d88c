import Foundation
import RoostCore
#if canImport(Glibc)
import Glibc
#endif

/// A config file's bytes and mode, taken from one open file descriptor so the mode checked is the mode of
/// the content read.
struct ConfigFileContents {
    let path: String
    let text: String
    let mode: UInt32

    enum ReadFailure: Error {
        case missing
        case failed(ConfigError)
    }

    static func read(path: String) throws(ReadFailure) -> ConfigFileContents {
        // O_NONBLOCK: opening a FIFO for reading would wait for a writer; it is refused below instead.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if descriptor < 0 {
            let code = errno
            if code == ENOENT { throw .missing }
            throw .failed(failure(path, code))
        }
        defer { close(descriptor) }

        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .failed(failure(path, errno))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .failed(.unreadable(path: path, reason: "it is not a regular file (a config is read from a file, not a pipe or a device)"))
        }

        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .failed(failure(path, code))
            }
            bytes.append(contentsOf: buffer[0..<count])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .failed(.unreadable(path: path, reason: "it is not valid UTF-8 text"))
        }
        return ConfigFileContents(path: path, text: text, mode: UInt32(info.st_mode))
    }

    private static func failure(_ path: String, _ code: Int32) -> ConfigError {
        let reason = String(cString: strerror(code))
        return ResourceShortage.isShortage(errno: code) ? .unreadableForNow(path: path, reason: reason) : .unreadable(path: path, reason: reason)
    }

    /// Group or others may read or write the file.
    var isSharedWithOthers: Bool {
        mode & 0o077 != 0
    }
}
