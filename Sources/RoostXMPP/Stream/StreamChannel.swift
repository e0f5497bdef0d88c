/// What the negotiator needs from a connection: ordered XML events in, text out, and a TLS upgrade.
///
/// The negotiator runs against this protocol so it can be tested with scripted XML in memory.
protocol StreamChannel: AnyObject {
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
