import Foundation
internal import CSoup
internal import CSystem
import RoostCore

/// How many connections the web view takes, and for how long (docs/serve.md, "Limits").
package struct ConnectionLimits: Sendable {
    /// Open connections at once, from everyone but the user running Roost together (that user's own browser keeps
    /// its `perPeer` places whatever other local users hold).
    package var total = 128
    /// Open connections at once from one peer: one local user (the kernel says whose socket it is), or one address.
    package var perPeer = 32
    /// A connection must have sent a whole request this many seconds after it was accepted, or it is closed.
    package var requestSeconds: UInt32 = 10
    /// A connection on which the client sends nothing, or takes nothing of what is sent, for this long is closed.
    package var idleSeconds: UInt32 = 30
    /// A live stream (Server-Sent Events) whose reader leaves this many bytes untaken is dropped.
    package var streamBacklogBytes = 1 << 20

    package init() {}
}

/// Who is at the other end of a connection: a local user when the kernel knows the client socket (sock_diag),
/// else the address. Every local user connects from 127.0.0.1, so the address alone would let one of them take
/// every place, the user's own browser's too.
struct Peer: Hashable, CustomStringConvertible {
    let address: String
    let uid: Int64?

    static func == (a: Peer, b: Peer) -> Bool { a.uid != nil || b.uid != nil ? a.uid == b.uid : a.address == b.address }
    func hash(into hasher: inout Hasher) {
        if let uid { hasher.combine(uid) } else { hasher.combine(address) }
    }

    var description: String { uid.map { "\(address) (user \($0))" } ?? address }
}

/// The web view's listening socket and the connections it accepted. Roost accepts them itself, not libsoup, so
/// that no connection is ever held beyond the limits: past a peer's `perPeer` open connections, or past `total` held
/// by others than the user running Roost (whose browser so always gets in), a new one is closed at once (and counted; the first of a burst is logged); a connection that has not sent a whole request
/// `requestSeconds` after it came is closed; one whose client stalls `idleSeconds` too (the socket's timeout, which
/// libsoup's reads and writes see). Each accepted connection is handed to libsoup (`soup_server_accept_iostream`).
/// Without a listener of its own libsoup keeps no connection alive after its response, and every response says
/// so (`Connection: close`): an idle connection between requests does not exist.
///
/// A connection that cannot be accepted because the process has no descriptor left (EMFILE, ENFILE) stops
/// accepting for a second, rather than spinning on a socket that stays readable. Runs on the server's thread only.
final class ConnectionGate {
    let limits: ConnectionLimits
    private let thread: GMainThread
    private let log: ServeLog
    private let accepted: (_ stream: UnsafeMutablePointer<GSocketConnection>, _ local: UnsafeMutablePointer<GSocketAddress>,
                           _ remote: UnsafeMutablePointer<GSocketAddress>) -> Bool
    private var listener: Int32 = -1
    private var source: UnsafeMutablePointer<GSource>?
    private var connections: [UnsafeMutableRawPointer: Connection] = [:]
    private var perPeer: [Peer: Int] = [:]
    private var stopped = false
    /// Connections closed at once for being over a limit, since the start.
    private(set) var refused = 0
    /// Connections closed for sending no whole request in time.
    private(set) var timedOut = 0
    private var unloggedRefusals: [Peer: Int] = [:]
    private var refusalLogScheduled = false
    private var acceptPaused = false

    /// One accepted connection, until libsoup is done with it.
    private final class Connection {
        let socket: UnsafeMutablePointer<GSocket>
        let remote: UnsafeMutablePointer<GSocketAddress>
        let peer: Peer
        var requestRead = false

        init(socket: UnsafeMutablePointer<GSocket>, remote: UnsafeMutablePointer<GSocketAddress>, peer: Peer) {
            self.socket = socket
            self.remote = remote
            self.peer = peer
        }

        var isClosed: Bool { g_socket_is_closed(socket) != 0 }

        /// Ends it from our side: libsoup's read or write on it fails, and libsoup lets it go.
        func shutDown() {
            if !isClosed { g_socket_shutdown(socket, 1, 1, nil) }
        }

        deinit {
            g_object_unref(UnsafeMutableRawPointer(socket))
            g_object_unref(UnsafeMutableRawPointer(remote))
        }
    }

    private final class Weak {
        weak var gate: ConnectionGate?
        let key: UnsafeMutableRawPointer
        init(_ gate: ConnectionGate, key: UnsafeMutableRawPointer) {
            self.gate = gate
            self.key = key
        }
    }

    init(limits: ConnectionLimits, thread: GMainThread, log: ServeLog,
         accepted: @escaping (UnsafeMutablePointer<GSocketConnection>, UnsafeMutablePointer<GSocketAddress>, UnsafeMutablePointer<GSocketAddress>) -> Bool) {
        self.limits = limits
        self.thread = thread
        self.log = log
        self.accepted = accepted
    }

    deinit { stop() }

    /// Listens on `host` (an IP address) and `port` (0: any free one); returns the port bound.
    func listen(host: String, port: UInt16) throws(ServeError) -> UInt16 {
        guard let address = g_inet_socket_address_new_from_string(host, UInt32(port)) else { throw .badAddress(host) }
        defer { g_object_unref(address) }
        var storage = sockaddr_storage()
        let length = MemoryLayout<sockaddr_storage>.size
        guard g_socket_address_to_native(address, &storage, gsize(length), nil) != 0 else { throw .badAddress(host) }
        let family = Int32(storage.ss_family)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .listen(host: host, port: port, reason: String(cString: strerror(errno))) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        let size = socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        // A deep queue costs no descriptor of ours: a burst waits in the kernel, and a client's connect never stalls
        // while the server's thread is busy (it drains the queue in one go, refusing what is over the limits).
        guard bound == 0, Glibc.listen(fd, 1024) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .listen(host: host, port: port, reason: reason)
        }
        listener = fd
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) } }
        startAccepting()
        return Self.port(of: local)
    }

    /// Stops accepting: the listening socket is closed; open connections go on.
    func stopListening() {
        stopped = true
        stopAccepting()
        if listener >= 0 { close(listener) }
        listener = -1
    }

    /// Stops accepting and ends every connection still open.
    func stop() {
        stopListening()
        for connection in connections.values { connection.shutDown() }
    }

    /// Open connections now (libsoup not done with them, their socket not closed).
    var openCount: Int {
        prune()
        return connections.count
    }

    /// A whole request arrived on the connection from `remote` (the address object libsoup was handed): its
    /// deadline no longer applies.
    func requestRead(remote: UnsafeMutableRawPointer?) {
        guard let remote else { return }
        connections[remote]?.requestRead = true
    }

    /// Ends the connection from `remote` (a live stream whose reader does not keep up).
    func drop(remote: UnsafeMutableRawPointer?) {
        guard let remote else { return }
        connections[remote]?.shutDown()
    }

    // MARK: Accepting

    private final class Box {
        weak var gate: ConnectionGate?
        init(_ gate: ConnectionGate) { self.gate = gate }
    }

    private func startAccepting() {
        guard !stopped, listener >= 0, source == nil else { return }
        let made = g_unix_fd_source_new(listener, GIOCondition(rawValue: G_IO_IN.rawValue))!
        g_source_set_callback(made, unsafeBitCast({ (fd: Int32, _: GIOCondition, data: gpointer?) -> gboolean in
            guard let data, let gate = Unmanaged<Box>.fromOpaque(data).takeUnretainedValue().gate else { return 0 }
            gate.acceptReady()
            return gate.source == nil ? 0 : 1
        } as GUnixFDSourceFunc, to: GSourceFunc.self), Unmanaged.passRetained(Box(self)).toOpaque(), { data in
            if let data { Unmanaged<Box>.fromOpaque(data).release() }
        })
        g_source_attach(made, g_main_context_get_thread_default())
        source = made
    }

    private func stopAccepting() {
        guard let source else { return }
        g_source_destroy(source)
        g_source_unref(source)
        self.source = nil
    }

    private func acceptReady() {
        while !stopped {
            var peerAddress = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &peerAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { roost_accept_cloexec_nonblock(listener, $0, &length) }
            }
            if fd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The connection waits in the kernel's queue; trying again at once would spin.
                    let reason = String(cString: strerror(errno))
                    pauseAccepting(reason)
                    return
                default:
                    log.warning("accepting a connection failed: \(String(cString: strerror(errno)))")
                    return
                }
            }
            admit(fd, peerAddress)
        }
    }

    private func pauseAccepting(_ reason: String) {
        guard !acceptPaused else { return }
        acceptPaused = true
        stopAccepting()
        log.warning("accepting connections paused for a second: \(reason)")
        let box = OnServerThread(value: Box(self))
        thread.every(milliseconds: 1000) {
            guard let gate = box.value.gate else { return false }
            gate.acceptPaused = false
            gate.startAccepting()
            return false
        }
    }

    private func admit(_ fd: Int32, _ peerAddress: sockaddr_storage) {
        var local = sockaddr_storage()
        var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) } }
        let peer = Self.peer(peerAddress, local: local)
        prune()
        let fromPeer = perPeer[peer, default: 0]
        let others = connections.count - perPeer[Self.ownUser, default: 0]
        if fromPeer >= limits.perPeer || (peer != Self.ownUser && others >= limits.total) {
            close(fd)
            refused += 1
            noteRefusal(peer, reason: fromPeer >= limits.perPeer
                        ? "it has \(fromPeer) open, the most one peer may have"
                        : "\(others) connections of others are open, the most the view takes")
            return
        }
        guard let socket = g_socket_new_from_fd(fd, nil) else {
            close(fd)
            return
        }
        g_socket_set_timeout(socket, limits.idleSeconds)
        let stream = g_socket_connection_factory_create_connection(socket)!
        guard let localAddress = g_socket_get_local_address(socket, nil), let remoteAddress = g_socket_get_remote_address(socket, nil) else {
            g_object_unref(UnsafeMutableRawPointer(stream))
            g_object_unref(UnsafeMutableRawPointer(socket))
            return
        }
        let key = UnsafeMutableRawPointer(remoteAddress)
        connections[key] = Connection(socket: socket, remote: remoteAddress, peer: peer)
        perPeer[peer, default: 0] += 1
        // When libsoup lets the connection go, its record goes (and with it our reference to the socket).
        g_object_weak_ref(UnsafeMutablePointer<GObject>(OpaquePointer(stream)), { data, _ in
            guard let data else { return }
            let weak = Unmanaged<Weak>.fromOpaque(data).takeRetainedValue()
            weak.gate?.forget(weak.key)
        }, Unmanaged.passRetained(Weak(self, key: key)).toOpaque())
        let handed = accepted(stream, localAddress, remoteAddress)
        g_object_unref(UnsafeMutableRawPointer(localAddress))
        g_object_unref(UnsafeMutableRawPointer(stream))
        if !handed {
            connections[key]?.shutDown()
            return
        }
        let box = OnServerThread(value: Weak(self, key: key))
        thread.every(milliseconds: limits.requestSeconds * 1000) {
            box.value.gate?.requestDeadline(box.value.key)
            return false
        }
    }

    private func requestDeadline(_ key: UnsafeMutableRawPointer) {
        guard let connection = connections[key], !connection.requestRead, !connection.isClosed else { return }
        timedOut += 1
        log.debug("closed a connection from \(connection.peer): no whole request within \(limits.requestSeconds) s")
        connection.shutDown()
    }

    private func forget(_ key: UnsafeMutableRawPointer) {
        guard let connection = connections.removeValue(forKey: key) else { return }
        release(connection.peer)
    }

    /// Drops the records of connections whose socket is closed (libsoup may hold the objects a little longer).
    private func prune() {
        for (key, connection) in connections where connection.isClosed {
            connections[key] = nil
            release(connection.peer)
        }
    }

    private func release(_ peer: Peer) {
        let left = perPeer[peer, default: 1] - 1
        perPeer[peer] = left > 0 ? left : nil
    }

    /// The first refusal of a burst is logged at once; the rest of it in one line a minute later.
    private func noteRefusal(_ peer: Peer, reason: String) {
        if unloggedRefusals[peer] == nil {
            unloggedRefusals[peer] = 0
            log.info("refused a connection from \(peer): \(reason)")
        } else {
            unloggedRefusals[peer, default: 0] += 1
        }
        guard !refusalLogScheduled else { return }
        refusalLogScheduled = true
        let box = OnServerThread(value: Box(self))
        thread.every(milliseconds: 60_000) {
            guard let gate = box.value.gate else { return false }
            gate.refusalLogScheduled = false
            let counts = gate.unloggedRefusals
            gate.unloggedRefusals = [:]
            for (peer, count) in counts where count > 0 {
                gate.log.info("refused \(count) more \(count == 1 ? "connection" : "connections") from \(peer) in the last minute")
            }
            return false
        }
    }

    /// The user running Roost, as a peer.
    private static let ownUser = Peer(address: "", uid: Int64(getuid()))

    // MARK: Addresses

    private static func port(of address: sockaddr_storage) -> UInt16 {
        var copy = address
        return withUnsafePointer(to: &copy) { pointer in
            if address.ss_family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }

    private static func peer(_ address: sockaddr_storage, local: sockaddr_storage) -> Peer {
        var peer = address
        var mine = local
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let loopback: Bool = withUnsafePointer(to: &peer) { pointer in
            if address.ss_family == sa_family_t(AF_INET6) {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { in6 in
                    var bytes = in6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count))
                    return withUnsafeBytes(of: &bytes) { Array($0) == Array(repeating: 0, count: 15) + [1] }
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { in4 in
                var bytes = in4.pointee.sin_addr
                inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count))
                return UInt32(bigEndian: bytes.s_addr) >> 24 == 127
            }
        }
        let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard loopback else { return Peer(address: name, uid: nil) }
        let uid = withUnsafePointer(to: &peer) { from in
            withUnsafePointer(to: &mine) { to in
                from.withMemoryRebound(to: sockaddr.self, capacity: 1) { f in
                    to.withMemoryRebound(to: sockaddr.self, capacity: 1) { t in roost_tcp_peer_uid(f, t) }
                }
            }
        }
        return Peer(address: name, uid: uid >= 0 ? uid : nil)
    }
}
