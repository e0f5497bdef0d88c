import Foundation

/// Line-framed I/O on a stream socket with a size cap and timeouts (both ends of the control protocol).
final class LineChannel {
    enum ReadResult {
        case line(Data)
        case tooLong
        case closed
        case timedOut
    }

    let socket: SocketDescriptor
    private var buffer = Data()
    private let maxLineBytes: Int

    init(socket: SocketDescriptor, maxLineBytes: Int) {
        self.socket = socket
        self.maxLineBytes = maxLineBytes
    }

    /// The next line without its `\n`; a line over the cap is reported as soon as the cap is passed. Once `wake`
    /// (a descriptor, e.g. the read end of a pipe) is readable or closed, no more is read: `.closed`.
    func readLine(timeoutSeconds: Int, wake: Int32? = nil) -> ReadResult {
        let deadline = Date().addingTimeInterval(TimeInterval(timeoutSeconds))
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                if line.count > maxLineBytes { return .tooLong }
                return .line(Data(line))
            }
            if buffer.count > maxLineBytes { return .tooLong }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return .timedOut }
            // One wait for the whole remaining time: woken by input, by `wake`, or by the deadline.
            var descriptors = [pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)]
            if let wake { descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(min(Double(Int32.max), (remaining * 1000).rounded(.up))))
            if ready < 0 {
                if errno == EINTR { continue }
                return .closed
            }
            if descriptors.count > 1, descriptors[1].revents != 0 { return .closed }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = read(socket.fd, &chunk, chunk.count)
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .closed
            }
            if n == 0 {
                // A last line without a newline still counts as a request.
                if buffer.isEmpty { return .closed }
                let line = buffer
                buffer.removeAll()
                return line.count > maxLineBytes ? .tooLong : .line(line)
            }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// Ends the conversation gracefully after an answer to a request that was refused unread: stops writing,
    /// then reads and discards until the peer closes (or the time is up). Closing with unread input would
    /// reset the connection and destroy the answer before the peer reads it.
    func finishDiscardingInput(timeoutSeconds: Int) {
        _ = shutdown(socket.fd, Int32(SHUT_WR))
        buffer.removeAll()
        let deadline = Date().addingTimeInterval(TimeInterval(timeoutSeconds))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while deadline.timeIntervalSinceNow > 0 {
            var descriptor = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { return }
            let n = read(socket.fd, &chunk, chunk.count)
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { return }
        }
    }

    /// Writes `data` and a newline; false when the peer is gone.
    @discardableResult
    func writeLine(_ data: Data) -> Bool {
        var bytes = [UInt8](data)
        bytes.append(UInt8(ascii: "\n"))
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(socket.fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
