import Foundation
import RoostCore
import Synchronization

/// The agent's Unix socket for the CLI (`$XDG_RUNTIME_DIR/roost/control.sock`, 0600 in a 0700 folder).
///
/// `bind` refuses when another agent answers on the path and removes a stale socket left by a crash.
/// Accepting and each connection run on dedicated threads (blocking I/O stays off the cooperative pool);
/// only peers with the agent's own uid are served.
public final class ControlServer: Sendable {
    public let path: String
    private let listener: SocketDescriptor
    private let wakeRead: SocketDescriptor
    private let wakeWrite: SocketDescriptor
    private let inode: UInt64
    private let state = Mutex(State())
    /// The accepting thread's end (`stop` waits for it).
    /// The acceptor thread's end, once it has started (`stop` joins it).
    private let acceptorEnd = Mutex<OneShot<Void>?>(nil)

    private struct State {
        var stopping = false
        var connections = 0
        var reserved = 0
    }

    private enum Admission {
        case full, statusOnly, refused
    }

    /// Seconds a connection may stay silent before it is closed (`ControlProtocol.idleTimeoutSeconds`).
    private let idleTimeoutSeconds: Int

    private init(path: String, listener: SocketDescriptor, wake: (SocketDescriptor, SocketDescriptor), inode: UInt64,
                 idleTimeoutSeconds: Int) {
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.path = path
        self.listener = listener
        wakeRead = wake.0
        wakeWrite = wake.1
        self.inode = inode
    }

    /// Creates the folder (0700) and the socket (0600) and starts listening; requests wait until `start`.
    public static func bind(path: String, idleTimeoutSeconds: Int = ControlProtocol.idleTimeoutSeconds) throws(ControlServerError) -> ControlServer {
        guard path.utf8.count <= UnixSocketAddress.maxPathBytes() else { throw .pathTooLong(path: path) }
        try prepareDirectory((path as NSString).deletingLastPathComponent)
        try removeStaleSocket(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", path: path, errno: errno) }
        let listener = SocketDescriptor(fd)
        let bound = UnixSocketAddress.with(path: path) { Glibc.bind(fd, $0, $1) } ?? -1
        guard bound == 0 else {
            let code = errno
            if code == EADDRINUSE { throw .alreadyRunning(path: path) }
            throw .system(call: "bind", path: path, errno: code)
        }
        // The folder is 0700 already; 0600 on the socket keeps it private even if the folder is loosened.
        guard chmod(path, 0o600) == 0 else { throw .system(call: "chmod", path: path, errno: errno) }
        guard listen(fd, 16) == 0 else { throw .system(call: "listen", path: path, errno: errno) }
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw .system(call: "pipe", path: path, errno: errno) }
        for pipeFD in pipeFDs { _ = fcntl(pipeFD, F_SETFD, FD_CLOEXEC) }
        var info = stat()
        stat(path, &info)
        return ControlServer(path: path, listener: listener, wake: (SocketDescriptor(pipeFDs[0]), SocketDescriptor(pipeFDs[1])),
                             inode: UInt64(info.st_ino), idleTimeoutSeconds: idleTimeoutSeconds)
    }

    /// The runtime folder's one check (`RuntimeFolder.prepare`): made 0700, or refused when it is not a folder of
    /// this user's that can be made private.
    private static func prepareDirectory(_ directory: String) throws(ControlServerError) {
        do {
            try RuntimeFolder.prepare(directory)
        } catch {
            switch error {
            case .unsafe(let path, let reason): throw .unsafeDirectory(path: path, reason: reason)
            case .system(let call, let path, let code): throw .system(call: call, path: path, errno: code)
            }
        }
    }

    /// A socket nobody answers on is what a killed agent leaves behind; one that answers is a running agent.
    private static func removeStaleSocket(_ path: String) throws(ControlServerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else { throw .notASocket(path: path) }
        if ControlClient.connect(path: path) != nil { throw .alreadyRunning(path: path) }
        unlink(path)
    }

    /// Serves requests with `dispatcher` until `stop`.
    public func start(dispatcher: ControlDispatcher) {
        let end = OneShot<Void>()
        acceptorEnd.withLock { $0 = end }
        startThread(named: "roost.control") { [self] in
            self.acceptLoop(dispatcher: dispatcher)
            end.fulfil(())
        }
    }

    /// Stops accepting, removes the socket (if it is still ours) and lets open connections finish their request.
    public func stop() {
        let already = state.withLock { s -> Bool in
            defer { s.stopping = true }
            return s.stopping
        }
        guard !already else { return }
        // The byte is never read: the pipe stays readable, and wakes the acceptor and every connection's read.
        var byte: UInt8 = 1
        _ = write(wakeWrite.fd, &byte, 1)
        // The acceptor ends at once unless a C call holds it (an accept whose peer left); 2 s at most.
        acceptorEnd.withLock { $0 }?.wait(until: Date().addingTimeInterval(2))
        var info = stat()
        if stat(path, &info) == 0, UInt64(info.st_ino) == inode { unlink(path) }
    }

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func acceptLoop(dispatcher: ControlDispatcher) {
        while !isStopping {
            // Woken by a connection on the listening socket or by `stop`'s byte on the wake-up pipe, nothing else.
            var descriptors = [pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: wakeRead.fd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 && errno != EINTR { return }
            if descriptors[1].revents != 0 { return }
            guard ready > 0, descriptors[0].revents & Int16(POLLIN) != 0 else { continue }
            let fd = accept(listener.fd, nil, nil)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let connection = SocketDescriptor(fd)
            guard Self.peerIsOwnUser(fd) else { continue }
            let admission = state.withLock { s -> Admission in
                if s.connections < ControlProtocol.maxConnections {
                    s.connections += 1
                    return .full
                }
                if s.reserved < ControlProtocol.reservedConnections {
                    s.reserved += 1
                    return .statusOnly
                }
                return .refused
            }
            switch admission {
            case .refused:
                LineChannel(socket: connection, maxLineBytes: ControlProtocol.maxRequestBytes).writeLine(ControlJSON.failure(ActionFailure(.connection, "too many control connections; try again"), id: nil))
            case .statusOnly:
                startThread(named: "roost.control.reserved") { [self] in
                    self.serveStatusOnly(LineChannel(socket: connection, maxLineBytes: ControlProtocol.maxRequestBytes), dispatcher: dispatcher)
                    self.state.withLock { $0.reserved -= 1 }
                }
            case .full:
                startThread(named: "roost.control.connection") { [self] in
                    self.serve(LineChannel(socket: connection, maxLineBytes: ControlProtocol.maxRequestBytes), dispatcher: dispatcher)
                    self.state.withLock { $0.connections -= 1 }
                }
            }
        }
    }

    /// A connection beyond `maxConnections`: one `status` or `ping` answered, anything else refused, then closed.
    private func serveStatusOnly(_ channel: LineChannel, dispatcher: ControlDispatcher) {
        guard case .line(let line) = channel.readLine(timeoutSeconds: ControlProtocol.reservedRequestTimeoutSeconds,
                                                      wake: wakeRead.fd) else { return }
        let answer = Self.waitFor { await dispatcher.respond(to: line, agentQueriesOnly: true) }
        channel.writeLine(answer)
    }

    private func serve(_ channel: LineChannel, dispatcher: ControlDispatcher) {
        while true {
            switch channel.readLine(timeoutSeconds: idleTimeoutSeconds, wake: wakeRead.fd) {
            case .closed, .timedOut:
                return
            case .tooLong:
                channel.writeLine(ControlJSON.failure(ActionFailure(.tooLarge, "the request is longer than \(ControlProtocol.maxRequestBytes) bytes, the most the agent accepts"), id: nil))
                channel.finishDiscardingInput(timeoutSeconds: 10)
                return
            case .line(let line):
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }) { continue }
                // Progress lines are written while this thread waits for the answer, never at the same time.
                let writer = LineChannelBox(channel)
                let answer = Self.waitFor { await dispatcher.respond(to: line) { data in writer.withLock { _ = $0.writeLine(data) } } }
                guard writer.withLock({ $0.writeLine(answer) }) else { return }
            }
        }
    }

    /// Runs async work from a connection thread and waits for it (the thread has nothing else to do).
    private static func waitFor(_ work: @escaping @Sendable () async -> Data) -> Data {
        let answer = OneShot<Data>()
        Task { answer.fulfil(await work()) }
        return answer.wait() ?? Data()
    }

    /// SO_PEERCRED: the folder's 0700 already keeps others out; this also covers a loosened folder.
    private static func peerIsOwnUser(_ fd: Int32) -> Bool {
        // struct ucred is pid, uid, gid (three 32-bit fields); Glibc's module does not export the GNU type.
        var credentials: [UInt32] = [0, 0, 0]
        var length = socklen_t(MemoryLayout<UInt32>.size * 3)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return false }
        return credentials[1] == getuid()
    }
}
