package import RoostCore

/// What the negotiator needs from a connection: ordered XML events in, text out, and a TLS upgrade.
///
/// The negotiator runs against this protocol so it can be tested with scripted XML in memory.
package protocol StreamChannel: AnyObject {
    func send(_ text: String) throws(ClientError)
    /// The next parsed event; throws `.timeout` when nothing complete arrives within `timeout`.
    func nextEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event
    /// Runs the TLS handshake on the open connection (after `<proceed/>`) and resets the parser.
    func startTLS() throws(ClientError)
    /// Discards parser state for a stream restart (after SASL success).
    func restartStream()
    var isTLSActive: Bool { get }
    var isTLS13: Bool { get }
    func channelBindings() -> [ChannelBinding]
}

/// What `XMPPClient` needs from a negotiated connection, beyond negotiation: a write queue (`Outbox`) drained by a
/// writer thread of the channel's own, events read with a deadline, and closing. `StreamConnection` is the real one;
/// the client takes its channels from a `ChannelFactory`, so it runs as well against a scripted channel in memory.
package protocol ClientChannel: StreamChannel, Sendable {
    /// The write queue once the writer runs (`startWriter`).
    var outbox: Outbox { get }
    /// Starts the writer thread: it drains `outbox` in order (`Outbox.drain`).
    func startWriter(name: String, failed: @escaping @Sendable (ClientError) -> Void)
    /// The next event if one arrives within `timeout`, nil on timeout or after a `wake()` (the reader's loop).
    func pollEvent(timeout: Duration) throws(ClientError) -> XMLStreamParser.Event?
    /// Ends the reader's current (or next) wait in `pollEvent` early: someone posted it a message.
    func wake()
    /// Lets the writer send what is queued, then stop; reading goes on until `close()`.
    func finishWriting()
    /// Closes at once: a blocked reader or writer wakes up.
    func close()
    var peerCertificateSHA256: String? { get }
    var tlsProtocol: String? { get }
}

/// Opens the connection a login negotiates on, for a configuration (the reader thread calls it once per connect).
package typealias ChannelFactory = @Sendable (ClientConfiguration, _ log: @escaping @Sendable (LogLevel, String) -> Void) throws(ClientError) -> any ClientChannel
