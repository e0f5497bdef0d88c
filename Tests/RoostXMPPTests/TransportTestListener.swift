import Foundation
import Glibc

/// A plain POSIX TCP listener on a loopback address and an ephemeral port, for socket tests.
final class TransportTestListener: @unchecked Sendable {
    let fd: Int32
    let port: UInt16

    /// `address` is "127.0.0.1" or "::1"; nil when that family cannot be used here.
    init?(address: String = "127.0.0.1") {
        let isIPv6 = address.contains(":")
        let fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var bound: Int32
        if isIPv6 {
            var address6 = sockaddr_in6()
            address6.sin6_family = sa_family_t(AF_INET6)
            inet_pton(AF_INET6, address, &address6.sin6_addr)
            bound = withUnsafePointer(to: &address6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address4 = sockaddr_in()
            address4.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, address, &address4.sin_addr)
            bound = withUnsafePointer(to: &address4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            return nil
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let networkPort: UInt16 = withUnsafePointer(to: &storage) { pointer in
            isIPv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        self.fd = fd
        self.port = UInt16(bigEndian: networkPort)
    }

    deinit { close(fd) }

    /// Blocks until a client connects; returns the connected descriptor (the test closes it).
    func accept() -> Int32 {
        Glibc.accept(fd, nil, nil)
    }

}

/// Runs blocking work on its own thread so a test can wait for it with a deadline.
final class TransportBackgroundWork<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let started = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var value: Value?
    /// The thread's entry under /proc ("PID/task/TID").
    private var procEntry = ""

    init(_ body: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            procEntry = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
            started.signal()
            let result = body()
            lock.lock()
            value = result
            lock.unlock()
            done.signal()
        }
        thread.start()
    }

    /// Waits until the work's thread sleeps in poll(2) (its kernel wait channel says so), i.e. it is blocked
    /// in a socket wait; false after `seconds`.
    func waitUntilBlockedInPoll(seconds: Double) -> Bool {
        guard started.wait(timeout: .now() + seconds) == .success else { return false }
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let wchan = (try? String(contentsOfFile: "/proc/\(procEntry)/wchan", encoding: .utf8)) ?? ""
            if wchan.contains("poll") { return true }
            usleep(5_000)
        }
        return false
    }

    /// The result, or nil if the work did not finish within `seconds`.
    func wait(seconds: Double) -> Value? {
        guard done.wait(timeout: .now() + seconds) == .success else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

func transportReadExactly(_ fd: Int32, _ count: Int) -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while result.count < count {
        let read = recv(fd, &chunk, min(chunk.count, count - result.count), 0)
        if read <= 0 { break }
        result += chunk.prefix(read)
    }
    return result
}
