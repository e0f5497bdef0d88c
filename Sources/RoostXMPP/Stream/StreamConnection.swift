import Foundation
import RoostCore
import Synchronization

/// A socket with optional TLS and the XML parser on top: the real `ClientChannel`.
///
/// While the stream is negotiated, the negotiating thread is the only one that reads and writes. Once the
/// session is established, `startWriter` gives the connection its own writer thread: from then on every
/// byte goes out through the write queue (`Outbox`: bounded, in order), and a write that makes no progress
/// within `writeTimeout` ends the connection. The reader (`nextEvent`) and the writer share only the TLS
/// engine, which is memory-only (I/O-free) and locks itself; only the writer drains its output, so TLS
/// records reach the wire in the order they were made. No socket I/O ever happens under a shared lock:
/// a stalled write holds up neither the reader, nor `close()`, nor any other account.
final class StreamConnection: ClientChannel, @unchecked Sendable {
    private let socket: Socket
    private let tlsConfiguration: TLSConfiguration
    private let parser: XMLStreamParser
    /// Written once by the negotiating thread (handshake), before the writer exists; read by both threads after.
    private let tlsBox = Mutex<TLSEngine?>(nil)
    private var pending: [XMLStreamParser.Event] = []
    private var pendingIndex = 0
    let outbox: Outbox
    let writeTimeout: Duration
    private let writerRunning = Atomic<Bool>(false)
    /// Ends the reader's wait in `pollEvent` early (`wake`).
    private let wakeUp: WakePipe
    /// Set once before the connection is used (see `ClientConfiguration.trace`).
    var trace: (@Sendable (String) -> Void)?

    init(socket: Socket, tls: TLSConfiguration, maxStanzaBytes: Int, writeTimeout: Duration, outboxBytes: Int, wakeUp: WakePipe) {
        self.socket = socket
        self.wakeUp = wakeUp
        self.tlsConfiguration = tls
        self.parser = XMLStreamParser(maxStanzaBytes: maxStanzaBytes)
        self.writeTimeout = writeTimeout
        self.outbox = Outbox(capacityBytes: outboxBytes)
    }

    /// The default `ChannelFactory`: tries the configuration's endpoints (SRV, or its explicit host) in order and
    /// returns the first connection made (after its TLS handshake when the endpoint is direct TLS).
    static func open(configuration: ClientConfiguration, log: @escaping @Sendable (LogLevel, String) -> Void) throws(ClientError) -> any ClientChannel {
        let endpoints = EndpointResolver.endpoints(domain: configuration.jid.domain, explicitHost: configuration.host,
                                                   explicitPort: configuration.port, mode: configuration.tlsMode)
        var lastError: ClientError = .transport(.resolutionFailed(host: configuration.jid.domain, reason: "no address to try"))
        for endpoint in endpoints {
            do {
                let socket = try Socket.connect(host: endpoint.host, port: endpoint.port, timeout: configuration.connectTimeout)
                guard let wakeUp = WakePipe() else {
                    socket.close()
                    throw TransportError.resourceShortage("no descriptors left for the reader's wake-up pipe")
                }
                var tls = TLSConfiguration(serverName: configuration.jid.domain, caFile: configuration.caFile, pinnedSHA256: configuration.pinnedSHA256)
                if endpoint.directTLS { tls.alpn = ["xmpp-client"] }
                let connection = StreamConnection(socket: socket, tls: tls, maxStanzaBytes: configuration.maxStanzaBytes,
                                                  writeTimeout: configuration.keepaliveInterval,
                                                  outboxBytes: configuration.outboundQueueBytes, wakeUp: wakeUp)
                connection.trace = configuration.trace
                if endpoint.directTLS {
                    do { try connection.startDirectTLS(timeout: configuration.connectTimeout) } catch {
                        connection.close()
                        throw error
                    }
                }
                log(.debug, "\(configuration.jid): connected to \(LogText.quote(endpoint.host)):\(endpoint.port)\(endpoint.directTLS ? " (direct TLS)" : "")")
                return connection
            } catch let error as TransportError {
                log(.debug, "\(configuration.jid): \(LogText.quote(error))")
                lastError = .transport(error)
            } catch let error as ClientError {
                // A certificate problem is the server's identity failing: trying another address would not fix it.
                if case .tls(let tls) = error, tls.isCertificateProblem { throw error }
                lastError = error
            } catch {
                lastError = .disconnected(String(describing: error))
            }
        }
        throw lastError
    }

    private var tls: TLSEngine? { tlsBox.withLock { $0 } }

    var isTLSActive: Bool { tls != nil }
    var isTLS13: Bool { tls?.isTLS13 ?? false }
    var tlsProtocol: String? { tls?.negotiatedProtocol }
    var peerCertificateSHA256: String? { tls?.peerCertificateSHA256 }
    var peerDescription: String { socket.peerDescription }

    func channelBindings() -> [ChannelBinding] {
        guard let tls else { return [] }
        var bindings: [ChannelBinding] = []
        if let exporter = tls.exporterChannelBinding() { bindings.append(.tlsExporter(exporter)) }
        if let unique = tls.uniqueChannelBinding() { bindings.append(.tlsUnique(unique)) }
        if let endPoint = tls.serverEndPointChannelBinding() { bindings.append(.tlsServerEndPoint(endPoint)) }
        return bindings
    }

    // MARK: - Writing

    /// During negotiation: writes at once on the calling (negotiating) thread. Afterwards: queues the text
    /// for the writer thread (throws `.outboundQueueFull` when the queue is full).
    func send(_ text: String) throws(ClientError) {
        if let trace { trace("SEND " + XMLTrace.redacted(sent: text)) }
        let bytes = Array(text.utf8)
        if writerRunning.load(ordering: .acquiring) {
            guard outbox.enqueue(bytes) else { throw outbox.isClosed ? .notConnected : .outboundQueueFull }
        } else {
            try write(plain: [bytes])
        }
    }

    /// Encrypts (when TLS is on) and writes, waiting at most `writeTimeout` for the socket to take bytes.
    /// Only the negotiating thread, and later only the writer thread, calls this.
    private func write(plain chunks: [[UInt8]]) throws(ClientError) {
        do {
            if let tls {
                for chunk in chunks where !chunk.isEmpty { try tls.writeApplicationData(chunk) }
                let out = tls.getDataForNetwork()
                if !out.isEmpty { try socket.send(out, timeout: writeTimeout) }
            } else {
                for chunk in chunks where !chunk.isEmpty { try socket.send(chunk, timeout: writeTimeout) }
            }
        } catch let error as TLSError {
            throw .tls(error)
        } catch let error as TransportError {
            throw .transport(error)
        } catch {
            throw .disconnected(String(describing: error))
        }
    }

    /// Starts the writer thread; `failed` hears of a write that failed or stalled.
    func startWriter(name: String, failed: @escaping @Sendable (ClientError) -> Void) {
        writerRunning.store(true, ordering: .releasing)
        startThread(named: name, stackSize: 1 << 19) { [self] in
            self.outbox.drain(failed: failed) { chunks, finish throws(ClientError) in
                // With nothing of our own to send, this writes what TLS has to say (e.g. a key update answer).
                try self.write(plain: chunks)
                // close_notify goes after the last bytes (the logout's `</stream:stream>` is often in this batch):
                // TLS refuses data after it, and a server that never reads the stream's end takes the logout for
                // a dropped connection (an SM session then stays available on the server for its hibernation time).
                if finish {
                    self.tls?.shutdown()
                    try self.write(plain: [])
                }
            }
        }
    }

    // MARK: - Reading

    func nextEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event {
        try nextEvent(timeout: timeout, wake: nil)
    }

    /// `wake`: a wake-up ends the wait as the timeout would.
    private func nextEvent(timeout: Duration, wake: WakePipe?) throws(ClientError) -> XMLStreamParser.Event {
        while pendingIndex >= pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            let chunk: [UInt8]?
            do { chunk = try socket.receive(timeout: timeout, wake: wake) } catch { throw .transport(error) }
            guard let chunk else { throw .disconnected("the server closed the connection") }
            if chunk.isEmpty { throw .timeout("data from the server") }
            let plain = try decrypt(chunk)
            do { pending = try parser.feed(plain) } catch { throw .xml(error) }
        }
        defer { pendingIndex += 1 }
        if let trace { trace("RECV " + XMLTrace.text(of: pending[pendingIndex])) }
        return pending[pendingIndex]
    }

    /// Returns the next event if one arrives within `timeout`, nil on timeout or a `wake` (the reader's loop).
    func pollEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event? {
        do {
            return try nextEvent(timeout: timeout, wake: wakeUp)
        } catch .timeout {
            return nil
        }
    }

    func wake() { wakeUp.wake() }

    private func decrypt(_ chunk: [UInt8]) throws(ClientError) -> [UInt8] {
        guard let tls else { return chunk }
        do {
            tls.consumeDataFromNetwork(chunk)
            let plain = try tls.readApplicationData()
            // TLS 1.3 may need to answer (key update): the writer sends it, in order with everything else.
            if tls.hasDataForNetwork {
                if writerRunning.load(ordering: .acquiring) { outbox.flushTLS() } else { try write(plain: []) }
            }
            return plain
        } catch let error as ClientError {
            throw error
        } catch {
            throw .tls(error as? TLSError ?? .handshakeFailed(String(describing: error)))
        }
    }

    // MARK: - TLS and stream restarts (negotiation only)

    func startTLS() throws(ClientError) {
        try handshake(deadline: .now + .seconds(30))
        restartStream()
    }

    /// Direct TLS (XEP-0368): the handshake comes before any XML.
    func startDirectTLS(timeout: Duration) throws(ClientError) {
        try handshake(deadline: .now + timeout)
    }

    private func handshake(deadline: ContinuousClock.Instant) throws(ClientError) {
        let engine: TLSEngine
        do { engine = try TLSEngine(configuration: tlsConfiguration) } catch { throw .tls(error) }
        while true {
            let state: TLSEngine.HandshakeState
            do {
                state = try engine.doHandshake()
                let out = engine.getDataForNetwork()
                if !out.isEmpty { try socket.send(out, timeout: writeTimeout) }
            } catch let error as TLSError {
                // Send the alert, if any, so the server logs why; ignore failures doing so.
                try? socket.send(engine.getDataForNetwork(), timeout: .seconds(2))
                throw .tls(error)
            } catch let error as TransportError {
                throw .transport(error)
            } catch {
                throw .disconnected(String(describing: error))
            }
            if state == .complete { break }
            let remaining = deadline - .now
            guard remaining > .zero else { throw .timeout("the TLS handshake") }
            let chunk: [UInt8]?
            do { chunk = try socket.receive(timeout: remaining) } catch { throw .transport(error) }
            guard let chunk else { throw .disconnected("the server closed the connection during the TLS handshake") }
            if chunk.isEmpty { throw .timeout("the TLS handshake") }
            engine.consumeDataFromNetwork(chunk)
        }
        tlsBox.withLock { $0 = engine }
    }

    func restartStream() {
        parser.reset()
        pending.removeAll()
        pendingIndex = 0
    }

    // MARK: - Closing

    /// Lets the writer send what is queued and TLS close_notify, then stop; the socket stays open for the
    /// server's answer until `close()`.
    func finishWriting() {
        if writerRunning.load(ordering: .acquiring) { outbox.finish() }
    }

    /// Closes the socket at once (a blocked reader or writer wakes up) and stops the writer.
    func close() {
        outbox.close()
        socket.close()
    }
}

/// What the writer thread sends: stanza bytes in order (bounded by their size, so a peer that stops
/// reading cannot grow memory), plus requests that never wait behind a full queue — an acknowledgement
/// (the newest `h` the reader handed over), an `<r/>`, a TLS flush, a whitespace ping. The writer keeps no
/// count of its own: what it writes is what it was given.
package final class Outbox: @unchecked Sendable {
    struct Work {
        var chunks: [[UInt8]] = []
        var acknowledgement: UInt32?
        var request = false
        var whitespace = false
        var finish = false
    }

    let capacityBytes: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var chunks = Ring<[UInt8]>(minimumCapacity: 64)
    private var bytes = 0
    private var acknowledgementDue: UInt32?
    private var requestDue = false
    private var flushDue = false
    private var whitespaceDue = false
    private var finishing = false
    private var closed = false

    package init(capacityBytes: Int) {
        self.capacityBytes = capacityBytes
    }

    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed || finishing
    }

    /// Queued bytes not yet handed to the writer.
    var queuedBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return bytes
    }

    /// False when full (a single chunk larger than the whole capacity is accepted into an empty queue) or closed.
    package func enqueue(_ chunk: [UInt8]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, !finishing, bytes == 0 || bytes + chunk.count <= capacityBytes else { return false }
        chunks.append(chunk)
        bytes += chunk.count
        condition.signal()
        return true
    }

    /// Sends `<a h='h'/>` first in the next batch (a newer `h` given before then replaces it).
    func acknowledge(_ h: UInt32) { set { $0.acknowledgementDue = h } }
    func request() { set { $0.requestDue = true } }
    func flushTLS() { set { $0.flushDue = true } }
    func whitespace() { set { $0.whitespaceDue = true } }
    package func finish() { set { $0.finishing = true } }

    package func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    private func set(_ change: (Outbox) -> Void) {
        condition.lock()
        change(self)
        condition.signal()
        condition.unlock()
    }

    /// The writer loop, on the channel's writer thread: takes what is queued, in order, and hands it to `write` with
    /// the acknowledgement due first and an `<r/>` and whitespace ping after; `finish` is true for the last batch
    /// after `finish()`. A failed write closes the queue and is reported to `failed`.
    package func drain(failed: @Sendable (ClientError) -> Void, write: (_ chunks: [[UInt8]], _ finish: Bool) throws(ClientError) -> Void) {
        while let work = next() {
            var chunks: [[UInt8]] = []
            if let h = work.acknowledgement { chunks.append(Array(XMLSerializer.serialize(StreamManagement.answer(handled: h)).utf8)) }
            chunks.append(contentsOf: work.chunks)
            if work.request { chunks.append(Array(XMLSerializer.serialize(StreamManagement.request()).utf8)) }
            if work.whitespace { chunks.append([0x20]) }
            do throws(ClientError) {
                try write(chunks, work.finish)
            } catch {
                close()
                failed(error)
                return
            }
            if work.finish { return }
        }
    }

    /// Blocks until there is something to write; nil once closed.
    func next() -> Work? {
        condition.lock()
        defer { condition.unlock() }
        while !closed && chunks.isEmpty && acknowledgementDue == nil && !requestDue && !flushDue && !whitespaceDue && !finishing {
            condition.wait()
        }
        if closed { return nil }
        var work = Work(acknowledgement: acknowledgementDue, request: requestDue, whitespace: whitespaceDue)
        // Batched: one TLS write and one system call for a burst of stanzas, up to a sane size.
        var batch = 0
        while let first = chunks.first, work.chunks.isEmpty || batch + first.count <= 256 * 1024 {
            _ = chunks.popFirst()
            batch += first.count
            work.chunks.append(first)
        }
        bytes -= batch
        work.finish = finishing && chunks.isEmpty
        acknowledgementDue = nil
        requestDue = false
        flushDue = false
        whitespaceDue = false
        return work
    }
}
