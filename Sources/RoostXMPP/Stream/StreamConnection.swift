import Foundation

/// A socket with optional TLS and the XML parser on top: the concrete `StreamChannel`.
///
/// One reader thread reads (`nextEvent`); any thread may write (`send`). TLS state is shared by both
/// directions, so every touch of the engine is under `tlsLock`; the blocking socket read is not.
final class StreamConnection: StreamChannel, @unchecked Sendable {
    private let socket: Socket
    private let tlsConfiguration: TLSConfiguration
    private var tls: TLSEngine?
    private let tlsLock = NSLock()
    private let parser: XMLStreamParser
    private var pending: [XMLStreamParser.Event] = []
    private var pendingIndex = 0
    /// Bytes read from the wire, for the keepalive logic of the reader.
    private(set) var lastReceive = ContinuousClock.now

    init(socket: Socket, tls: TLSConfiguration, maxStanzaBytes: Int) {
        self.socket = socket
        self.tlsConfiguration = tls
        self.parser = XMLStreamParser(maxStanzaBytes: maxStanzaBytes)
    }

    var isTLSActive: Bool {
        tlsLock.lock()
        defer { tlsLock.unlock() }
        return tls != nil
    }

    var isTLS13: Bool {
        tlsLock.lock()
        defer { tlsLock.unlock() }
        return tls?.isTLS13 ?? false
    }

    var peerCertificateSHA256: String? {
        tlsLock.lock()
        defer { tlsLock.unlock() }
        return tls?.peerCertificateSHA256
    }

    func channelBindings() -> [ChannelBinding] {
        tlsLock.lock()
        defer { tlsLock.unlock() }
        guard let tls else { return [] }
        var bindings: [ChannelBinding] = []
        if let exporter = tls.exporterChannelBinding() { bindings.append(.tlsExporter(exporter)) }
        if let endPoint = tls.serverEndPointChannelBinding() { bindings.append(.tlsServerEndPoint(endPoint)) }
        return bindings
    }

    func send(_ text: String) throws(ClientError) {
        try send(bytes: Array(text.utf8))
    }

    func send(bytes: [UInt8]) throws(ClientError) {
        tlsLock.lock()
        defer { tlsLock.unlock() }
        do {
            if let tls {
                try tls.writeApplicationData(bytes)
                try socket.send(tls.getDataForNetwork())
            } else {
                try socket.send(bytes)
            }
        } catch let error as TLSError {
            throw .tls(error)
        } catch let error as TransportError {
            throw .transport(error)
        } catch {
            throw .disconnected(String(describing: error))
        }
    }

    func nextEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event {
        while pendingIndex >= pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            let chunk: [UInt8]?
            do { chunk = try socket.receive(timeout: timeout) } catch { throw .transport(error) }
            guard let chunk else { throw .disconnected("the server closed the connection") }
            if chunk.isEmpty { throw .timeout("data from the server") }
            lastReceive = .now
            let plain = try decrypt(chunk)
            do { pending = try parser.feed(plain) } catch { throw .xml(error) }
        }
        defer { pendingIndex += 1 }
        return pending[pendingIndex]
    }

    /// Returns the next event if one arrives within `timeout`, nil on timeout (for the reader's keepalive loop).
    func pollEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event? {
        do {
            return try nextEvent(timeout: timeout)
        } catch .timeout {
            return nil
        }
    }

    private func decrypt(_ chunk: [UInt8]) throws(ClientError) -> [UInt8] {
        tlsLock.lock()
        defer { tlsLock.unlock() }
        guard let tls else { return chunk }
        do {
            tls.consumeDataFromNetwork(chunk)
            let plain = try tls.readApplicationData()
            // TLS 1.3 may need to answer (key update); those bytes must go out in order with writes.
            let reply = tls.getDataForNetwork()
            if !reply.isEmpty { try socket.send(reply) }
            return plain
        } catch let error as TLSError {
            throw .tls(error)
        } catch let error as TransportError {
            throw .transport(error)
        } catch {
            throw .disconnected(String(describing: error))
        }
    }

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
                if !out.isEmpty { try socket.send(out) }
            } catch let error as TLSError {
                // Send the alert, if any, so the server logs why; ignore failures doing so.
                try? socket.send(engine.getDataForNetwork())
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
        tlsLock.lock()
        tls = engine
        tlsLock.unlock()
    }

    func restartStream() {
        parser.reset()
        pending.removeAll()
        pendingIndex = 0
    }

    /// Sends close_notify where possible and closes the socket; wakes a blocked reader.
    func close() {
        tlsLock.lock()
        if let tls {
            tls.shutdown()
            try? socket.send(tls.getDataForNetwork())
        }
        tlsLock.unlock()
        socket.close()
    }
}
