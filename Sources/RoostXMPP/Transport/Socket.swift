import Glibc
import RoostCore
import Synchronization

/// A connected TCP socket on a non-blocking descriptor.
///
/// One thread may block in `receive` while other threads `send`; sends are serialized so that
/// concurrent writers never interleave bytes. `close()` wakes a blocked reader. The descriptor itself
/// is released only once no call is using it, so a concurrent reader can never touch a reused fd.
public final class Socket: @unchecked Sendable {
    private struct State {
        var fd: Int32
        var closed = false
        var callsInFlight = 0
    }

    private let state: Mutex<State>
    private let sendLock = Mutex<Void>(())
    /// Host, numeric address and port, for logs and error messages.
    public let peerDescription: String

    private init(fd: Int32, peerDescription: String) {
        self.state = Mutex(State(fd: fd))
        self.peerDescription = peerDescription
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { _ = Glibc.close(state.fd) }
        }
    }

    /// Resolves `host` and tries each of its addresses (IPv6 and IPv4, in resolver order) until one
    /// connects. `timeout` applies to each address in turn.
    public static func connect(host: String, port: UInt16, timeout: Duration) throws(TransportError) -> Socket {
        let addresses = try resolve(host: host, port: port)
        defer { freeaddrinfo(addresses) }

        var failures: [String] = []
        var timeouts = 0
        var cursor: UnsafeMutablePointer<addrinfo>? = addresses
        while let info = cursor {
            cursor = info.pointee.ai_next
            let address = numericAddress(info.pointee.ai_addr, info.pointee.ai_addrlen)
            switch attemptConnect(info.pointee, timeout: timeout) {
            case let .connected(fd):
                configure(fd)
                let shown = address.contains(":") ? "[\(address)]" : address
                return Socket(fd: fd, peerDescription: "\(host) (\(shown):\(port))")
            case .timedOut:
                timeouts += 1
                failures.append("\(address): timed out")
            case let .failed(reason):
                failures.append("\(address): \(reason)")
            case let .shortage(code):
                // Another address would fail the same way.
                throw .resourceShortage(errorText(code))
            }
        }
        if timeouts > 0 && timeouts == failures.count {
            throw .connectTimedOut(host: host, port: port)
        }
        throw .connectFailed(host: host, port: port,
                             reason: failures.isEmpty ? "no usable address" : failures.joined(separator: "; "))
    }

    /// Writes all of `bytes`, waiting for the socket to drain as needed — up to `timeout` without any
    /// progress (then `.writeTimedOut`: the peer stopped reading or the path is dead), forever when nil.
    public func send(_ bytes: [UInt8], timeout: Duration? = nil) throws(TransportError) {
        try sendLock.withLock { _ throws(TransportError) in
            let fd = try beginCall()
            defer { endCall() }
            var offset = 0
            var deadline = timeout.map { ContinuousClock.now + $0 }
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                }
                if written >= 0 {
                    offset += written
                    if let timeout, written > 0 { deadline = ContinuousClock.now + timeout }
                    continue
                }
                let code = errno
                switch code {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    if try !wait(fd: fd, for: Int16(POLLOUT), until: deadline) {
                        throw .writeTimedOut(seconds: Int((timeout ?? .zero) / .seconds(1)))
                    }
                default:
                    throw failure(code)
                }
            }
        }
    }

    /// Reads what is available, waiting up to `timeout` (forever when nil) for something to arrive.
    /// Returns nil on orderly end of stream from the peer and `[]` when the timeout passed, or when `wake` was
    /// woken while it waited (its bytes are drained).
    /// Throws `.closed` when this socket was closed locally, including while waiting.
    public func receive(maxBytes: Int = 65536, timeout: Duration?) throws(TransportError) -> [UInt8]? {
        try receive(maxBytes: maxBytes, timeout: timeout, wake: nil)
    }

    func receive(maxBytes: Int = 65536, timeout: Duration?, wake: WakePipe?) throws(TransportError) -> [UInt8]? {
        let fd = try beginCall()
        defer { endCall() }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var buffer = [UInt8](repeating: 0, count: max(1, maxBytes))
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.removeSubrange(count...)
                return buffer
            }
            if count == 0 {
                if isClosed { throw .closed }
                return nil
            }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                if try !wait(fd: fd, for: Int16(POLLIN), until: deadline, wake: wake) { return [] }
            default:
                throw failure(code)
            }
        }
    }

    /// Closes the connection. Safe to call more than once and from any thread; a thread blocked in
    /// `receive` or `send` wakes up and gets `.closed`.
    public func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            // shutdown(2) wakes pollers; close(2) alone would not, and would free the fd number under them.
            _ = Glibc.shutdown(state.fd, Int32(SHUT_RDWR))
            if state.callsInFlight == 0 {
                _ = Glibc.close(state.fd)
                state.fd = -1
            }
        }
    }

    // MARK: - Descriptor lifetime

    private var isClosed: Bool { state.withLock { $0.closed } }

    private func beginCall() throws(TransportError) -> Int32 {
        try state.withLock { state throws(TransportError) -> Int32 in
            if state.closed { throw .closed }
            state.callsInFlight += 1
            return state.fd
        }
    }

    private func endCall() {
        state.withLock { state in
            state.callsInFlight -= 1
            if state.closed && state.callsInFlight == 0 && state.fd >= 0 {
                _ = Glibc.close(state.fd)
                state.fd = -1
            }
        }
    }

    private func failure(_ code: Int32) -> TransportError {
        isClosed ? .closed : .ioError(Self.errorText(code))
    }

    /// Polls until `events` are ready (true) or `deadline` passes or `wake` is woken (false), retrying on EINTR.
    private func wait(fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant?, wake: WakePipe? = nil) throws(TransportError) -> Bool {
        let ready = try Self.poll(fd: fd, events: events, deadline: deadline, wake: wake)
        if isClosed { throw .closed }
        return ready
    }

    // MARK: - Connecting

    private enum Attempt {
        case connected(Int32)
        case timedOut
        case failed(String)
        /// socket() itself failed for want of descriptors or memory (see `ResourceShortage`).
        case shortage(Int32)
    }

    private static func resolve(host: String, port: UInt16) throws(TransportError) -> UnsafeMutablePointer<addrinfo> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &result)
        if status != 0 {
            let reason = status == EAI_SYSTEM ? errorText(errno) : String(cString: gai_strerror(status))
            throw .resolutionFailed(host: host, reason: reason)
        }
        guard let result else { throw .resolutionFailed(host: host, reason: "no addresses") }
        return result
    }

    private static func attemptConnect(_ info: addrinfo, timeout: Duration) -> Attempt {
        let fd = Glibc.socket(info.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue),
                              info.ai_protocol)
        guard fd >= 0 else {
            let code = errno
            return ResourceShortage.isShortage(errno: code) ? .shortage(code) : .failed(errorText(code))
        }

        if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) == 0 { return .connected(fd) }
        let code = errno
        // EINTR on a non-blocking connect means it carries on in the background, like EINPROGRESS.
        guard code == EINPROGRESS || code == EINTR else {
            _ = Glibc.close(fd)
            return .failed(errorText(code))
        }
        do {
            let ready = try poll(fd: fd, events: Int16(POLLOUT), deadline: ContinuousClock.now + timeout)
            guard ready else {
                _ = Glibc.close(fd)
                return .timedOut
            }
        } catch {
            _ = Glibc.close(fd)
            return .failed(error.description)
        }
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length) != 0 { socketError = errno }
        guard socketError == 0 else {
            _ = Glibc.close(fd)
            return .failed(errorText(socketError))
        }
        return .connected(fd)
    }

    private static func configure(_ fd: Int32) {
        var on: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        // Stanzas are written whole; Nagle would only delay small interactive ones.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, size)
        // Lets the kernel eventually notice a peer that vanished without a FIN.
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, size)
    }

    // MARK: - Helpers

    private static func poll(fd: Int32, events: Int16, deadline: ContinuousClock.Instant?, wake: WakePipe? = nil) throws(TransportError) -> Bool {
        while true {
            var descriptors = [pollfd(fd: fd, events: events, revents: 0)]
            if let wake { descriptors.append(pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)) }
            let waitMilliseconds = deadline.map { milliseconds(until: $0) } ?? -1
            let status = Glibc.poll(&descriptors, nfds_t(descriptors.count), waitMilliseconds)
            if status > 0 {
                if descriptors[0].revents != 0 { return true }
                wake?.drain()
                return false
            }
            if status == 0 {
                if let deadline, ContinuousClock.now < deadline { continue }
                return false
            }
            let code = errno
            if code == EINTR { continue }
            throw .ioError(errorText(code))
        }
    }

    /// Milliseconds from now to `deadline`, rounded up so that a wait never ends just short of it.
    private static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        let total = seconds * 1000 + (attoseconds + attosecondsPerMillisecond - 1) / attosecondsPerMillisecond
        return Int32(clamping: total)
    }

    private static func numericAddress(_ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> String {
        guard let address else { return "?" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return "?" }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
